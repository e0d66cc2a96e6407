"""All-or-nothing writes into the target repository (``muh deploy --apply``).

1. *stage*: every new content goes to a temporary file beside its destination, created with
   ``O_CREAT|O_EXCL|O_NOFOLLOW`` (a committed link at a temporary name cannot redirect it); missing
   folders are created one level at a time, never through a link;
2. *swap*: right before each rename, neither the temporary, nor the destination, nor any folder
   between the repository root and it may be a link; the file being replaced is kept (hard-linked
   to a backup name) and a file being removed is renamed to one;
3. on any error every rename is undone in reverse order, created folders and temporaries are
   removed, and the repository is as it was (``git status`` unchanged). ``Transaction.commit()``
   deletes the backups once git has committed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from muh.output import _exclusive_temp


class WriteError(Exception):
    """A write was refused or failed; the repository has been restored."""


def _lexists(p: Path) -> bool:
    return os.path.lexists(p)


def _check_dirs(repo: Path, rel: str) -> None:
    """Every folder between ``repo`` and ``rel`` is a real folder (not a link, not a file)."""
    cur = repo
    for part in PurePosixPath(rel).parts[:-1]:
        cur = cur / part
        st = os.lstat(cur)
        if stat.S_ISLNK(st.st_mode):
            raise WriteError(f"{cur.relative_to(repo)} is a symbolic link; muh does not write through links")
        if not stat.S_ISDIR(st.st_mode):
            raise WriteError(f"{cur.relative_to(repo)} is a file where muh needs a folder")


@dataclass
class Transaction:
    repo: Path
    created_dirs: list[Path] = field(default_factory=list)
    staged: dict[str, str] = field(default_factory=dict)  # rel → temporary path
    done: list[tuple[str, str | None]] = field(default_factory=list)  # (rel, backup or None when new)
    removed: list[tuple[str, str]] = field(default_factory=list)  # (rel, backup)

    def _mkdirs(self, rel: str) -> None:
        cur = self.repo
        for part in PurePosixPath(rel).parts[:-1]:
            cur = cur / part
            if not _lexists(cur):
                os.mkdir(cur)
                self.created_dirs.append(cur)
        _check_dirs(self.repo, rel)

    def stage(self, rel: str, content: str, executable: bool) -> None:
        self._mkdirs(rel)
        dest = self.repo / rel
        fd, tmp = _exclusive_temp(dest.parent, dest.name)
        self.staged[rel] = tmp
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(content)
            os.fchmod(fh.fileno(), 0o755 if executable else 0o644)

    def _backup(self, dest: Path) -> str:
        fd, name = _exclusive_temp(dest.parent, dest.name + ".muh-old")
        os.close(fd)
        os.unlink(name)
        os.link(dest, name, follow_symlinks=False)
        return name

    def swap(self, rel: str) -> None:
        dest = self.repo / rel
        tmp = self.staged[rel]
        _check_dirs(self.repo, rel)
        if stat.S_ISLNK(os.lstat(tmp).st_mode) or not stat.S_ISREG(os.lstat(tmp).st_mode):
            raise WriteError(f"the temporary for {rel} was replaced by something else")
        backup = None
        if _lexists(dest):
            st = os.lstat(dest)
            if not stat.S_ISREG(st.st_mode):
                raise WriteError(
                    f"{rel} is {'a symbolic link' if stat.S_ISLNK(st.st_mode) else 'not a regular file'}; "
                    "muh does not write through links or over folders"
                )
            backup = self._backup(dest)
        try:
            os.rename(tmp, dest)
        except OSError:
            if backup is not None:
                os.unlink(backup)
            raise
        del self.staged[rel]
        self.done.append((rel, backup))

    def remove(self, rel: str) -> None:
        dest = self.repo / rel
        _check_dirs(self.repo, rel)
        if not _lexists(dest):
            return
        if not stat.S_ISREG(os.lstat(dest).st_mode):
            raise WriteError(f"{rel} is not a regular file; muh does not remove it")
        fd, backup = _exclusive_temp(dest.parent, dest.name + ".muh-old")
        os.close(fd)
        os.rename(dest, backup)
        self.removed.append((rel, backup))

    def rollback(self) -> list[str]:
        """Undo everything; returns what could not be restored (empty when the repository is as it was)."""
        left = []
        for rel, backup in reversed(self.removed):
            try:
                os.rename(backup, self.repo / rel)
            except OSError:
                left.append(rel)
        for rel, backup in reversed(self.done):
            try:
                if backup is None:
                    os.unlink(self.repo / rel)
                else:
                    os.rename(backup, self.repo / rel)
            except OSError:
                left.append(rel)
        for tmp in self.staged.values():
            try:
                os.unlink(tmp)
            except OSError:
                pass
        for d in reversed(self.created_dirs):
            try:
                os.rmdir(d)
            except OSError:
                pass
        self.removed, self.done, self.staged, self.created_dirs = [], [], {}, []
        return left

    def commit(self) -> None:
        """Keep the new files: delete the backups."""
        for _, backup in self.done + self.removed:
            if backup is not None:
                try:
                    os.unlink(backup)
                except OSError:
                    pass
        self.done, self.removed, self.created_dirs = [], [], []


def apply(repo: Path, writes: dict[str, tuple[str, bool]], removes: list[str]) -> Transaction:
    """Stage every file, then swap each in; on any error restore the repository and raise WriteError."""
    tx = Transaction(repo)
    try:
        for rel, (content, executable) in writes.items():
            tx.stage(rel, content, executable)
        for rel in writes:
            tx.swap(rel)
        for rel in removes:
            tx.remove(rel)
    except (OSError, WriteError) as err:
        left = tx.rollback()
        msg = (
            str(err)
            if isinstance(err, WriteError)
            else f"{err.strerror or err}" + (f": {err.filename}" if getattr(err, "filename", None) else "")
        )
        if left:
            msg += f" — and {', '.join(left)} could not be restored"
        raise WriteError(msg) from None
    return tx
