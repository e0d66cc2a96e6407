"""Emitter `computility`: ``Dockerfile``, ``computility-run.yaml`` and the start script, in the platform's shapes.

Both root files are written for the deployed layout: the repository root holds them and muh's other output lives
under ``<folder>/`` (``muh/`` by default), which the Dockerfile copies to the launch's root (``/opt/muh``). The
Dockerfile runs the engine's build-time steps (``Launch.image_steps``), then builds muh's probe; the run file's
command is the start script with the server's argv (muh/codegen/start). Values were checked in resolve (no line
breaks or control characters, bounded length); here they are only escaped for their language: JSON for the
exec-form CMD, YAML double-quoted scalars for the run file, shell words in the scripts.
"""

from __future__ import annotations

from muh.codegen import start
from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.probe.image import probe_bundle, probe_step
from muh.codegen.templates import render

PKG = "muh.platforms.computility.codegen"
NAME = "computility"


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    plan = ctx.derived.deploy
    if plan is None or plan.launch is None or plan.platform != NAME:
        return []
    launch = plan.launch
    probe, probe_files = probe_bundle(ctx)
    steps = launch.steps + ((probe_step(),) if probe else ())
    command = start.command(launch)
    docker = start.dockerfile(ctx, plan, probe, purpose="competition")
    run = render(
        PKG,
        "computility-run.yaml.j2",
        header=ctx.header_text(),
        concurrency=launch.concurrency,
        command=command,
        env=launch.env,
    )
    files = [GeneratedFile("Dockerfile", docker), GeneratedFile("computility-run.yaml", run)]
    if launch.script:
        files.append(GeneratedFile(start.PATH, start.script(launch, ctx.header_text(), steps), executable=True))
    return files + probe_files
