"""`muh probe`: measure the target's hardware and engine facts (bundle in muh/codegen/probe) and
compare them with the spec (ingest), writing agreement back as `@measured(…)` provenance."""
