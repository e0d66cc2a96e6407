"""The vLLM-family implementation of the engine interface (``muh.codegen.engines.base.EnginePlugin``).

Stock vLLM and the EngineX fork share it; everything that differs is read from the ``Variant``.
"""
from __future__ import annotations

from muh.codegen.vllm.engine import EngineInfo, load_engine
from muh.codegen.vllm.resolve import resolve  # noqa: F401  (the plug-in's resolve step)


def flag_table(variant) -> EngineInfo:
    return load_engine(variant.base)


def emit(ctx, plan):
    from muh.codegen.vllm.emit import engine_files

    return engine_files(ctx, plan)


def image(ctx, plan):
    from muh.codegen.docker.emit import image_steps

    return image_steps(ctx, plan)


def check(ctx, plan, files):
    from muh.check.deploy import engine_cases

    return engine_cases(ctx, plan, files)
