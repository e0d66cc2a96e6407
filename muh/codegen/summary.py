"""`policies.json`: every resolved policy with its provenance (read by deploy plans and tune)."""

from __future__ import annotations

import json

from muh.codegen.base import BuildContext, GeneratedFile


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    data = {
        "@generated": ctx.header_text(),
        "algorithms": {
            key: {
                "family": alg.family,
                "hardware": alg.hardware.name,
                "policies": {
                    pkey: {
                        "values": {
                            d: r.model_dump(mode="json", exclude_none=True) for d, r in sorted(p.values.items())
                        },
                        **(
                            {
                                "subs": {
                                    s: {d: r.model_dump(mode="json", exclude_none=True) for d, r in sorted(v.items())}
                                    for s, v in sorted(p.subs.items())
                                }
                            }
                            if p.subs
                            else {}
                        ),
                        **({"smem_bytes": p.smem_bytes} if p.smem_bytes is not None else {}),
                        **(
                            {
                                "buckets": [
                                    {
                                        "when": b.label,
                                        **({"size": b.size} if b.size != "elements" else {}),
                                        "lo": b.lo,
                                        **({"hi": b.hi} if b.hi is not None else {}),
                                        "values": {
                                            d: r.model_dump(mode="json", exclude_none=True)
                                            for d, r in sorted(b.values.items())
                                        },
                                    }
                                    for b in p.buckets
                                ]
                            }
                            if p.buckets
                            else {}
                        ),
                    }
                    for pkey, p in alg.policies.items()
                },
            }
            for key, alg in sorted(ctx.derived.algorithms.items())
        },
    }
    return [GeneratedFile("policies.json", json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")]
