"""The JSON Schema of a spec, for editors (`muh schema`).

It describes the *structure* a spec validates to after parsing — blocks, keys, their types,
allowed values and documentation — not the .muh syntax itself (that is muh/grammar/muh.lark). An
editor or language server can use it for completion and hover documentation of keys: a block
`hardware x { … }` is `hardware.x`, `algorithm reduce on x { policy default { … } }` is
`algorithms["reduce@x"].policies.default`, `deploy d on x { … }` is `deploys.d`. Values taken from
a block's header (its name, the `on` hardware, the family) and what muh fills in itself (the file,
its hash, `@measured` evidence) are left out: they are never written as keys.
"""

from __future__ import annotations

from muh.schema.catalog import DIMS, DTYPES, FAMILIES, OPS
from muh.schema.models import Spec

_INTERNAL_TOP = ("file", "sha256", "measured", "version")  # `version` is the `muh 1` line, not a key
_FROM_HEADER = ("name", "on", "family")


def spec_json_schema() -> dict:
    from muh.schema.base import with_docs

    schema = with_docs(Spec).model_json_schema(mode="validation")
    for key in _INTERNAL_TOP:
        schema.get("properties", {}).pop(key, None)
    for name, sub in schema.get("$defs", {}).items():
        if name in ("Hardware", "Algorithm", "Deploy"):
            for key in _FROM_HEADER:
                sub.get("properties", {}).pop(key, None)
                if key in sub.get("required", []):
                    sub["required"].remove(key)
    schema.get("$defs", {}).pop("Measured", None)
    schema["title"] = "muh spec"
    schema["description"] = __doc__.split("\n\n")[1].replace("\n", " ")
    schema["x-muh-families"] = {
        name: {
            "doc": f.doc,
            "dims": list(f.dims),
            "subs": list(f.subs),
            "scaling": f.scaling,
            "stages_tile": f.stages_tile,
        }
        for name, f in sorted(FAMILIES.items())
    }
    schema["x-muh-dimensions"] = {
        name: {"kind": d.kind, "doc": d.doc, "choices": list(d.choices)} for name, d in sorted(DIMS.items())
    }
    schema["x-muh-types"] = dict(DTYPES)
    schema["x-muh-ops"] = list(OPS)
    return schema
