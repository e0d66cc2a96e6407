"""The pinned engine's wheel: downloaded once with pip, cached, read without installing.

Cache: ``$MUH_CACHE_DIR`` (default ``~/.cache/muh``) ``/wheels``. Fetched by `muh fetch-engine`; used by
tools/extract_vllm_flags.py, the `deploy` check and the tests marked ``vllm``.
"""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path


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
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
           "--platform", "manylinux1_x86_64", "--python-version", "3.10", f"{engine}=={version}", "-d", str(d)]
    subprocess.run(cmd, check=True, timeout=timeout, capture_output=True)
    hit = cached(version, engine)
    if hit is None:
        raise FileNotFoundError(f"pip download left no {engine} {version} wheel in {d}")
    return hit


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
