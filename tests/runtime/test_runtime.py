"""muh.runtime without a GPU: lazy imports, clear errors, content-hash caching, the C library."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_import_pulls_in_neither_torch_nor_the_compiler_stages():
    code = (
        "import sys, muh.runtime, muh.families.calls, muh.runtime.build, muh.runtime.library; "
        "bad = [m for m in ('torch', 'pydantic', 'lark', 'muh.codegen', 'muh.schema') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_no_default_kernels_is_a_clear_error(monkeypatch):
    from muh.runtime import MuhRuntimeError, library

    monkeypatch.delenv("MUH_KERNELS_DIR", raising=False)
    library.set_default(None)
    with pytest.raises(MuhRuntimeError, match="no kernels loaded"):
        library.default()


def test_load_refuses_a_folder_without_kernels(tmp_path):
    from muh.runtime import MuhRuntimeError, load

    with pytest.raises(MuhRuntimeError, match="holds no generated kernels"):
        load(tmp_path, backend="capi", arch="sm_90")


def test_content_hash_follows_the_sources(tmp_path):
    from bench import presets
    from muh.codegen.kernels import emitter
    from muh.runtime import build

    emitter.write(presets.h200(), tmp_path)
    a = build.content_hash(tmp_path, "-O3")
    assert a == build.content_hash(tmp_path, "-O3")
    assert a != build.content_hash(tmp_path, "-O2")
    f = tmp_path / "kernels" / "reduce.cu"
    f.write_text(f.read_text() + "\n// edit\n")
    assert a != build.content_hash(tmp_path, "-O3")


@pytest.mark.nvcc
def test_capi_library_builds_loads_and_refuses_without_a_device(nvcc, tmp_path, monkeypatch):
    from bench import presets
    from muh import families
    from muh.codegen.kernels import emitter
    from muh.runtime import build
    from muh.runtime.library import Kernels

    monkeypatch.setenv("MUH_CACHE_DIR", str(tmp_path / "cache"))
    emitter.write(presets.bi100().emulated(64), tmp_path / "gen")
    lib = build.build_capi(tmp_path / "gen", arch="sm_90")
    assert build.build_capi(tmp_path / "gen", arch="sm_90") == lib  # cached
    k = Kernels.from_library(lib, families.api())
    assert (k.spec_name, k.warp_size, k.physical_warp_size) == ("bi100-emu64", 64, 32)
    rc = k.raw("muh_check_device")()
    if rc:  # no usable GPU here: the message says what CUDA said
        assert k.last_error().startswith("muh: ")
