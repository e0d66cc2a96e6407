"""The engine interface: what an engine plug-in supplies to muh's stages."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from muh.derive.variant import Variant, load_variants


@dataclass(frozen=True)
class EnginePlugin:
    name: str
    folder: Path
    """The plug-in's folder (its ``variant-*.json`` files live there)."""
    resolve: Callable
    """``(spec, deploy, variant) -> (plan | None, diagnostics)``: flags checked, values derived, points reached/dead."""
    emit: Callable
    """``(ctx, plan) -> list[GeneratedFile]``: the engine's own files (plugin, ops provider, patches, configs)."""
    image: Callable
    """``(ctx, plan) -> ImageSteps``: the required and optional steps of the image build and the run file."""
    flag_table: Callable
    """``(variant) -> EngineInfo``: the exact CLI the variant accepts for sure."""
    check: Callable
    """``(ctx, plan, files) -> (cases, problems, notes)``: the engine's part of ``muh check``."""
    aliases: Callable[[str], str | None] = lambda v: None
    """A shorthand version → the variant's exact version (``0.6.3`` → ``0.6.3.post1``)."""

    def variants(self) -> dict[str, Variant]:
        return load_variants(self.folder)

    def variant(self, version: str) -> Variant | None:
        known = self.variants()
        return known.get(version) or known.get(self.aliases(version) or "")
