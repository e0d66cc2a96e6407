"""The image and its start script (``Dockerfile``, ``image/start.sh``): what every platform runs to start a plan's
server
(``DeployPlan.launch``, muh.derive.model.Launch), rendered the same way for every platform and engine.

The platform's command is ``bash <root>/image/start.sh <the server's argv>``: the server's flags stay
visible in the platform's file (the run file, the Deployment). The script runs the launch's steps in order
(a required one stops the container; a tolerated one logs one line), leaves out each conditional flag group
the image build did not find in the engine (the words the argv holds at the group's indices; a run file
edited by hand there keeps its words and says so), adds the words steps gave, and ``exec``s the server.
muh does all the quoting: every word passes through ``shlex.quote`` once, a path in the image's muh folder is
``"${MUH_ROOT}"/<quoted path>``; shellcheck-clean (tests/codegen/test_start_script.py).
"""

from __future__ import annotations

import json
import shlex

from muh.codegen.templates import render
from muh.derive.model import InRoot, Launch, StartStep

PKG = "muh.codegen.start"
PATH = "image/start.sh"
"""Where the script lies in the build (and under the image's muh folder)."""


def word(w) -> str:
    """One shell word: a literal quoted once, a path in the image's muh folder under ``$MUH_ROOT``."""
    if isinstance(w, InRoot):
        return '"${MUH_ROOT}"/' + shlex.quote(w.path)
    return shlex.quote(str(w))


def words(ws) -> str:
    return " ".join(word(w) for w in ws)


def step_command(s: StartStep) -> str:
    cmd = words(s.argv)
    if s.timeout_s:
        cmd = f"timeout {int(s.timeout_s)} {cmd}"
    if s.output:
        cmd += f" > {shlex.quote(s.output)} 2>&1"
    elif s.stderr_to_stdout:
        cmd += " 2>&1"
    return cmd


def skips(s: StartStep) -> list[tuple[str, str]]:
    """(shell test, the line logged when it holds) that skip the step: opt-in not set, a file it needs absent."""
    out = []
    if s.opt_in:
        out.append((f'[ "${{{s.opt_in}:-0}}" != 1 ]', f"{s.name} off (set {s.opt_in}=1 to run it at start)"))
    out += [(f"[ ! -e {word(n)} ]", f"{s.name} skipped: the image build did not make {n.path}") for n in s.needs]
    return out


def script(launch: Launch, header: str, steps: tuple[StartStep, ...] | None = None) -> str:
    """The start script of ``launch``; ``steps``: the platform's steps first, then the launch's (default: its own)."""
    steps = launch.steps if steps is None else steps
    rows = [
        dict(
            name=s.name,
            cmd=step_command(s),
            required=s.required,
            on_failure=s.on_failure,
            adds=words(s.adds),
            skip=skips(s),
            on_success=s.on_success,
        )
        for s in steps
    ]
    groups = [
        dict(
            id=g.id,
            marker=word(InRoot(path=g.marker)),
            pairs=" ".join(f"{i} {shlex.quote(launch.argv[i])}" for i in g.at),
        )
        for g in launch.groups
    ]
    return render(PKG, "start.sh.j2", header=header, root=launch.root, steps=rows, groups=groups)


def command(launch: Launch) -> list[str]:
    """The platform's command: the start script with the server's argv, or the argv alone (no script)."""
    return ["bash", f"{launch.root}/{PATH}", *launch.argv] if launch.script else list(launch.argv)


def exec_form(words) -> str:
    """The JSON array of a Dockerfile exec-form instruction. Quotes and backslashes inside a word are
    written as ``\\u0022`` and ``\\u005c``: the same JSON to Docker, and hadolint's parser, which
    misreads ``\\\\\\"`` (DL3025), reads it as JSON too."""
    return json.dumps(list(words), ensure_ascii=True).replace("\\\\", "\\u005c").replace('\\"', "\\u0022")


def dockerfile(ctx, plan, probe: bool, purpose: str) -> str:
    """The image every container platform builds: the base image, muh's folder copied to the launch's root, the
    engine's build-time steps, muh's probe (``probe``: the image carries it), the start command as ``CMD``."""
    from muh.codegen.probe.image import PROBE_BUILD_DIR, PROBE_BUILD_TIMEOUT_S

    launch = plan.launch
    return render(
        PKG,
        "Dockerfile.j2",
        header=ctx.header_text(),
        purpose=purpose,
        variant=f"{plan.engine} {plan.engine_version}",
        hardware=plan.hardware,
        base_image=launch.base_image,
        folder=launch.folder,
        root=launch.root,
        image_steps=launch.image_steps,
        probe=probe,
        probe_build=PROBE_BUILD_DIR,
        probe_timeout_s=PROBE_BUILD_TIMEOUT_S,
        cmd=exec_form(command(launch)),
    )
