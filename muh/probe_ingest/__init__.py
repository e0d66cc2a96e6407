"""`muh probe`'s command side: write the bundle (its emitter: muh/codegen/probe) and ingest what it measured —
compare the facts with the spec, writing agreement back as `@measured(…)` provenance."""
