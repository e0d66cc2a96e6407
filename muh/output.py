"""Writing what muh owns, and nothing else: the build folder and single files rewritten in place.

**The build folder.** ``muh build`` writes a whole folder and swaps it in with one rename, so a failed
or interrupted build leaves the old output as it was. A folder is muh's when its ``manifest.json``
is muh's own: a JSON object whose ``format`` is :data:`MANIFEST_FORMAT` (or, for folders written
before that key existed, whose ``@generated`` line names muh) and whose ``files`` maps each file muh
wrote to its sha256. Before writing, every listed file must still have that hash (an edited file
is refused: copy your change into the spec). Files the manifest does not list are never deleted:
they are kept, at the same path, in the new folder (hard-linked into it before the swap, so the
original stays where it was until the swap succeeds); a foreign file where muh now writes a file is
refused.

**Temporaries.** The new folder is built in a sibling ``.<name>.tmp-XXXX`` and the old one is moved
to ``.<name>.old-XXXX`` while swapping. Each carries a marker file (:data:`MARKER`, a ``.gitignore``
that also hides the folder from git) naming the process; a later build removes the ones whose
process is gone (after putting a half-swapped old folder back), and never a folder without it.

**Single files** (``muh fmt``, ``muh tune --apply``): :func:`replace_file` writes a sibling temporary
created with ``O_EXCL|O_NOFOLLOW``, keeps the file's mode, and renames it over the real file (a
link is followed to its target, which is replaced; the link stays).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path, PurePosixPath

from muh.diagnostics import Diagnostic, MuhError

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "muh-build-manifest/1"
MARKER = ".gitignore"
_MARK_HEAD = "# muh build temporary folder"
FOLDER_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def _refuse(msg: str, hint: str | None = None, code: str = "E-OUTPUT") -> MuhError:
    return MuhError([Diagnostic(code, msg, None, hint=hint)])


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest_text(meta: dict, files: dict[str, str]) -> str:
    """The manifest of a build: ``meta`` (who wrote it, from which spec) plus the sha256 of every file."""
    data = {
        **meta,
        "format": MANIFEST_FORMAT,
        "files": {path: sha256(content.encode()) for path, content in files.items()},
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def default_folder_name(stem: str, spec: str) -> str:
    """The folder under ``generated/`` for a spec: its stem, when that is one plain folder name."""
    if not FOLDER_NAME.fullmatch(stem) or stem in (".", ".."):
        raise _refuse(
            f"cannot name an output folder after the spec `{spec}` (its name without `.muh` is {stem!r})",
            "rename the spec (letters, digits, `_`, `-`, `.`), or pass `-o DIR`",
        )
    return stem


def _git_root(path: Path) -> Path | None:
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return None


def spec_source(spec: str | Path) -> str | None:
    """The manifest's ``source``: the spec's path from the root of the git repository that holds it
    ('/'-separated: the same wherever the repository is cloned, whatever the output folder and cwd, so a
    build into another folder is byte-identical), else its absolute path; None where it has none."""
    try:
        p = Path(os.path.abspath(spec))
    except (OSError, ValueError):
        return None
    root = _git_root(p.parent)
    return p.relative_to(root).as_posix() if root is not None else p.as_posix()


def refuse_other_spec(out: Path, spec: str | Path) -> None:
    """Two specs of one name in different folders would share ``generated/<name>/`` (the folder a build
    picks by itself), each build replacing the other's: refuse when ``out``'s manifest names another spec
    file that still exists (a spec that was moved or renamed leaves nothing there, and its new place takes
    the folder over). A folder named with ``-o`` is the user's choice and not asked."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    source = data.get("source") if isinstance(data, dict) else None
    if not isinstance(source, str) or not source:
        return
    root = _git_root(Path(os.path.abspath(spec)).parent)
    if Path(source).is_absolute():
        before = Path(source)
    elif root is not None:
        before = root / source
    else:  # built from a repository's spec, now from a spec outside one: nothing to compare with
        return
    try:
        same = os.path.samefile(before, spec)
    except OSError:  # the spec it was built from is gone (moved, renamed, deleted)
        return
    if not same and before.is_file():
        try:
            shown = os.path.relpath(before)  # as the user would write it from here
        except ValueError:  # another drive
            shown = os.path.normpath(before)
        raise _refuse(
            f"{out} holds the build of {shown}, another spec named `{Path(spec).name}`; building {spec} "
            f"there would replace it",
            "build one of them into another folder with -o DIR "
            f"(e.g. -o {out.parent / (out.name + '-' + (Path(spec).resolve().parent.name or 'other'))}), "
            "or rename one spec",
        )


