"""Emitter `vllm`: the general plugin, MoE config files, anchored edits (as diffs) and their checker.

Output (relative to generated/<spec>/)::

    vllm/plugin/muh_vllm_plugin/{__init__,__main__,moe}.py, vllm/plugin/muh_vllm_plugin-<v>.dist-info/
    vllm/plugin/muh_vllm_plugin/compat.py, compat.json   muh/engines/vllm/plugin/compat.py + the spec's api data
    vllm/moe_configs/E=…,N=…,device_name=….json
    vllm/patches/0001-<edit>.patch …          applied with `patch -p1 --forward` in site-packages
    vllm/check_anchors.py                     each anchor exactly once, before patching
    vllm/deploy.json                          every tuned value with provenance (deploy's semantic diff)
"""

from __future__ import annotations

import json
from pathlib import Path

import muh
from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.templates import render
from muh.engines.vllm.derive.edits import EditSite, unified_diff
from muh.engines.vllm.derive.plan import TUNED_FILE, VllmPlan

PKG = "muh.engines.vllm.codegen"
SHIPPED = Path(__file__).resolve().parents[1] / "plugin"  # modules shipped into the image as they are


def as_is(ctx, name: str) -> str:
    """muh/engines/vllm/plugin/<name> as it is, after the build's header (code is code: importable, linted)."""
    text = (SHIPPED / name).read_text(encoding="utf-8")
    return f"{ctx.header('#')}\n# copied from muh/engines/vllm/plugin/{name}, byte for byte\n{text}"


def plans(ctx: BuildContext) -> list[VllmPlan]:
    """The build's deploy plan, as derive resolved it (``Derived.deploy``), when it is vLLM's (stock or a fork)."""
    return [ctx.derived.deploy] if isinstance(ctx.derived.deploy, VllmPlan) else []


def dist_info() -> str:
    """The plugin's metadata folder, copied next to the package in site-packages."""
    return f"muh_vllm_plugin-{muh.__version__}.dist-info"


def patch_name(i: int, edit_id: str) -> str:
    return f"vllm/patches/{i:04d}-{edit_id}.patch"


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    files: list[GeneratedFile] = []
    for plan in plans(ctx):
        files += engine_files(ctx, plan)
    return files


def engine_files(ctx: BuildContext, plan: VllmPlan) -> list[GeneratedFile]:
    """The vLLM engine's own files: plugin, anchored edits, MoE configs, deploy.json."""
    files = _plugin(ctx, plan) + _patches(ctx, plan)
    if plan.moe is not None:
        # numeric key order (vLLM reads the keys as ints; the order is for people)
        tiles = {str(m): dict(sorted(t.model_dump().items())) for m, t in sorted(plan.moe.tiles.items())}
        files.append(GeneratedFile(f"vllm/moe_configs/{plan.moe.file_name}", json.dumps(tiles, indent=4) + "\n"))
    files.append(GeneratedFile(TUNED_FILE, _deploy_json(ctx, plan)))
    files += _selftest_cases(ctx, plan)
    return files


def _selftest_cases(ctx: BuildContext, plan: VllmPlan) -> list[GeneratedFile]:
    """``muh_kernels/selftest_cases.json``: the start self-test's cases (muh/runtime/selftest.py reads them
    beside itself), in the ops package of the plan's hardware."""
    from muh.codegen import ops_package

    prefix = ops_package.prefix_for(ctx, plan.hardware)
    if plan.selftest is None or prefix is None:
        return []
    data = {
        "@generated": ctx.header_text(),
        "out": plan.selftest.out,
        "budget_s": plan.selftest.budget_s,
        "cases": [c.model_dump(mode="json") for c in plan.selftest.cases],
    }
    return [GeneratedFile(f"{prefix}{ops_package.NAME}/selftest_cases.json", json.dumps(data, indent=1) + "\n")]


