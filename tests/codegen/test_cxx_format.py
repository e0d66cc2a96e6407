"""Generated C++ is formatted by the pinned clang-format in muh's one style (muh/codegen/.clang-format),
deterministically, cached per content, within 120 columns; the static CUDA sources are kept formatted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from muh.codegen import cxx_format

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "muh" / "codegen"

UGLY = "namespace a{\nint f(int x){if(x){return 1;}\nreturn  2;}\n}\n"


def test_style_is_one_file_with_120_columns():
    assert cxx_format.STYLE == PKG / ".clang-format"
    assert "ColumnLimit: 120" in cxx_format.STYLE.read_text()
    assert not list(ROOT.glob("**/.clang-format*")) or {p for p in ROOT.glob("muh/**/.clang-format")} == {
        cxx_format.STYLE
    }


def test_static_sources_are_formatted():
    """Every static C++ source under muh/codegen/ and muh/families/ (each family's folder) is as
    clang-format leaves it (run `clang-format -i --style=file:muh/codegen/.clang-format <file>` after
    editing one)."""
    sources = sorted(
        p for d in (PKG, ROOT / "muh" / "families") for p in d.rglob("*") if p.suffix in cxx_format.SUFFIXES
    )
    assert any(p.name == "topk.cuh" for p in sources) and any(p.name == "scan_tile.cuh" for p in sources)
    r = subprocess.run(
        [cxx_format.executable(), "--dry-run", "--Werror", f"--style=file:{cxx_format.STYLE}", *map(str, sources)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]


def test_generated_cxx_fits_120_columns():
    """Every C++ file under generated/ (all bundled specs; test_generated_is_not_stale keeps it what
    `muh build` writes) stays within 120 columns."""
    files = [p for p in (ROOT / "generated").rglob("*") if p.suffix in cxx_format.SUFFIXES]
    assert len(files) > 50
    long = [
        f"{p.relative_to(ROOT)}:{i}: {len(line)}"
        for p in files
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) > 120
    ]
    assert not long, long[:10]


def test_format_is_deterministic_idempotent_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("MUH_CACHE_DIR", str(tmp_path / "cache"))
    once = cxx_format.format_many({"a.cu": UGLY, "b.h": UGLY})
    assert once["a.cu"] == once["b.h"] != UGLY
    assert "int f(int x) {" in once["a.cu"] and "return 2;" in once["a.cu"]
    assert cxx_format.format_many({"c.cuh": once["a.cu"]})["c.cuh"] == once["a.cu"]  # formatted stays as it is

    def no_formatter(*a, **k):
        raise AssertionError("a cached file was formatted again")

    monkeypatch.setattr(subprocess, "Popen", no_formatter)
    monkeypatch.setattr(subprocess, "run", no_formatter)
    assert cxx_format.format_many({"d.cu": UGLY}) == {"d.cu": once["a.cu"]}


def test_a_missing_formatter_is_a_diagnostic(monkeypatch):
    import importlib.util

    from muh.diagnostics import MuhError

    cxx_format.executable.cache_clear()
    cxx_format._identity.cache_clear()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "clang_format" else real(name, *a)
    )
    try:
        with pytest.raises(MuhError) as err:
            cxx_format.format_many({"a.cu": UGLY})
        (d,) = err.value.diagnostics
        assert d.code == "E-FORMAT" and f"clang-format=={cxx_format.VERSION}" in d.message
    finally:
        cxx_format.executable.cache_clear()
        cxx_format._identity.cache_clear()


def test_build_output_is_formatted(tmp_path):
    """`muh build` hands its C++ through the formatter: the kernel sources it writes are formatted."""
    from muh.pipeline import build

    _, files = build(ROOT / "specs" / "h200.muh", tmp_path / "out")
    cxx = {f.path: f.content for f in files if cxx_format.is_cxx(f.path)}
    assert "kernels/topk.cu" in cxx and "kernels/ops.cu" in cxx
    paths = [str(tmp_path / "out" / p) for p in cxx]
    r = subprocess.run(
        [cxx_format.executable(), "--dry-run", "--Werror", f"--style=file:{cxx_format.STYLE}", *paths],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-2000:]
