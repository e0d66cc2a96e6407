"""The resolved deployment: what the vLLM, Docker and run-file emitters print, nothing left to decide.

Built by ``muh.codegen.vllm.resolve.resolve`` from a ``Spec`` and one of its ``deploy`` blocks.
Every tuned number is a ``Resolved`` (value, rule, inputs, where) so ``muh explain`` and the
deploy plan's semantic diff can say how it came to be.
"""
from __future__ import annotations

from typing import Optional

from muh.derive.model import Resolved
from muh.schema.base import Model


class MoeTile(Model):
    BLOCK_SIZE_M: int
    BLOCK_SIZE_N: int
    BLOCK_SIZE_K: int
    GROUP_SIZE_M: int
    num_warps: int
    num_stages: int


class MoePlan(Model):
    file_name: str
    """vLLM's rule: ``E={E},N={N},device_name={name}[,dtype=…].json``."""
    experts: Resolved
    n: Resolved
    device_name: Resolved
    tiles: dict[int, MoeTile]
    """Batch size M → tile; keys cover every M the serving flags allow (nearest key is used)."""
    rule: Resolved
    """How the tiles were derived (a ``str`` value naming the rule, inputs as used)."""


class Edit(Model):
    id: str
    file: str
    anchor: str
    new: str
    line: int
    values: dict[str, Resolved]
    """tune_vllm key → the value this edit writes."""


class Rebind(Model):
    """A module-level name the plugin replaces: ``module.attr`` ← ``provider`` (``pkg.mod:callable``)."""

    name: str
    module: str
    attr: str
    provider: str
    generated: bool = False
    """The provider ships inside the plugin (e.g. the MoE default config) rather than elsewhere."""


class VllmPlan(Model):
    deploy: str
    hardware: str
    engine: str
    engine_version: str
    version_guard: str
    """The ``major.minor.patch`` the plugin accepts at run time (forks keep the release number)."""
    base_image: str
    concurrency: int
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    tuned: dict[str, Resolved]
    """Every tuned value by dotted name (``serve.max_num_seqs``, ``moe.tiles.1.BLOCK_SIZE_M`` …)."""
    edits: tuple[Edit, ...]
    moe: Optional[MoePlan] = None
    rebinds: tuple[Rebind, ...] = ()
    needs_triton: bool = False
    folder: str = "muh"
    """Where the non-root files live in the deployed repository (the Dockerfile's COPY source)."""
    kernels: bool = False
    """muh's generated kernels are built into the image (ops served by muh)."""
    py_compile: tuple[str, ...] = ()
    """Files (relative to site-packages) the image build byte-compiles after patching."""
