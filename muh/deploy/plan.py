"""Deploy planning: what a build would change in a repository, and whether it may.

The deployed layout: ``Dockerfile`` and ``computility-run.yaml`` at the repository root, every
other generated file under ``<folder>/`` (``muh/``), plus ``<folder>/deploy-state.json`` — the
hashes of every file muh wrote there at its last deploy. The state file is what makes muh safe
in a repository people also edit by hand: a file whose hash differs from the state is *drift*
(refused without ``--force``), a file muh would write that exists but is not in the state is
*foreign* (refused without ``--force``), and files not named in the state are never touched.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from muh.codegen.base import GeneratedFile

ROOT_FILES = ("Dockerfile", "computility-run.yaml")
"""The default platform's root files (``muh.platforms``' ``computility``: ``PlatformFacts.root_files``)."""
STATE = "deploy-state.json"


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def repo_path(generated: str, folder: str, root_files: tuple[str, ...] = ROOT_FILES) -> str:
    return generated if generated in root_files else f"{folder}/{generated}"


@dataclass
class Changes:
    """What a deploy would change in the repository (the deploy command's plan; not an engine's ``Plan``)."""

    files: dict[str, GeneratedFile]  # repo path → content to write
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    drift: list[str] = field(default_factory=list)  # muh's files edited or deleted by hand
    foreign: list[str] = field(default_factory=list)  # files muh would write that it did not write
    clashes: list[str] = field(default_factory=list)  # why a path cannot be written at all (refused even with --force)
    tuned_diff: list[str] = field(default_factory=list)
    state_path: str = ""
    state: dict = field(default_factory=dict)
    state_problem: str | None = None  # why the state file cannot be read (None: read, or none and no muh file there)

    @property
    def has_changes(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def load_state(repo: Path, folder: str) -> tuple[dict, str | None]:
    """The state of muh's last deploy, and why it cannot be used: None when it was read (or there is none:
    a first deploy), else what is wrong with it ("missing" when there is no file)."""
    p = repo / folder / STATE
    if p.is_symlink() or (p.exists() and not p.is_file()):
        return {}, "is not a plain file"
    if not p.exists():
        return {}, "missing"
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        return {}, "is not UTF-8 text"
    except ValueError as err:
        return {}, f"is not valid JSON ({str(err).splitlines()[0][:80]})"
    except OSError as err:
        return {}, f"cannot be read ({err.strerror or err})"
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        return {}, "is not muh's deploy state (no `files` table of paths and hashes)"
    return data, None


def make_state(files: dict[str, GeneratedFile], header: str, spec_label: str, spec_sha: str, version: str) -> str:
    data = {
        "@generated": header,
        "spec": spec_label,
        "spec_sha256": spec_sha,
        "muh_version": version,
        "files": {p: sha(f.content) for p, f in sorted(files.items())},
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _current(repo: Path, rel: str) -> bytes | None:
    p = repo / rel
    try:
        return p.read_bytes() if p.is_file() and not p.is_symlink() else None
    except OSError:
        return None


def compute(
    repo: Path,
    generated: list[GeneratedFile],
    folder: str,
    tuned: str | None = None,
    root_files: tuple[str, ...] = ROOT_FILES,
) -> Changes:
    """``tuned``: the build's file of tuned values with provenance (the engine's ``EnginePlugin.tuned_file``),
    diffed value by value; None: no semantic diff."""
    files = {repo_path(f.path, folder, root_files): f for f in generated}
    plan = Changes(files=files, state_path=f"{folder}/{STATE}")
    state, problem = load_state(repo, folder)
    plan.state = state
    # muh's files in its folder without the state: the state was deleted (a first deploy has neither; a
    # hand-made Dockerfile at the root alone is a foreign file, refused as such)
    inside = [rel for rel in files if rel.startswith(f"{folder}/") and _current(repo, rel) is not None]
    if problem is not None and (problem != "missing" or inside):
        plan.state_problem = problem
    owned: dict[str, str] = {
        p: h for p, h in state.get("files", {}).items() if isinstance(p, str) and isinstance(h, str)
    }
    for rel, h in sorted(owned.items()):
        cur = _current(repo, rel)
        if cur is None or sha(cur) != h:
            plan.drift.append(rel)
    for rel, f in sorted(files.items()):
        cur = _current(repo, rel)
        if cur is None:
            if (repo / rel).exists() or (repo / rel).is_symlink():
                plan.foreign.append(rel)  # a folder or a link where muh wants a file
            plan.added.append(rel)
        elif cur == f.content.encode():
            plan.unchanged.append(rel)
        else:
            plan.changed.append(rel)
            if rel not in owned:
                plan.foreign.append(rel)
    plan.clashes = clashes(repo, sorted(files))
    for rel in sorted(set(owned) - set(files)):
        if _current(repo, rel) is not None:
            plan.removed.append(rel)
    old_tuned = _load_tuned(_current(repo, f"{folder}/{tuned}")) if tuned else {}
    new_f = files.get(f"{folder}/{tuned}") if tuned else None
    new_tuned = _load_tuned(new_f.content.encode() if new_f else None)
    plan.tuned_diff = tuned_diff(old_tuned, new_tuned, source=tuned or "")
    return plan


def clashes(repo: Path, paths: list[str]) -> list[str]:
    """Paths that cannot be written whatever --force says: one of muh's files would be a folder of
    another (``folder = "Dockerfile"``), or a file, folder or link already sits where muh needs the
    other kind."""
    out = []
    wanted = set(paths)
    for rel in paths:
        parts = PurePosixPath(rel).parts
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            if prefix in wanted:
                out.append(
                    f"muh would write both the file {prefix} and {rel} inside a folder of that name"
                    " (choose another deploy `folder`)"
                )
                break
            p = repo / prefix
            if p.is_symlink():
                out.append(f"{prefix} is a symbolic link where muh needs a folder for {rel}")
                break
            if p.exists() and not p.is_dir():
                out.append(f"{prefix} is a file where muh needs a folder for {rel}")
                break
        else:
            p = repo / rel
            if p.is_dir() and not p.is_symlink():
                out.append(f"{rel} is a folder where muh writes a file")
    return out


def _load_tuned(raw: bytes | None) -> dict:
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    tuned = data.get("tuned", {}) if isinstance(data, dict) else {}
    return tuned if isinstance(tuned, dict) else {}


def _show(entry: dict) -> str:
    v = entry.get("value")
    text = (
        json.dumps(v, ensure_ascii=False) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
    )
    how = entry.get("origin", "")
    if how == "derived" and entry.get("rule"):
        inputs = entry.get("inputs") or {}
        how = f"derived: {entry['rule']}" + (
            "; " + ", ".join(f"{k}={v}" for k, v in sorted(inputs.items())) if inputs else ""
        )
    elif entry.get("where"):
        how = f"{how} at {entry['where']}"
    return f"{text} ({how})" if how else text


def tuned_diff(old: dict, new: dict, limit: int = 60, source: str = "the tuned values") -> list[str]:
    """Changed tuned values, one line each; MoE tile rows are summarised."""
    lines: list[str] = []
    moe_changes = 0
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a is not None and b is not None and a.get("value") == b.get("value"):
            continue
        if key.startswith("moe.tiles."):
            moe_changes += 1
            continue
        if a is None:
            lines.append(f"  + {key} = {_show(b)}")
        elif b is None:
            lines.append(f"  - {key} (was {_show(a)})")
        else:
            lines.append(f"  ~ {key}: {_show(a)} → {_show(b)}")
    if moe_changes:
        lines.append(f"  ~ moe.tiles: {moe_changes} tile values differ (see {source})")
    if len(lines) > limit:
        lines = lines[:limit] + [f"  … {len(lines) - limit} more"]
    return lines


def safe_relpath(rel: str) -> bool:
    """A path that stays inside the repository: relative, no `..`, not under .git."""
    p = PurePosixPath(rel)
    return not p.is_absolute() and ".." not in p.parts and p.parts[:1] != (".git",) and "" not in p.parts


def escapes(repo: Path, rel: str) -> bool:
    """True when writing ``rel`` would follow a symbolic link or land outside ``repo``."""
    root = repo.resolve()
    cur = root
    for part in PurePosixPath(rel).parts:
        cur = cur / part
        if cur.is_symlink():
            return True
    try:
        (root / rel).resolve().relative_to(root)
    except ValueError:
        return True
    return False
