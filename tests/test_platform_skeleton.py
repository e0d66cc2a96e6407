"""The recipe of docs/architecture.md "Adding a platform", done: a throw-away platform folder (the files the recipe
lists, no others) and its one registry line make `muh build` of a spec that names it run its emitter — the same vLLM
plan, started by the same start script, in another platform's files — and no other platform's."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path

import pytest

from muh import platforms
from muh.pipeline import load_file, render

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
NAME = "sketchhost"  # the recipe's `dockerhost`, under a name no real platform has

FILES = {
    "__init__.py": '"""Platform `sketchhost`: a plain Docker host (a test)."""\n',
    "platform.json": json.dumps(
        {
            "name": NAME,
            "description": "a plain Docker host",
            "root_files": ["run.sh"],
            "sources": {"root_files": "tests/test_platform_skeleton.py"},
        }
    ),
    "codegen/__init__.py": """
import shlex

from muh.codegen import start
from muh.codegen.base import GeneratedFile


def emit(ctx):
    plan = ctx.derived.deploy
    if plan is None or plan.launch is None or plan.platform != "sketchhost":
        return []
    launch = plan.launch
    run = "docker run --rm muh-image " + " ".join(shlex.quote(w) for w in start.command(launch))
    return [GeneratedFile("run.sh", ctx.header("#") + "\\n" + run + "\\n", executable=True),
            GeneratedFile(start.PATH, start.script(launch, ctx.header_text()), executable=True)]


EMITTERS = {"sketchhost": emit}
""",
}


def recipe() -> tuple[list[str], str]:
    """The files the doc's Docker-host folder lists (relative to it) and its registry line."""
    section = DOC.read_text(encoding="utf-8").split("## Adding a platform", 1)[1].split("\n## ", 1)[0]
    block = section.split("```", 2)[1]
    files = re.findall(r"^muh/platforms/dockerhost/(\S+)", block, re.M)
    line = re.search(r"the line `([^`]+)` in\s+`REGISTRY`", section)
    return files, line.group(1) if line else ""


def test_the_skeleton_is_the_recipe():
    files, line = recipe()
    assert sorted(files) == sorted(FILES)
    assert line == '"dockerhost": PlatformPlugin("dockerhost", "muh.platforms.dockerhost", _HERE / "dockerhost"),'


@pytest.fixture
def sketch(tmp_path, monkeypatch):
    """The skeleton written under a temporary muh/platforms/ path entry, imported, and given its one line."""
    root = tmp_path / NAME
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip("\n"), encoding="utf-8")
    monkeypatch.setattr(platforms, "__path__", [*platforms.__path__, str(tmp_path)])
    importlib.invalidate_caches()
    try:
        line = f'"{NAME}": PlatformPlugin("{NAME}", "muh.platforms.{NAME}", _HERE / "{NAME}")'
        entry = eval("{" + line + "}", {"PlatformPlugin": platforms.PlatformPlugin, "_HERE": tmp_path})
        for k, v in entry.items():
            monkeypatch.setitem(platforms.REGISTRY, k, v)  # the one line
        yield root
    finally:
        for m in [m for m in sys.modules if m == f"muh.platforms.{NAME}" or m.startswith(f"muh.platforms.{NAME}.")]:
            del sys.modules[m]


def test_build_runs_the_new_platform_s_emitter(sketch, tmp_path):
    text = (ROOT / "specs" / "baseline.muh").read_text()
    spec = tmp_path / "b.muh"
    spec.write_text(re.sub(r"^(deploy .* \{)$", rf"\1\n  platform = {NAME}", text, count=1, flags=re.M))
    loaded = load_file(spec)
    assert loaded.derived.deploy.platform == NAME
    files = {f.path: f.content for f in render(loaded)}
    assert "Dockerfile" not in files and "computility-run.yaml" not in files  # the competition platform's: not here
    assert (
        "docker run --rm muh-image bash /opt/muh/image/start.sh python3 -m vllm.entrypoints.openai.api_server"
        in files["run.sh"]
    )
    assert "image/steps.sh" in files and "vllm/deploy.json" in files  # the engine's files, as on any platform
    assert platforms.get(NAME).facts.root_files == ("run.sh",)
