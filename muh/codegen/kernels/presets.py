"""Kernel configs of the bundled specs, for tests and benchmarks.

They are derived from ``specs/h200.muh`` (the lab GPU: CUB 3.0.1's sm_90 policies) and
``specs/baseline.muh`` (the BI-V100) through the same pipeline as ``muh build`` — parse, validate,
derive, ``derive.kernels.config_from_derived`` — so tests and benchmarks run exactly the numbers a build
emits, with no second copy of them. Needs the repository's ``specs/`` folder.
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from muh.derive.kernels import config_from_derived
from muh.families.base import KernelConfig

SPECS = Path(__file__).resolve().parents[3] / "specs"


@lru_cache(maxsize=None)
def _from_spec(file: str, hardware: str, name: str) -> KernelConfig:
    from muh.pipeline import load_file

    loaded = load_file(SPECS / file)
    return replace(config_from_derived(loaded.derived, loaded.spec.hardware[hardware]), name=name)


def h200() -> KernelConfig:
    return _from_spec("h200.muh", "h200", "h200")


def bi100() -> KernelConfig:
    return _from_spec("baseline.muh", "bi100", "bi100")


PRESETS = {"h200": h200, "bi100": bi100}
