"""The pinned engine's wheel: downloaded once with pip, cached, read without installing.

Cache: ``$MUH_CACHE_DIR`` (default ``~/.cache/muh``) ``/wheels``. Fetched by `muh fetch-engine`; used by
tools/extract_vllm_flags.py, the `deploy` check and the tests marked ``vllm``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from muh.diagnostics import Diagnostic, MuhError
from muh.engines.base import FetchFailed


def cache_dir() -> Path:
    return Path(os.environ.get("MUH_CACHE_DIR") or Path.home() / ".cache" / "muh") / "wheels"


def cached(version: str, engine: str = "vllm") -> Path | None:
    found = sorted(cache_dir().glob(f"{engine}-{version}-*.whl"))
    return found[0] if found else None


def fetch(version: str, engine: str = "vllm", timeout: int = 600) -> Path:
    """The cached wheel, downloading it first when missing (raises CalledProcessError / FileNotFoundError)."""
    hit = cached(version, engine)
    if hit:
        return hit
    d = cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--platform",
        "manylinux1_x86_64",
        "--python-version",
        "3.10",
        f"{engine}=={version}",
        "-d",
        str(d),
    ]
    subprocess.run(cmd, check=True, timeout=timeout, capture_output=True)
    hit = cached(version, engine)
    if hit is None:
        raise FileNotFoundError(f"pip download left no {engine} {version} wheel in {d}")
    return hit


def fetch_checked(version: str) -> str:
    """`muh fetch-engine` for a vLLM release: its wheel in the cache, checked to be the very wheel muh's flag
    table was read from (sha256). Raises MuhError (no table) or FetchFailed (download or hash)."""
    from muh.engines.vllm.derive.engine import available_versions, load_engine, resolve_version

    exact = resolve_version(version)
    if exact is None:
        raise MuhError(
            [
                Diagnostic(
                    "E-DEPLOY-ENGINE",
                    f"muh has no flag table for vllm {version}; tables: {', '.join(available_versions())}",
                    hint="tools/extract_vllm_flags.py --version X reads another release's table",
                )
            ]
        )
    try:
        wheel = fetch(exact)
    except Exception as err:  # noqa: BLE001 - pip's failure is a message, never a traceback
        detail = (getattr(err, "stderr", b"") or b"").decode(errors="replace").strip().splitlines()[-1:] or [str(err)]
        raise FetchFailed(
            [
                Diagnostic(
                    "E-IO",
                    f"cannot download vllm {exact} into {cache_dir()}: {detail[0]}",
                    hint=f"pip needs the package index; or put the wheel into {cache_dir()} yourself",
                )
            ]
        )
    table = load_engine(exact)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != table.wheel_sha256:
        raise FetchFailed(
            [
                Diagnostic(
                    "E-DEPLOY-ENGINE",
                    f"{wheel} has sha256 {digest[:12]}…, muh's flag table was "
                    f"read from {table.wheel} ({table.wheel_sha256[:12]}…)",
                    hint=f"delete {wheel} and fetch again",
                )
            ]
        )
    return f"{wheel}: the flag table's wheel ({len(table.options)} options of vllm {exact})"


def extract(wheel: Path, members: list[str], dest: Path) -> None:
    """Unzip just ``members`` (paths inside the wheel, e.g. vllm/attention/ops/paged_attn.py) under ``dest``."""
    with zipfile.ZipFile(wheel) as z:
        for m in members:
            target = dest / m
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(m))


def read(wheel: Path, member: str) -> str:
    with zipfile.ZipFile(wheel) as z:
        return z.read(member).decode("utf-8")
