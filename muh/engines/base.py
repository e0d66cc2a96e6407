"""The engine interface: what an engine plug-in supplies to derive (its codegen and check packages plug into
their stages by the convention of ``muh.engines.PARTS``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Protocol

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
    flag_table: Callable
    """``(variant) -> EngineInfo``: the exact CLI the variant accepts for sure."""
    aliases: Callable[[str], str | None] = lambda v: None
    """A shorthand version → the variant's exact version (``0.6.3`` → ``0.6.3.post1``)."""
    tuning_points: Callable[[], Mapping[str, TuningPoint]] = lambda: {}
    """The ``tune { … }`` keys the engine knows (name → kind and doc): the editor's completions and hovers."""
    fetch: Callable[[Variant], str] | None = None
    """``(variant) -> one line``: download what the engine's check reads for the variant into muh's cache
    (`muh fetch-engine`); raises MuhError (``FetchFailed`` when the download or its verification fails).
    None: the check reads nothing that has to be fetched."""

    def variants(self) -> dict[str, Variant]:
        return {v: x for v, x in load_variants(self.folder).items() if x.engine == self.name}

    def variant(self, version: str) -> Variant | None:
        known = self.variants()
        return known.get(version) or known.get(self.aliases(version) or "")
