"""What the probe bundle's engine probe asks about a vLLM (``EnginePlugin.probe_data``): the anchors of the
base release, the ops the plugin may rebind, the variant's vendor functions and markers, the MoE config
file name the ``moe`` block names. muh.codegen.probe writes the dict beside the probe's code."""

from __future__ import annotations

from muh.engines.vllm.derive import rules, tuning
from muh.engines.vllm.derive.edits import sites_for

DEFAULT_VERSION = "0.6.3.post1"
"""The release a spec without a deploy block is probed against."""


def _variant_probe(variant):
    """(vendor functions by module, markers split into site-packages-relative and absolute ones) the engine
    probe asks about: the vLLM engine's markers, and the deploy's variant's vendor ops and probe targets
    (muh/engines/vllm/variants/*.json). Without a deploy block, only the engine's markers."""
    functions = {}
    markers = list(tuning.PROBE_MARKERS)
    if variant is not None:
        if variant.vendor_module:
            names = {op.vendor for op in variant.vendor_ops.values()} | set(variant.probe.functions)
            functions[variant.vendor_module] = sorted(names)
        markers += [m.model_dump(exclude_none=True) for m in variant.probe.markers]
    return (
        functions,
        [m for m in markers if not m["path"].startswith("/")],
        [m for m in markers if m["path"].startswith("/")],
    )


def probe_data(spec, plan, variant) -> dict:
    """The engine part of the probe's data for ``spec`` (``plan``: its resolved deploy plan, and ``variant`` the
    plan's variant; None without one)."""
    deploy = next(iter(spec.deploys.values()), None)
    version = deploy.engine.version if deploy else DEFAULT_VERSION
    muh_moe, tp, model = None, 1, "/model"
    if deploy is not None:
        model = deploy.model
        tp = int(deploy.serve.get("tensor_parallel_size", 1))  # the block as written when it did not resolve
        if plan is not None:
            tp = plan.effective.tensor_parallel_size if plan.effective else tp
            version = plan.base_version or version
            muh_moe = plan.moe_file  # named by the moe block, shipped or not (dead on EngineX: corex_moe)
    sites = sites_for(version) or ()
    functions, markers, absolute = _variant_probe(variant)
    return {
        "engine": "vllm",
        "version": version,
        "model": model,
        "tensor_parallel_size": tp,
        "anchors": [{"id": s.id, "file": s.file, "line": s.line, "anchor": s.old} for s in sites],
        "rebinds": {k: list(v) for k, v in sorted(tuning.REBIND_TARGETS.items())},
        "vendor_functions": functions,
        "markers": markers,
        "absolute_markers": absolute,
        "moe_file_pattern": rules.MOE_FILE_PATTERN,
        "muh_moe_file": muh_moe,
    }
