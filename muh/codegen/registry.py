"""Every emitter, one line each. Order does not matter: paths must not collide."""
from __future__ import annotations

from muh.codegen.base import Emitter

EMITTERS: dict[str, Emitter] = {}


def _load() -> dict[str, Emitter]:
    if EMITTERS:
        return EMITTERS
    from muh.codegen import summary

    EMITTERS["summary"] = summary.emit
    return EMITTERS


def emitters() -> dict[str, Emitter]:
    return _load()
