"""Emitter `computility`: ``Dockerfile``, ``computility-run.yaml`` and the start script, in the platform's shapes.

Both root files are written for the deployed layout: the repository root holds them and muh's other output lives
under ``<folder>/`` (``muh/`` by default), which the Dockerfile copies to the launch's root (``/opt/muh``). The
Dockerfile runs the engine's build-time steps (``Launch.image_steps``), then builds muh's probe; the run file's
command is the start script with the server's argv (muh/codegen/start). Values were checked in resolve (no line
breaks or control characters, bounded length); here they are only escaped for their language: JSON for the
exec-form CMD, YAML double-quoted scalars for the run file, shell words in the scripts.
"""
from __future__ import annotations

import json

from muh.codegen import start
from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.probe.image import PROBE_BUILD_DIR, PROBE_BUILD_TIMEOUT_S, probe_bundle, probe_step
from muh.codegen.templates import render

PKG = "muh.platforms.computility.codegen"
NAME = "computility"


def exec_form(words) -> str:
    """The JSON array of a Dockerfile exec-form instruction. Quotes and backslashes inside a word are
    written as ``\\u0022`` and ``\\u005c``: the same JSON to Docker, and hadolint's parser, which
    misreads ``\\\\\\"`` (DL3025), reads it as JSON too."""
    return json.dumps(list(words), ensure_ascii=True).replace("\\\\", "\\u005c").replace('\\"', "\\u0022")


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    plan = ctx.derived.deploy
    if plan is None or plan.launch is None or plan.platform != NAME:
        return []
    launch = plan.launch
    probe, probe_files = probe_bundle(ctx)
    steps = launch.steps + ((probe_step(),) if probe else ())
    command = start.command(launch)
    docker = render(PKG, "Dockerfile.j2", header=ctx.header_text(), variant=plan.engine + " " + plan.engine_version,
                    hardware=plan.hardware, base_image=launch.base_image, folder=launch.folder, root=launch.root,
                    image_steps=launch.image_steps, probe=probe, probe_build=PROBE_BUILD_DIR,
                    probe_timeout_s=PROBE_BUILD_TIMEOUT_S, cmd=exec_form(command))
    run = render(PKG, "computility-run.yaml.j2", header=ctx.header_text(), concurrency=launch.concurrency,
                 command=command, env=launch.env)
    files = [GeneratedFile("Dockerfile", docker), GeneratedFile("computility-run.yaml", run)]
    if launch.script:
        files.append(GeneratedFile(start.PATH, start.script(launch, ctx.header_text(), steps), executable=True))
    return files + probe_files
