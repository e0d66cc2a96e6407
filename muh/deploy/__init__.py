"""`muh deploy SPEC --repo PATH`: build into a staging folder, check, plan, and (with --apply) commit.

Exit codes like ``terraform plan -detailed-exitcode``: 0 nothing to change, 2 changes planned, 1 an
error or a refusal (nothing written). ``--apply`` exits 0 after committing (or when up to date).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import muh
from muh import engines, platforms
from muh.codegen.base import BuildContext, GeneratedFile
from muh.deploy import git as g
from muh.deploy import write
from muh.deploy.plan import ROOT_FILES, Changes, compute, escapes, make_state, safe_relpath
from muh.diagnostics import Diagnostic, MuhError, Severity, source_label

EXIT_OK, EXIT_ERROR, EXIT_CHANGES = 0, 1, 2


@dataclass
class DeployResult:
    code: int
    lines: list[str] = field(default_factory=list)  # the plan / what was done, for stdout
    diagnostics: list[Diagnostic] = field(default_factory=list)  # for stderr
    commit: str | None = None
    plan: Changes | None = None


def _refuse(
    msg: str, hint: str | None = None, plan: Changes | None = None, lines: list[str] | None = None
) -> DeployResult:
    return DeployResult(EXIT_ERROR, lines or [], [Diagnostic("E-DEPLOY-REFUSED", msg, None, hint)], plan=plan)


def run(
    spec: str | Path, repo: str | Path, *, apply: bool = False, force: bool = False, checks: bool = True
) -> DeployResult:
    """Plan (and with ``apply`` write + commit) the deployment of ``spec`` into the git repository ``repo``;
    the spec's warnings follow its errors in the result's diagnostics (`muh build` prints them too)."""
    if not str(repo).strip():
        return _refuse(
            "--repo is empty: name the git repository to deploy into",
            hint="e.g. --repo ../competition-repo (write --repo . for the current folder)",
        )
    warnings: list[Diagnostic] = []
    result = _run(spec, repo, apply, force, checks, warnings)
    result.diagnostics = result.diagnostics + [w for w in warnings if w not in result.diagnostics]
    return result


class _DeferredInterrupt:
    """Ctrl-C while the files are swapped in and committed waits until both are done (or undone): an
    interrupt must not leave new files in place without their commit."""

    def __enter__(self):
        import signal
        import threading

        self.hit = False
        self.old = None
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGINT, self._note)
        return self

    def _note(self, *_):
        self.hit = True

    def __exit__(self, *exc):
        import signal

        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)
        return False


def _run(spec, repo, apply: bool, force: bool, checks: bool, warnings: list[Diagnostic]) -> DeployResult:
    from muh.pipeline import load_file, render, write_atomic

    repo_p = Path(repo)
    if not repo_p.is_dir():
        return _refuse(f"{repo} is not a folder")
    top = g.toplevel(repo_p)
    if top is None:
        return _refuse(
            f"{repo} is not a git repository", hint="run `git init` there first, or pass the repository's root"
        )
    repo_p = repo_p.resolve()
    if top != repo_p:
        return _refuse(
            f"{repo} is inside the git repository {top}, not its root",
            hint="muh writes Dockerfile and computility-run.yaml at the repository root: pass the root",
        )
    try:
        loaded = load_file(spec)
    except MuhError as err:
        return DeployResult(EXIT_ERROR, [], err.diagnostics)
    deploys = list(loaded.spec.deploys.values())
    if not deploys:
        return _refuse(f"{spec} has no deploy block", hint="add `deploy <name> on <hardware> { … }`")
    folder = deploys[0].folder
    try:
        files = render(loaded, warnings=warnings)
    except MuhError as err:
        return DeployResult(EXIT_ERROR, [], err.diagnostics)
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="muh-deploy-") as staging:
        write_atomic(files, Path(staging) / "build")  # the staging build: exactly what the repository gets
        if checks:
            failed = _run_checks(loaded, lines, force)
            if failed:
                return _refuse(
                    f"checks failed: {', '.join(failed)}", hint="run `muh check SPEC -v` for the cases", lines=lines
                )
        else:
            lines.append("checks: skipped (--skip-checks)")
    ctx = BuildContext(loaded.spec, loaded.derived)
    engine = engines.get(loaded.derived.deploy.engine) if loaded.derived.deploy is not None else None
    platform = platforms.get(loaded.derived.deploy.platform) if loaded.derived.deploy is not None else None
    plan = compute(
        repo_p,
        files,
        folder,
        tuned=engine.tuned_file if engine else None,
        root_files=platform.facts.root_files if platform else ROOT_FILES,
    )
    for nested, what in g.nested_repositories(repo_p, sorted(plan.files)):
        plan.clashes.insert(
            0,
            f"{nested}/ is {what} inside {repo_p.name}: git would not commit muh's files there "
            "(set `folder = …` in the deploy block to another folder, or remove it from the repository)",
        )
    state = GeneratedFile(
        plan.state_path, make_state(plan.files, ctx.header_text(), ctx.spec_label, loaded.spec.sha256, muh.__version__)
    )
    plan.files[plan.state_path] = state
    _classify_state(repo_p, plan, state)
    lines += render_plan(plan, source_label(loaded.spec.file), loaded.spec.sha256)
    unsafe = [p for p in plan.files if not safe_relpath(p) or escapes(repo_p, p)]
    unsafe += [p for p in plan.removed if not safe_relpath(p) or escapes(repo_p, p)]
    if unsafe:
        return _refuse(
            f"refusing to write {unsafe[0]}: it would leave the repository or follow a link", plan=plan, lines=lines
        )
    if plan.clashes:
        return _refuse(
            f"cannot deploy: {plan.clashes[0]}"
            + (f" (and {len(plan.clashes) - 1} more)" if len(plan.clashes) > 1 else ""),
            hint="nothing was written",
            plan=plan,
            lines=lines,
        )
    hidden = g.ignored(repo_p, sorted(set(plan.added + plan.changed)))
    if hidden:
        rules = sorted({rule for _, rule in hidden})
        folders = sorted({p.split("/")[0] + ("/" if "/" in p else "") for p, _ in hidden})
        return _refuse(
            f"{len(hidden)} of the files muh deploys ({', '.join(folders)}) are ignored by the repository "
            f"({'; '.join(rules[:2])}): git would not commit them",
            hint="remove that rule from .gitignore (muh commits what it deploys), or set `folder = …` in the "
            "deploy block",
            plan=plan,
            lines=lines,
        )
    problems = _problems(repo_p, plan)
    if problems and not force:
        return _refuse(problems[0][0], hint=problems[0][1] + "; or pass --force", plan=plan, lines=lines)
    head = g.detached(repo_p) if plan.has_changes else None
    if head is not None:
        lines.append(
            f"  ! HEAD is detached (at {head}): the commit {'muh makes' if apply else '--apply makes'} "
            "will be on no branch"
        )
        warnings.append(
            Diagnostic(
                "W-DEPLOY-DETACHED",
                f"{repo} has a detached HEAD (at {head}): the deploy commit "
                "will belong to no branch and is easily lost",
                None,
                hint="switch to a branch first "
                f"(`git -C {repo} switch BRANCH`, or `git -C {repo} switch -c BRANCH` for a new one)",
                severity=Severity.warning,
            )
        )
    if not apply:
        return DeployResult(EXIT_CHANGES if plan.has_changes else EXIT_OK, lines, plan=plan)
    if not plan.has_changes:
        lines.append("up to date: nothing to commit")
        return DeployResult(EXIT_OK, lines, plan=plan)
    with _DeferredInterrupt() as interrupt:
        result = _swap_and_commit(repo_p, plan, ctx, loaded, lines)
    if interrupt.hit:
        result.lines.append(
            "interrupted: the deploy was finished first ("
            + (f"committed {result.commit[:12]})" if result.commit else "nothing was changed)")
        )
    return result


def _swap_and_commit(repo_p: Path, plan: Changes, ctx, loaded, lines: list[str]) -> DeployResult:
    try:
        tx = write.apply(
            repo_p,
            {rel: (plan.files[rel].content, plan.files[rel].executable) for rel in plan.added + plan.changed},
            plan.removed,
        )
    except write.WriteError as err:
        return DeployResult(
            EXIT_ERROR, lines, [Diagnostic("E-DEPLOY-WRITE", f"nothing was changed: {err}", None)], plan=plan
        )
    paths = sorted(set(plan.added + plan.changed + plan.removed))
    msg = (
        f"muh deploy: {source_label(loaded.spec.file)} (sha256 {loaded.spec.sha256[:12]}) "
        f"with muh {muh.__version__}\n\n"
        + "\n".join(
            [f"+ {p}" for p in plan.added] + [f"~ {p}" for p in plan.changed] + [f"- {p}" for p in plan.removed]
        )
        + "\n"
    )
    try:
        commit = g.commit(repo_p, paths, msg)
    except g.GitError as err:
        left = tx.rollback()
        g.unstage(repo_p, paths)
        what = "the files were restored" if not left else f"could not restore {', '.join(left)}"
        return DeployResult(
            EXIT_ERROR, lines, [Diagnostic("E-DEPLOY-GIT", f"not committed ({what}): {err}", None)], plan=plan
        )
    tx.commit()
    lines.append(
        f"committed {commit[:12]}: {len(plan.added)} added, {len(plan.changed)} changed, {len(plan.removed)} removed"
    )
    return DeployResult(EXIT_OK, lines, commit=commit, plan=plan)


def _classify_state(repo: Path, plan: Changes, state) -> None:
    """Put the state file itself into added/changed/unchanged (it is muh's but never in its own hashes)."""
    p = repo / plan.state_path
    cur = p.read_bytes() if p.is_file() and not p.is_symlink() else None
    for lst in (plan.added, plan.changed, plan.unchanged):
        if plan.state_path in lst:
            lst.remove(plan.state_path)
    if not (plan.added or plan.changed or plan.removed or plan.state_problem):
        return  # nothing else changes: keep the old state file (its bytes only say who wrote it)
    if cur is None:
        plan.added.append(plan.state_path)
    elif cur != state.content.encode():
        plan.changed.append(plan.state_path)


def _problems(repo: Path, plan: Changes) -> list[tuple[str, str]]:
    out = []
    if plan.state_problem is not None:
        present = [
            p
            for p in sorted(plan.files)
            if p.startswith(plan.state_path.rpartition("/")[0] + "/") and p != plan.state_path and p not in plan.added
        ]
        what = (
            f"is missing, but {len(present)} of the files muh deploys into its folder are already there "
            f"({present[0]} …)"
            if plan.state_problem == "missing" and present
            else plan.state_problem
        )
        out.append(
            (
                f"{plan.state_path} {what}: it records what muh deployed, so without it muh cannot tell its "
                f"files from hand edits",
                f"restore it from git (`git -C {repo} checkout HEAD -- {plan.state_path}`, or from muh's last "
                f"deploy: `git -C {repo} log -- {plan.state_path}`), then plan again; to take the files over as "
                f"muh's instead (a file that differs from this build is replaced and the state written anew)",
            )
        )
    dirty = g.dirty(repo)
    if dirty:
        out.append(
            (
                f"the working tree of {repo} has uncommitted changes ({len(dirty)}: {dirty[0].strip()} …)",
                "commit or stash them first",
            )
        )
    if plan.drift:
        out.append(
            (
                f"{plan.drift[0]} was changed by hand since muh's last deploy"
                + (f" (and {len(plan.drift) - 1} more)" if len(plan.drift) > 1 else ""),
                "move the change into the spec, or restore the file with git",
            )
        )
    if plan.foreign:
        out.append((f"{plan.foreign[0]} exists and was not written by muh", "remove or rename it"))
    return out


BLOCKING_SKIPS = ("deploy",)
"""Checks whose skip fails ``muh deploy`` (unless ``--force``): the files it commits were not checked. Other
skips (a tool the target alone needs, e.g. clang 16 for ``clang_cuda``) are said and do not block."""


def _run_checks(loaded, lines: list[str], force: bool = False) -> list[str]:
    from muh.check import run_checks

    results = run_checks(BuildContext(loaded.spec, loaded.derived))
    failed = []
    for r in results:
        blocks = r.status == "skip" and r.name in BLOCKING_SKIPS and loaded.spec.deploys
        lines.append(
            f"check {r.name}: {r.status}"
            + (f" — {r.detail}" if r.detail else "")
            + (
                " (could not run: a failure for deploy; --force deploys anyway)"
                if blocks and not force
                else " (could not run; --force)"
                if blocks
                else ""
            )
        )
        if r.status == "fail" or blocks and not force:
            failed.append(r.name)
    return failed


def render_plan(plan: Changes, spec_label: str, spec_sha: str) -> list[str]:
    out = [f"plan: {spec_label} (sha256 {spec_sha[:12]}), muh {muh.__version__}"]
    for mark, paths in (("+", plan.added), ("~", plan.changed), ("-", plan.removed)):
        out += [f"  {mark} {p}" for p in paths]
    if plan.tuned_diff:
        out.append("tuned values:")
        out += plan.tuned_diff
    if plan.state_problem is not None:
        out.append(
            f"  ! state: {plan.state_path} " + ("is missing" if plan.state_problem == "missing" else plan.state_problem)
        )
    for p in plan.drift:
        out.append(f"  ! drift: {p} differs from muh's last deploy")
    for p in plan.foreign:
        out.append(f"  ! foreign: {p} exists and is not muh's")
    out.append(
        f"{len(plan.added)} to add, {len(plan.changed)} to change, {len(plan.removed)} to remove, "
        f"{len(plan.unchanged)} unchanged"
        if plan.has_changes
        else "no changes"
    )
    return out
