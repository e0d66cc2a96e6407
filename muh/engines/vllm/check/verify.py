"""Verify generated deployment files: edits against the pinned wheel, Dockerfile and run-file lint/shape.

Each function returns a list of problems (empty = fine) so that both the `deploy` check and
the tests can use them.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

# yamllint's defaults, except line length: the mandatory @generated header is longer than 80
# columns, and argv items (model paths, JSON-ish flag values) are as long as they are.
from muh.check.lint import YAMLLINT_CONFIG, hadolint, shell_syntax, shellcheck, yamllint  # noqa: F401 - its users read them here
from muh.engines.vllm.derive import edits as E
from muh.engines.vllm.derive.plan import VllmPlan


def edits_against_wheel(plan: VllmPlan, wheel: Path, patches: dict[str, str]) -> list[str]:
    """Each edit: anchor once in the pinned file, the shipped diff applies (`patch --dry-run` when the
    tool exists), the result compiles, and the values read back from it are the plan's."""
    from muh.engines.vllm.wheel import extract

    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="muh-wheel-") as tmp:
        site = Path(tmp)
        extract(wheel, sorted({e.file for e in plan.edits}), site)
        for e in plan.edits:
            text = (site / e.file).read_text(encoding="utf-8")
            n = E.count(text, e.anchor)
            if n != 1:
                problems.append(f"{e.id}: anchor occurs {n} times in {e.file} (expected 1)")
                continue
            diff = patches.get(e.id)
            if diff is not None and shutil.which("patch"):
                proc = subprocess.run(
                    ["patch", "-d", str(site), "-p1", "--forward", "--dry-run"],
                    input=diff,
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                if proc.returncode != 0:
                    problems.append(f"{e.id}: patch --dry-run failed: {proc.stdout.strip()} {proc.stderr.strip()}")
                    continue
            new_text = E.apply(text, _site(e), e.new)
            try:
                compile(new_text, e.file, "exec")
            except SyntaxError as err:
                problems.append(f"{e.id}: patched {e.file} does not compile: {err}")
                continue
            got = E.READERS[e.id](new_text)
            want = {k.split(".")[-1]: r.value for k, r in e.values.items()}
            if got != want:
                problems.append(f"{e.id}: read back {got}, spec says {want}")
            (site / e.file).write_text(new_text, encoding="utf-8")
    return problems


def _site(e) -> E.EditSite:
    return E.EditSite(id=e.id, file=e.file, line=e.line, old=e.anchor, new=e.new, knobs=tuple(e.values), doc="")
