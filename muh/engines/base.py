"""The engine interface: what an engine plug-in supplies to derive (its codegen and check packages plug into
their stages by the convention of ``muh.engines.PARTS``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

from muh.derive.model import DeployPlan
from muh.diagnostics import MuhError
from muh.engines.variant import Variant, load_variants

Plan = DeployPlan
"""What an engine's resolve returns: a typed plan (``deploy``, ``hardware``, ``engine``, ``engine_version``,
``tuned`` with provenance) that derive stores in ``Derived.deploy`` and codegen only renders; an engine's
plan subclasses it with what its emitters need (``muh.engines.vllm.derive.plan.VllmPlan``)."""


class FetchFailed(MuhError):
    """An engine's ``fetch`` could not download or verify what it fetches (`muh fetch-engine` exits 1); any
    other MuhError from ``fetch`` is bad input (exit 2)."""


class TuningPoint(Protocol):
    """One key of a deploy block's ``tune { … }`` as the editor shows it."""

    kind: str
    doc: str


class ServeOption(Protocol):
    """One option of the engine's server as the editor shows it (a ``serve { … }`` key)."""

    dest: str
    """The ``serve`` key (``max_num_seqs``)."""
    kind: str
    """switch | optional_bool | bool | value | list | append"""
    type: str | None
    choices: tuple | None
    default: object
    where: str
    """Where the engine defines it (file:line)."""

    @property
    def long(self) -> str:
        """The option's long spelling (``--max-num-seqs``)."""


class FlagTable(Protocol):
    """The exact CLI a variant accepts for sure (what ``flag_table`` returns)."""

    options: Sequence[ServeOption]


@dataclass(frozen=True)
class EnginePlugin:
    name: str
    package: str
    """The engine folder's module (its ``__init__``'s ``__name__``, e.g. ``muh.engines.vllm``): its later
    stages' parts are ``<package>.codegen`` and ``<package>.check`` (``muh.engines.PARTS``)."""
    folder: Path
    """The folder of the engine's ``<name>-<version>.json`` variant files."""
    resolve: Callable
    """``(spec, deploy, variant) -> (Plan | None, diagnostics)``: flags checked, values derived, points reached/dead."""
    flag_table: Callable[[Variant], FlagTable | None]
    """``(variant) -> FlagTable``: the exact CLI the variant accepts for sure (None: muh has no table for it)."""
    aliases: Callable[[str], str | None] = lambda v: None
    """A shorthand version → the variant's exact version (``0.6.3`` → ``0.6.3.post1``)."""
    tuning_points: Callable[[], Mapping[str, TuningPoint]] = lambda: {}
    """The ``tune { … }`` keys the engine knows (name → kind and doc): the editor's completions and hovers."""
    fetch: Callable[[Variant], str] | None = None
    """``(variant) -> one line``: download what the engine's check reads for the variant into muh's cache
    (`muh fetch-engine`); raises MuhError (``FetchFailed`` when the download or its verification fails).
    None: the check reads nothing that has to be fetched."""

    probe_data: Callable[[Any, Plan | None, Variant | None], dict] | None = None
    """``(spec, plan or None, the plan's variant or None) -> dict``: what the probe bundle's engine probe asks about
    the served engine
    (``engine``: its top-level package, ``version``, anchors, markers, …; muh.codegen.probe writes it beside
    the probe's code). None: the probe asks nothing about this engine."""
    complete: Callable[[Any, Any, Plan], tuple[Plan, list]] | None = None
    """``(spec, derived, plan) -> (plan, diagnostics)``: what the engine decides once the spec's kernels are derived
    (``Derived.algorithms``; vLLM: whether the image ships muh's ops). None: nothing."""
    tuned_file: str | None = None
    """The generated file (relative to the build folder) holding every tuned value with its provenance as
    ``{"tuned": {key: {"value": …}}}``: what `muh deploy` diffs between the repository and the build."""
    tuned_prefix: str = ""
    """The prefix of the plan's tuned keys of the deploy block's ``tune { … }`` values (``vllm``: a key
    ``paged_attention.partition_size`` is explained as ``deploy.vllm.paged_attention.partition_size``)."""

    def variants(self) -> dict[str, Variant]:
        return {v: x for v, x in load_variants(self.folder).items() if x.engine == self.name}

    def variant(self, version: str) -> Variant | None:
        known = self.variants()
        return known.get(version) or known.get(self.aliases(version) or "")
