"""Kernel configs of the bundled specs, for tests and benchmarks.

They are derived from ``specs/h200.muh`` (the lab GPU: CUB 3.0.1's sm_90 policies) and
``specs/baseline.muh`` (the BI-V100) through the same pipeline as ``muh build`` — parse, validate,
derive's kernel configs (``Derived.kernels``, made once by ``derive.kernels.kernel_builds``) — so tests and
benchmarks run exactly the numbers a build emits, with no second copy of them. Needs the repository's ``specs/`` folder, which an installed muh
does not ship: so it lives in bench/, not in muh; tests import it as ``bench.presets``
(tests/conftest.py puts the repository root on the path). ``plant_lane32_bug`` is the negative
control the tests build (a test hook, kept out of muh's config).
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from muh.families.base import KernelConfig

SPECS = Path(__file__).resolve().parents[1] / "specs"


# preset: (spec file, hardware)
SOURCES = {"h200": ("h200.muh", "h200"), "bi100": ("baseline.muh", "bi100")}


@lru_cache(maxsize=None)
def _loaded(file: str):
    from muh.pipeline import load_file

    return load_file(SPECS / file)


@lru_cache(maxsize=None)
def _from_spec(file: str, hardware: str, name: str) -> KernelConfig:
    loaded = _loaded(file)
    return replace(loaded.derived.kernels.configs[hardware], name=name)


def h200() -> KernelConfig:
    return _from_spec(*SOURCES["h200"], "h200")


def bi100() -> KernelConfig:
    return _from_spec(*SOURCES["bi100"], "bi100")


PRESETS = {"h200": h200, "bi100": bi100}

BLOCK_LAYER = "include/muh/block.cuh"
_LANES = "constexpr int kLanes = warp::kSize;"


def plant_lane32_bug(text: str) -> str:
    """The negative control: the generated block layer (``BLOCK_LAYER``) with a block reduce that
    assumes 32 lanes instead of the warp's (a 64-lane warp then reduces wrong; tests must catch it)."""
    if _LANES not in text:
        raise ValueError(f"{BLOCK_LAYER} has no `{_LANES}` to plant the bug in")
    return text.replace(_LANES, "constexpr int kLanes = 32;")


def ops(preset: str, emulate_warp: int | None = None):
    """The LLM ops of a preset as ``muh build`` emits them: the spec's derived ops target (its own
    rms_norm / silu_and_mul policies and their size buckets included); ``emulate_warp``: the same
    policies with a logical warp of that many lanes (the emulation build's name, as the kernels')."""
    file, hardware = SOURCES[preset]
    target = _loaded(file).derived.ops[hardware].model_copy(update={"name": preset})
    return target.with_warp(f"{preset}-emu{emulate_warp}", emulate_warp) if emulate_warp else target


def write_ops(preset: str, root, emulate_warp: int | None = None) -> str:
    """Generate the kernels and the LLM ops of a preset (``h200``, ``bi100``) under ``root``;
    ``emulate_warp``: a logical warp of that many lanes on a 32-lane GPU (tests, bench)."""
    from muh.codegen.kernels import emitter
    from muh.codegen.ops import write

    cfg = PRESETS[preset]()
    if emulate_warp:
        cfg = cfg.emulated(emulate_warp, 32)
    header = emitter.default_header(cfg)
    emitter.write(cfg, root, header)
    write(ops(preset, emulate_warp), root, header)
    return str(root)