# -- is this folder muh's? ---------------------------------------------------------------------------
def _safe_rel(rel: object) -> bool:
    if not isinstance(rel, str) or not rel or "\\" in rel:
        return False
    p = PurePosixPath(rel)
    return not p.is_absolute() and all(part not in ("", ".", "..") for part in p.parts) and str(p) == rel


def _read_manifest(out: Path) -> dict[str, str]:
    """The files (path → sha256) listed by ``out``'s manifest; refuses a manifest that is not muh's."""
    m = out / MANIFEST
    hint = (
        "muh only replaces a folder it wrote itself; choose an empty folder or a new one with -o "
        "(or move your files out of it)"
    )
    if not m.is_file() or m.is_symlink():
        raise _refuse(f"{out} is not empty and was not written by muh (no manifest.json of muh's)", hint)
    try:
        data = json.loads(m.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    ours = isinstance(data, dict) and (
        data.get("format") == MANIFEST_FORMAT
        or ("format" not in data and str(data.get("@generated", "")).startswith("@generated by muh "))
    )
    files = data.get("files") if ours else None
    if not isinstance(files, dict) or not all(_safe_rel(k) and isinstance(v, str) for k, v in files.items()):
        raise _refuse(f"{m} is not a manifest written by muh, so {out} is not muh's to replace", hint)
    return files


def _listing(out: Path) -> tuple[set[str], set[str]]:
    """Every file or link under ``out`` (relative, '/'-separated) and every empty folder."""
    entries, empty = set(), set()
    for root, dirs, names in os.walk(out, followlinks=False):
        rel_root = Path(root).relative_to(out)
        for d in list(dirs):
            if (Path(root) / d).is_symlink():
                dirs.remove(d)
                names.append(d)
        if not dirs and not names and Path(root) != out:
            empty.add(rel_root.as_posix())
        for n in names:
            entries.add((rel_root / n).as_posix())
    return entries, empty


def plan_replace(out: Path, new_paths: set[str]) -> tuple[list[str], list[str]]:
    """Check that muh may replace ``out`` with a folder holding ``new_paths``.

    Returns (foreign files to keep, empty folders to keep); raises ``MuhError`` when ``out`` is not
    muh's, a file it lists was edited, or a foreign file sits where muh now writes."""
    if out.is_symlink():
        raise _refuse(f"{out} is a symbolic link", "pass the folder it points to with -o, or another folder")
    if not out.exists():
        return [], []
    if not out.is_dir():
        raise _refuse(f"{out} exists and is not a folder", "choose another -o")
    entries, empty = _listing(out)
    if not entries and not empty:
        return [], []
    listed = _read_manifest(out)
    edited = []
    for rel, digest in sorted(listed.items()):
        p = out / rel
        if not (p.exists() or p.is_symlink()):
            continue  # deleted by hand: nothing of the user's to lose
        try:
            ok = p.is_file() and not p.is_symlink() and sha256(p.read_bytes()) == digest
        except OSError:
            ok = False
        if not ok:
            edited.append(rel)
    if edited:
        more = f" (and {len(edited) - 1} more)" if len(edited) > 1 else ""
        raise _refuse(
            f"{out / edited[0]} was changed since muh wrote it{more}; building would lose the change",
            "move the change into the spec (or copy the file elsewhere and delete it), then build again",
        )
    foreign = sorted(e for e in entries if e not in listed and e != MANIFEST and not _is_marker(out, e))
    new_dirs = {str(PurePosixPath(p).parents[i]) for p in new_paths for i in range(len(PurePosixPath(p).parts) - 1)}
    for f in foreign:
        clash = f in new_paths or f in new_dirs or any(str(parent) in new_paths for parent in PurePosixPath(f).parents)
        if clash:
            raise _refuse(
                f"{out / f} was not written by muh, and muh now writes {'a folder' if f in new_dirs else 'a file'} "
                f"there",
                f"move {f} out of {out}, or choose another -o",
            )
    keep_empty = sorted(
        e for e in empty if e not in new_paths and not any(str(p) in new_paths for p in PurePosixPath(e).parents)
    )
    return foreign, keep_empty


def _is_marker(out: Path, rel: str) -> bool:
    return rel == MARKER and _marker_pid(out) is not None


# -- temporaries --------------------------------------------------------------------------------------
def _mark(folder: Path) -> None:
    (folder / MARKER).write_text(f"{_MARK_HEAD} (pid {os.getpid()}); safe to delete\n*\n", encoding="utf-8")


def _marker_pid(folder: Path) -> int | None:
    try:
        head = (folder / MARKER).read_text(encoding="utf-8").splitlines()[0]
    except (OSError, UnicodeDecodeError, IndexError):
        return None
    m = re.fullmatch(re.escape(_MARK_HEAD) + r" \(pid (\d+)\); safe to delete", head)
    return int(m.group(1)) if m else None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def clean_stale(out: Path) -> list[Path]:
    """Remove muh's own temporaries beside ``out`` left by a killed build (name and marker both
    match, and the process that made them is gone); an old folder whose swap was cut short is put
    back first. Returns what was removed."""
    parent = out.parent
    removed: list[Path] = []
    try:
        siblings = sorted(parent.iterdir())
    except OSError:
        return removed
    for kind in ("old", "tmp"):  # restore an interrupted swap before anything is deleted
        for d in siblings:
            if not d.name.startswith(f".{out.name}.{kind}-") or d.is_symlink() or not d.is_dir():
                continue
            pid = _marker_pid(d)
            if pid is None or _alive(pid):
                continue
            try:
                if kind == "old" and (d / "x").is_dir() and not (out.exists() or out.is_symlink()):
                    os.rename(d / "x", out)
                shutil.rmtree(d)
                removed.append(d)
            except OSError:
                continue
    return removed


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


def write_folder(files: dict[str, tuple[str, bool]], out: Path) -> None:
    """Write ``files`` (path → (content, executable)) as the folder ``out``, all or nothing."""
    out = Path(out)
    parent = out.parent if str(out.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        clean_stale(out)
        foreign, keep_empty = plan_replace(out, set(files))
        mode = stat.S_IMODE(out.stat().st_mode) if out.is_dir() else _default_mode()
        exec_mode = _default_mode() & 0o755 | 0o700
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
        old: Path | None = None
        try:
            _mark(tmp)
            for rel, (content, executable) in files.items():
                target = tmp / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content, encoding="utf-8", newline="\n")
                if executable:
                    target.chmod(exec_mode)
            if _marker_pid(tmp) == os.getpid():  # (a generated file of that name would have replaced it)
                os.unlink(tmp / MARKER)
            for rel in foreign:  # the user's files stay: linked into the new folder before the swap
                target = tmp / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(out / rel, target, follow_symlinks=False)
                except OSError as err:
                    raise _refuse(
                        f"cannot keep {out / rel} (not written by muh) in the new build: {err.strerror or err}",
                        f"move it out of {out}, then build again",
                    ) from None
            for rel in keep_empty:
                (tmp / rel).mkdir(parents=True, exist_ok=True)
            tmp.chmod(mode)
            if out.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=parent))
                _mark(old)
                os.rename(out, old / "x")
                try:
                    os.rename(tmp, out)
                except OSError:
                    os.rename(old / "x", out)
                    raise
            else:
                os.rename(tmp, out)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
            if old is not None and (out.exists() or not (old / "x").exists()):
                shutil.rmtree(old, ignore_errors=True)  # else: the old folder waits there for the next build to restore
    except OSError as err:
        raise _refuse(f"cannot write {out}: {err.strerror or err}", code="E-IO") from None


# -- one file, in place -------------------------------------------------------------------------------
def replace_file(path: str | Path, content: str | bytes) -> Path:
    """Atomically replace (or create) the file ``path`` with ``content`` (through a symbolic link: the
    link's target is rewritten and the link kept). The temporary is created with O_EXCL|O_NOFOLLOW
    beside the file, gets the file's mode (a new file: the umask's), and is renamed over it: a reader
    sees the old file or the new one, never half of it. Returns the path written."""
    real = Path(os.path.realpath(path))
    mode = stat.S_IMODE(real.stat().st_mode) if real.exists() else _default_mode() & 0o666
    fd, tmp_name = _exclusive_temp(real.parent, real.name)
    try:
        if isinstance(content, bytes):
            with os.fdopen(fd, "wb") as fh:
                fh.write(content)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(content)
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, real)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise
    return real


def _exclusive_temp(folder: Path, name: str) -> tuple[int, str]:
    """A new file beside ``name`` that nobody (no link) was there first: O_CREAT|O_EXCL|O_NOFOLLOW."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = folder / f".{name}.muh-tmp-{os.urandom(4).hex()}"
        try:
            return os.open(tmp, flags, 0o600), str(tmp)
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file in {folder}")
