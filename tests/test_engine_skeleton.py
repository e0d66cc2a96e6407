"""The recipe of docs/architecture.md "Adding an engine", done: a throw-away engine folder (the files the
recipe lists, no others) and its one registry line make `muh build` run its emitter, `muh check` its check and `muh
explain` its plan."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest
import yaml
from lab_card import hardware

from muh import engines
from muh.check import run_checks
from muh.codegen.base import BuildContext
from muh.pipeline import load_file, render

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
NAME = "sketch"  # the recipe's `sglang`, under a name no real engine has

FILES = {
    "__init__.py": """
from pathlib import Path

from muh.engines.base import EnginePlugin
from muh.engines.sketch.derive.build_plan import resolve

VARIANTS = Path(__file__).parent / "variants"


def flag_table(variant):
    return None


ENGINE = EnginePlugin(name="sketch", package=__name__, folder=VARIANTS, resolve=resolve, flag_table=flag_table)
""",
    "variants/sketch-0.4.json": '{"engine": "sketch", "version": "0.4", "base": "0.4", '
    '"description": "a test engine", "source": "tests/test_engine_skeleton.py"}\n',
    "derive/__init__.py": "",
    "derive/build_plan.py": """
from muh.derive.model import Launch, Resolved
from muh.diagnostics import Diagnostic
from muh.engines.base import Plan


class SketchPlan(Plan):
    command: tuple[str, ...]


def resolve(spec, deploy, variant):
    if "port" not in deploy.serve:
        where = spec.span_of(("deploys", deploy.name))
        return None, [Diagnostic("E-DEPLOY-KEY", "the sketch engine needs a port", where)]
    args = tuple(f"--{k.replace('_', '-')}={v}" for k, v in sorted(deploy.serve.items()))
    tuned = {f"serve.{k}": Resolved(value=str(v), origin="spec", rule="spec") for k, v in deploy.serve.items()}
    command = ("python3", "-m", "sketch.server", *args)
    launch = Launch(argv=command, base_image=deploy.base_image, folder=deploy.folder, port=int(deploy.serve["port"]))
    return SketchPlan(deploy=deploy.name, hardware=deploy.on, engine=variant.engine, engine_version=variant.version,
                      command=command, tuned=tuned, launch=launch), []
""",
    "codegen/__init__.py": """
from muh.codegen.base import GeneratedFile
from muh.engines.sketch.derive.build_plan import SketchPlan


def emit(ctx):
    plan = ctx.derived.deploy
    if not isinstance(plan, SketchPlan):
        return []
    return [GeneratedFile("sketch/serve.sh", ctx.header("#") + "\\nexec " + " ".join(plan.command) + "\\n")]


EMITTERS = {"sketch": emit}
""",
    "check/__init__.py": """
CALLS = []


def check(ctx, plan, files):
    CALLS.append((plan.engine, sorted(files)))
    ok = files["sketch/serve.sh"].rstrip().endswith(" ".join(plan.command))
    return [f"sketch/serve.sh: {'starts' if ok else 'does not start'} the server"], 0 if ok else 1, []
""",
}


def recipe() -> tuple[list[str], str]:
    """The files the doc's SGLang folder lists (relative to it) and its registry line."""
    section = DOC.read_text(encoding="utf-8").split("## Adding an engine", 1)[1].split("\n## ", 1)[0]
    block = section.split("```", 2)[1]
    files = re.findall(r"^muh/engines/sglang/(\S+)", block, re.M)
    line = re.search(r"the line `([^`]+)` in `REGISTRY`", section)
    return files, line.group(1) if line else ""


def test_the_skeleton_is_the_recipe():
    files, line = recipe()
    assert sorted(f.replace("sglang", NAME) for f in files) == sorted(FILES)
    assert line == '"sglang": sglang.ENGINE,'


@pytest.fixture
def sketch(tmp_path, monkeypatch):
    """The skeleton written under a temporary muh/engines/ path entry, imported, and given its one line."""
    root = tmp_path / NAME
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip("\n"), encoding="utf-8")
    monkeypatch.setattr(engines, "__path__", [*engines.__path__, str(tmp_path)])
    importlib.invalidate_caches()
    try:
        module = importlib.import_module(f"muh.engines.{NAME}")
        monkeypatch.setitem(engines.REGISTRY, NAME, module.ENGINE)  # the one line
        yield module
    finally:
        for m in [m for m in sys.modules if m == f"muh.engines.{NAME}" or m.startswith(f"muh.engines.{NAME}.")]:
            del sys.modules[m]


SPEC = (
    "muh 1\n\n"
    + hardware()
    + """
deploy web on lab {
  base_image = "example.org/sketch:0.4"
  engine = sketch "0.4"
  serve { port = 8000  max_running_requests = 4 }
}
"""
)


def test_build_runs_the_new_engine_s_emitter_and_check_its_check(sketch, tmp_path):
    spec = tmp_path / "web.muh"
    spec.write_text(SPEC, encoding="utf-8")
    loaded = load_file(spec)
    assert type(loaded.derived.deploy).__name__ == "SketchPlan"
    files = {f.path: f.content for f in render(loaded)}
    assert files["sketch/serve.sh"].endswith("exec python3 -m sketch.server --max-running-requests=4 --port=8000\n")
    assert not any(p.startswith("vllm/") for p in files)  # vLLM's emitters render only its plans
    # the image on the shared platform (computility, the default): its Dockerfile, run file and start script
    assert "FROM example.org/sketch:0.4\n" in files["Dockerfile"] and "image/steps.sh" not in files
    run = yaml.safe_load(files["computility-run.yaml"])["command"]
    assert run == [
        "bash",
        "/opt/muh/image/start.sh",
        "python3",
        "-m",
        "sketch.server",
        "--max-running-requests=4",
        "--port=8000",
    ]
    assert files["image/start.sh"].startswith("#!/usr/bin/env bash\n")
    check = importlib.import_module(f"muh.engines.{NAME}.check")
    [result] = run_checks(BuildContext(loaded.spec, loaded.derived), only=["deploy"])
    assert result.status == "pass", result.cases
    [(engine, checked)] = check.CALLS  # called once, with its engine's and its platform's files
    assert engine == NAME and {"sketch/serve.sh", "Dockerfile", "computility-run.yaml", "image/start.sh"} <= set(
        checked
    )
    from muh.explain import explain

    assert explain(loaded.derived, "deploy.serve", loaded.spec) == [
        "deploy web on lab (sketch 0.4)",
        "  serve.port = 8000    [spec]",
        "  serve.max_running_requests = 4    [spec]",
    ]


def test_the_new_engine_s_diagnostics_reach_the_build(sketch, tmp_path):
    from muh.diagnostics import MuhError

    spec = tmp_path / "web.muh"
    spec.write_text(SPEC.replace("port = 8000  ", ""), encoding="utf-8")
    loaded = load_file(spec)
    with pytest.raises(MuhError) as err:
        render(loaded)
    assert [d.code for d in err.value.diagnostics] == ["E-DEPLOY-KEY"]
    [result] = run_checks(BuildContext(loaded.spec, loaded.derived), only=["deploy"])
    assert result.status == "fail" and "the sketch engine needs a port" in "\n".join(result.cases)


def test_fetch_engine_knows_the_new_engine(sketch, cli):
    """`muh fetch-engine` reads the registry: the skeleton (no ``fetch``) has nothing to fetch."""
    code, out, err = cli("fetch-engine", NAME)
    assert code == 0 and out.strip() == f"{NAME}: nothing to fetch (its deploy check reads nothing from a download)", (
        out,
        err,
    )