def _plugin(ctx: BuildContext, plan: VllmPlan) -> list[GeneratedFile]:
    common = dict(header=ctx.header_text(), spec_label=ctx.spec_label, version_guard=plan.version_guard)
    base = "vllm/plugin"
    files = [
        GeneratedFile(
            f"{base}/muh_vllm_plugin/__init__.py",
            render(
                PKG,
                "plugin_init.py.j2",
                rebinds=plan.rebinds,
                provides=plan.provides,
                api=bool(plan.api_features or plan.max_tokens_cap),
                selftest_out=plan.selftest.out if plan.selftest else None,
                registry_subprocess=plan.registry_subprocess,
                **common,
            ),
        ),
        GeneratedFile(f"{base}/muh_vllm_plugin/__main__.py", render(PKG, "plugin_main.py.j2", **common)),
    ]
    # An installed distribution without pip: importlib.metadata finds the entry point through these two
    # files, so the image needs neither `wheel` nor network (pip's build of setup.py needs `wheel`).
    dist = f"{base}/{dist_info()}"
    files.append(
        GeneratedFile(
            f"{dist}/METADATA",
            "Metadata-Version: 2.1\nName: muh-vllm-plugin\n"
            f"Version: {muh.__version__}\nSummary: muh tuning for vLLM {plan.version_guard}\n",
        )
    )
    files.append(
        GeneratedFile(
            f"{dist}/entry_points.txt",
            f"# {ctx.header_text()}\n[vllm.general_plugins]\nmuh = muh_vllm_plugin:register\n",
        )
    )
    if plan.chat_template:  # the fixed template and/or the reasoning info, written at start
        from muh.engines.vllm.derive.run import CHAT_TEMPLATE_SCRIPT

        files.append(GeneratedFile(CHAT_TEMPLATE_SCRIPT, as_is(ctx, "chat_template.py")))
    for name in plan.parser_providers:
        files.append(GeneratedFile(f"vllm/parsers/muh_{name}.py", as_is(ctx, f"parser_{name}.py")))
    if plan.api_features or plan.max_tokens_cap:
        from muh.engines.vllm.derive.plan import IMAGE_ROOT
        from muh.engines.vllm.derive.run import API_BEHAVIOUR, REASONING_INFO_OUT

        # code is code: muh/engines/vllm/plugin/compat.py as it is, its spec's data beside it
        files.append(GeneratedFile(f"{base}/muh_vllm_plugin/compat.py", as_is(ctx, "compat.py")))
        data = {
            "@generated": ctx.header_text(),
            "features": list(plan.api_features),
            "max_n": plan.max_n,
            "max_tokens_cap": plan.max_tokens_cap,
            "reasoning_info": [IMAGE_ROOT, REASONING_INFO_OUT],
            "behaviour": {f: API_BEHAVIOUR[f] for f in plan.api_features},
        }
        files.append(
            GeneratedFile(f"{base}/muh_vllm_plugin/compat.json", json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        )
    if plan.moe is not None:
        tiles = [(m, t.model_dump()) for m, t in sorted(plan.moe.tiles.items())]
        files.append(
            GeneratedFile(
                f"{base}/muh_vllm_plugin/moe.py",
                render(
                    PKG,
                    "plugin_moe.py.j2",
                    tiles=tiles,
                    rule=plan.moe.rule.rule,
                    inputs=", ".join(f"{k}={v}" for k, v in sorted(plan.moe.rule.inputs.items())),
                    **common,
                ),
            )
        )
    return files


def _patches(ctx: BuildContext, plan: VllmPlan) -> list[GeneratedFile]:
    files = []
    for i, e in enumerate(plan.edits, 1):
        site = EditSite(id=e.id, file=e.file, line=e.line, old=e.anchor, new=e.new, knobs=tuple(e.values), doc="")
        text = ctx.header("#") + "\n" + unified_diff(site, e.new)
        files.append(GeneratedFile(patch_name(i, e.id), text))
    if plan.edits:
        files.append(
            GeneratedFile(
                "vllm/check_anchors.py", render(PKG, "check_anchors.py.j2", header=ctx.header_text(), edits=plan.edits)
            )
        )
    return files


def _deploy_json(ctx: BuildContext, plan: VllmPlan) -> str:
    data = {
        "@generated": ctx.header_text(),
        "deploy": plan.deploy,
        "engine": plan.variant,
        "points": {p.id: {"status": p.status, "reason": p.reason, "reaches": p.reaches} for p in plan.points},
        "command": list(plan.command),
        "env": {k: v for k, v in plan.env},
        "tuned": {
            k: r.model_dump(mode="json", exclude_none=True, exclude_defaults=True) | {"value": r.value}
            for k, r in sorted(plan.tuned.items())
        },
    }
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
