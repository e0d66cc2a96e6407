"""The few git operations deploy needs, through the git command (no library, no shell)."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path


class GitError(Exception):
    pass


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(LC_ALL="C", GIT_TERMINAL_PROMPT="0")
    return env


@lru_cache(maxsize=1)
def _no_hooks() -> str:
    """An empty folder of muh's, given to git as its hooks folder (removed when muh exits)."""
    path = tempfile.mkdtemp(prefix="muh-no-hooks-")
    atexit.register(shutil.rmtree, path, True)
    return path


def safe_config() -> list[str]:
    """``-c`` options that keep a target repository from running code through muh: no hooks, no
    file-system monitor, no signing program, no pager."""
    return [
        "-c",
        f"core.hooksPath={_no_hooks()}",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "commit.gpgSign=false",
        "-c",
        "core.pager=cat",
    ]


def git(repo: Path, *args: str, check: bool = True, env: dict | None = None) -> str:
    try:
        proc = subprocess.run(
            ["git", *safe_config(), "-C", str(repo), *args],
            capture_output=True,
            text=True,
            env={**_env(), **(env or {})},
            timeout=120,
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args)} timed out") from None
    if check and proc.returncode != 0:
        shown = [a for a in args if a != "--"]
        words = " ".join(shown[:4]) + (f" … ({len(shown) - 4} more)" if len(shown) > 4 else "")  # not every path
        raise GitError(f"git {words} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def toplevel(path: Path) -> Path | None:
    """The work tree root containing ``path``, or None when it is not in a git work tree."""
    try:
        out = git(path, "rev-parse", "--show-toplevel", check=True)
    except GitError:
        return None
    return Path(out.strip()).resolve() if out.strip() else None


def dirty(repo: Path) -> list[str]:
    """``git status --porcelain`` lines (untracked files included)."""
    out = git(repo, "status", "--porcelain", "--untracked-files=all")
    return [line for line in out.splitlines() if line.strip()]


def ignored(repo: Path, paths: list[str]) -> list[tuple[str, str]]:
    """(path, the .gitignore rule ``file:line:pattern``) for each of ``paths`` the repository ignores."""
    if not paths:
        return []
    out = git(repo, "check-ignore", "-v", "--no-index", "--", *paths, check=False)
    found = []
    for line in out.splitlines():
        rule, _, path = line.partition("\t")
        if path and not rule.endswith(":!" + path):
            found.append((path, rule))
    return found


def detached(repo: Path) -> str | None:
    """The commit HEAD points at when it is detached (no branch), else None (a branch, born or not)."""
    if git(repo, "symbolic-ref", "-q", "HEAD", check=False).strip():
        return None
    return git(repo, "rev-parse", "--short=12", "HEAD", check=False).strip() or "?"


def nested_repositories(repo: Path, paths: list[str]) -> list[tuple[str, str]]:
    """(folder, what) for each folder above one of ``paths`` that is a submodule of ``repo`` (a gitlink in
    its index) or a git repository of its own (a ``.git`` there): git does not commit files inside one."""
    folders = sorted({str(Path(p).parents[i].as_posix()) for p in paths for i in range(len(Path(p).parts) - 1)})
    if not folders:
        return []
    links = set()
    for entry in git(repo, "ls-files", "--stage", "-z", "--", *folders, check=False).split("\0"):
        mode, _, rest = entry.partition(" ")
        if mode == "160000":
            links.add(rest.partition("\t")[2])
    found = []
    for f in folders:
        if f in links:
            found.append((f, "a git submodule"))
        elif (repo / f / ".git").exists():
            found.append((f, "a git repository of its own"))
    return found


def commit(repo: Path, paths: list[str], message: str) -> str:
    """Stage exactly ``paths`` (additions, changes and removals) and commit them; returns the commit id."""
    tracked = set(git(repo, "ls-files", "-z", "--", *paths).split("\0")) if paths else set()
    paths = [p for p in paths if (repo / p).exists() or p in tracked]
    git(repo, "add", "--all", "--", *paths)
    env = {}
    if not git(repo, "config", "user.name", check=False).strip():
        env.update(GIT_AUTHOR_NAME="muh", GIT_COMMITTER_NAME="muh")
    if not git(repo, "config", "user.email", check=False).strip():
        env.update(GIT_AUTHOR_EMAIL="muh@localhost", GIT_COMMITTER_EMAIL="muh@localhost")
    git(repo, "commit", "--quiet", "--no-verify", "-m", message, "--", *paths, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


def unstage(repo: Path, paths: list[str]) -> None:
    """Put the index entries of ``paths`` back to HEAD's (after a failed commit)."""
    if paths:
        git(repo, "reset", "-q", "--", *paths, check=False)
