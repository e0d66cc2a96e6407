"""The vLLM engine's part of codegen: its emitters (``muh.engines.PARTS``; collected by muh/codegen/registry.py)."""

from __future__ import annotations

from muh.codegen.base import Emitter
from muh.engines.vllm.codegen import emit, image

EMITTERS: dict[str, Emitter] = {
    "vllm": emit.emit,  # the plugin, patches, MoE configs, deploy.json
    "vllm_image": image.emit,  # image/steps.sh: the engine's build-time steps in a platform's image
}
