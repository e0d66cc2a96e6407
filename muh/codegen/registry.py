"""Every emitter, one line each (plain imports: the layer test sees them). Order does not matter:
paths must not collide."""
from __future__ import annotations

from muh.codegen import kernels, ops, ops_package, summary
from muh.codegen.base import Emitter
from muh.codegen.cxx import tuning
from muh.engines.vllm.codegen import emit as vllm, image as docker

EMITTERS: dict[str, Emitter] = {
    "summary": summary.emit,
    "cxx_tuning": tuning.emit,
    "vllm": vllm.emit,          # the vLLM engine's files (plugin, patches, MoE configs, deploy.json)
    "docker": docker.emit,      # its image: Dockerfile, computility-run.yaml, image/steps.sh
    "ops": ops.emit,
    "ops_package": ops_package.emit,
    "kernels": kernels.emit,
}


def emitters() -> dict[str, Emitter]:
    return EMITTERS
