"""Every emitter, one line each. Order does not matter: paths must not collide."""
from __future__ import annotations

from muh.codegen.base import Emitter

EMITTERS: dict[str, Emitter] = {}


def _load() -> dict[str, Emitter]:
    if EMITTERS:
        return EMITTERS
    from muh.codegen import summary

    EMITTERS["summary"] = summary.emit
    from muh.codegen.cxx import tuning as cxx_tuning
    EMITTERS["cxx_tuning"] = cxx_tuning.emit
    from muh.codegen.vllm import emit as vllm_emit
    EMITTERS["vllm"] = vllm_emit.emit
    from muh.codegen.docker import emit as docker_emit
    EMITTERS["docker"] = docker_emit.emit
    from muh.codegen import ops as ops_emit
    EMITTERS["ops"] = ops_emit.emit
    from muh.codegen import ops_package
    EMITTERS["ops_package"] = ops_package.emit
    from muh.codegen import kernels as kernels_emit
    EMITTERS["kernels"] = kernels_emit.emit
    return EMITTERS


def emitters() -> dict[str, Emitter]:
    return _load()
