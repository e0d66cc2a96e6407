"""The computility platform's part of codegen: the image and the run file (collected by muh/codegen/registry.py)."""

from __future__ import annotations

from muh.codegen.base import Emitter
from muh.platforms.computility.codegen import image

EMITTERS: dict[str, Emitter] = {
    "computility": image.emit,  # Dockerfile, computility-run.yaml, image/start.sh, the probe bundle in the image
}
