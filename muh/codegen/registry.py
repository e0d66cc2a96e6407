"""Every emitter: muh's own, one line each, every registered engine's (its folder's
``codegen.EMITTERS``, by the convention of ``muh.engines.PARTS``) and every registered platform's (the same
convention, ``muh.platforms.stage_parts``). Plain imports and one
``stage_parts`` call, which the layer test reads as imports of each engine's codegen package.
Order does not matter: paths must not collide."""

from __future__ import annotations

from muh import engines, platforms
from muh.codegen import kernels, ops, ops_package, summary
from muh.codegen.base import Emitter
from muh.codegen.cxx import cub_hub, cub_tune, tuning

EMITTERS: dict[str, Emitter] = {
    "summary": summary.emit,
    "cxx_tuning": tuning.emit,
    "cxx_cub_hub": cub_hub.emit,
    "cxx_cub_tune": cub_tune.emit,
    "ops": ops.emit,
    "ops_package": ops_package.emit,
    "kernels": kernels.emit,
}


def engine_emitters() -> dict[str, dict[str, Emitter]]:
    """Engine name → its folder's emitters (engines sharing a folder share them)."""
    return {name: part.EMITTERS for name, part in engines.stage_parts("codegen").items()}


def platform_emitters() -> dict[str, dict[str, Emitter]]:
    """Platform name → its folder's emitters (``muh.platforms.stage_parts``)."""
    return {name: part.EMITTERS for name, part in platforms.stage_parts("codegen").items()}


def emitters() -> dict[str, Emitter]:
    out = dict(EMITTERS)
    for name, own in [*engine_emitters().items(), *platform_emitters().items()]:
        for key, emit in own.items():
            if key in out and out[key] is not emit:
                raise ValueError(f"`{name}`'s emitter `{key}` has the name of another emitter")
            out[key] = emit
    return out
