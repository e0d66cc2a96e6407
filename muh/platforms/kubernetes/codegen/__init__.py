"""The kubernetes platform's part of codegen (collected by muh/codegen/registry.py)."""

from __future__ import annotations

from muh.codegen.base import Emitter
from muh.platforms.kubernetes.codegen import manifests

EMITTERS: dict[str, Emitter] = {
    "kubernetes": manifests.emit,  # Dockerfile, kubernetes/deployment.yaml, kubernetes/service.yaml, image/start.sh
}
