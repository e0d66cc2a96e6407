"""`generated`: the committed output under generated/<spec>/ equals a fresh build of the spec."""

from __future__ import annotations

from pathlib import Path

from muh.check.base import CheckResult, register
from muh.codegen.base import BuildContext


@register("generated")
def check_generated(ctx: BuildContext) -> CheckResult:
    from muh.pipeline import Loaded, render

    folder = Path(ctx.options.get("generated_root", "generated")) / ctx.spec.name
    if not folder.is_dir():
        return CheckResult("generated", "skip", f"{folder} does not exist (nothing committed for this spec)")
    files = render(Loaded(ctx.spec, ctx.derived, ""), {k: v for k, v in ctx.options.items() if k != "generated_root"})
    want = {f.path: f.content for f in files}
    have = {str(p.relative_to(folder)): p for p in folder.rglob("*") if p.is_file()}
    stale = sorted(p for p in want if p not in have or have[p].read_text(encoding="utf-8") != want[p])
    extra = sorted(p for p in have if p not in want)
    if stale or extra:
        lines = [f"stale: {p}" for p in stale] + [f"not produced any more: {p}" for p in extra]
        return CheckResult(
            "generated", "fail", f"{len(stale) + len(extra)} file(s) differ; run `muh build {ctx.spec.file}`", lines
        )
    return CheckResult("generated", "pass", f"{len(want)} files up to date")
