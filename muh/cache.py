"""muh's per-user cache folder: ``$MUH_CACHE_DIR``, else ``$XDG_CACHE_HOME/muh``, else ``~/.cache/muh``.

Only data muh can rebuild lives here (the analysed grammar, compiled templates, wheels, kernels).
``private(sub)`` hands out a subfolder only when it is the user's own and nobody else may write
it, because some of what is loaded from it (lark's and jinja's caches) is executable.
"""

from __future__ import annotations

import os
from pathlib import Path


def root() -> Path:
    if os.environ.get("MUH_CACHE_DIR"):
        return Path(os.environ["MUH_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "muh"


def private(sub: str) -> Path | None:
    """``root()/sub``, created 0700; None when it cannot be made or is not safely the user's."""
    try:
        folder = root() / sub
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for p in (folder, folder.parent):
            st = p.stat()
            if (hasattr(os, "getuid") and st.st_uid != os.getuid()) or st.st_mode & 0o022:
                return None
    except (OSError, RuntimeError):  # RuntimeError: no home folder
        return None
    return folder
