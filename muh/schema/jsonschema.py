"""The JSON Schema of a spec, for editors (`muh schema`)."""
from __future__ import annotations

from muh.schema.catalog import DIMS, DTYPES, FAMILIES, OPS
from muh.schema.models import Spec


def spec_json_schema() -> dict:
    schema = Spec.model_json_schema(mode="validation")
    schema["title"] = "muh spec"
    schema["x-muh-families"] = {name: {"doc": f.doc, "dims": list(f.dims), "subs": list(f.subs), "scaling": f.scaling,
                                       "stages_tile": f.stages_tile} for name, f in sorted(FAMILIES.items())}
    schema["x-muh-dimensions"] = {name: {"kind": d.kind, "doc": d.doc, "choices": list(d.choices)} for name, d in sorted(DIMS.items())}
    schema["x-muh-types"] = dict(DTYPES)
    schema["x-muh-ops"] = list(OPS)
    return schema
