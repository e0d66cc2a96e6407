"""The platform interface: where a plan's server runs, and in which files (the competition's platform, a
Kubernetes cluster). A platform's facts are data (``platform.json`` in its folder); its ``codegen`` package
renders the plan's ``launch`` (muh.derive.model.Launch) into its files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from muh.schema.base import Model


class PlatformFacts(Model):
    """What muh knows about a platform (each fact cites its source)."""

    name: str
    description: str
    root_files: tuple[str, ...] = ()
    """Generated files that `muh deploy` writes at the repository root (every other one under its folder)."""
    model_mount: str = "/model"
    """Where the platform puts the model's weights in the container."""
    run_file: str | None = None
    """The file the platform reads the start command from (None: the platform's own objects)."""
    api_version: str | None = None
    """The platform's API release the generated objects are validated against (Kubernetes: ``1.30.0``)."""
    gpu_resources: dict[str, str] = {}
    """Hardware vendor → the resource name a container requests its cards by."""
    model_claim: str | None = None
    """The volume claim holding the model's weights (``{name}``: the deployment's name)."""
    start_seconds: int | None = None
    """How long the server may take to start before the platform's liveness check applies."""
    sources: dict[str, str] = {}
    """Fact → where it comes from."""


@dataclass(frozen=True)
class PlatformPlugin:
    name: str
    package: str
    """The platform folder's module (``muh.platforms.computility``): its codegen part is ``<package>.codegen``
    (exporting ``EMITTERS``, like an engine's)."""
    folder: Path

    @property
    def facts(self) -> PlatformFacts:
        return _facts(self.folder / "platform.json")


@lru_cache(maxsize=None)
def _facts(path: Path) -> PlatformFacts:
    return PlatformFacts.model_validate(json.loads(path.read_text(encoding="utf-8")))
