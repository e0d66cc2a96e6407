"""Every emitter, one line each (its module; imported on first use). Order does not matter: paths must
not collide. Emitters may ask the registry what else is registered (the names are data, so that is no
import circle)."""
from __future__ import annotations

import importlib

from muh.codegen.base import Emitter

MODULES = {
    "summary": "muh.codegen.summary",
    "cxx_tuning": "muh.codegen.cxx.tuning",
    "vllm": "muh.engines.vllm.codegen.emit",
    "docker": "muh.engines.vllm.codegen.image",
    "ops": "muh.codegen.ops",
    "ops_package": "muh.codegen.ops_package",
    "kernels": "muh.codegen.kernels",
}
EMITTERS: dict[str, Emitter] = {}


def _load() -> dict[str, Emitter]:
    if not EMITTERS:
        for name, module in MODULES.items():
            EMITTERS[name] = importlib.import_module(module).emit
    return EMITTERS


def emitters() -> dict[str, Emitter]:
    return _load()
