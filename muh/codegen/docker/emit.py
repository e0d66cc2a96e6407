"""Emitter `docker`: ``Dockerfile`` and ``computility-run.yaml`` in exactly the platform's shapes.

Both are written for the deployed layout: the repository root holds these two files and muh's
other output lives under ``<folder>/`` (``muh/`` by default), which the Dockerfile copies to
``/opt/muh``. Values were checked in resolve (no line breaks or control characters, bounded
length); here they are only escaped for their language: JSON for the exec-form CMD, YAML
double-quoted scalars for the run file, shell words for paths.
"""
from __future__ import annotations

import json

from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.templates import render
from muh.codegen.vllm.emit import dist_info, patch_name, plans

PKG = "muh.codegen.docker"
IMAGE_ROOT = "/opt/muh"


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    files: list[GeneratedFile] = []
    for plan in plans(ctx):
        patches = [patch_name(i, e.id) for i, e in enumerate(plan.edits, 1)]
        moe_files = [f"vllm/moe_configs/{plan.moe.file_name}"] if plan.moe else []
        docker = render(
            PKG, "Dockerfile.j2", header=ctx.header_text(), engine=f"{plan.engine} {plan.engine_version}",
            hardware=plan.hardware, base_image=plan.base_image, folder=plan.folder, root=IMAGE_ROOT,
            patches=patches, py_compile=plan.py_compile, moe_files=moe_files, needs_triton=plan.needs_triton,
            cmd=json.dumps(list(plan.command), ensure_ascii=True), dist_info=dist_info(),
        )
        run = render(PKG, "computility-run.yaml.j2", header=ctx.header_text(), concurrency=plan.concurrency,
                     command=plan.command, env=plan.env)
        files += [GeneratedFile("Dockerfile", docker), GeneratedFile("computility-run.yaml", run)]
    return files
