"""torch.ops.muh.*: one schema table for the C++ extension and the ctypes fallback (no torch needed);
with PyTorch installed (CPU build is enough): the extension compiles against it and links the ops
library, every schema gets a CUDA kernel, the fakes give the real output shapes, and without the
binding source the ctypes fallback serves the same schemas with a logged reason."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import textwrap

import pytest

from bench import presets
from muh.runtime import operators, operators_ctypes

HAVE_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(
    not HAVE_TORCH, reason="PyTorch is not installed (.ci/run installs a CPU build): the operator registration needs it"
)


def _binding_text(tmp_path) -> str:
    presets.write_ops("h200", tmp_path)
    return (tmp_path / operators.BINDING).read_text()


def test_one_schema_table_for_both_backends(tmp_path):
    text = _binding_text(tmp_path)
    cuda, autograd = text.split("TORCH_LIBRARY_IMPL(muh, ")[1:]
    assert sorted(re.findall(r'm\.impl\("(\w+)"', cuda)) == sorted(operators.SCHEMAS)
    # every operator says it is not differentiable (issue 42): the static binding applies PyTorch's fallback to
    # each operator the generated header lists (operators.SCHEMAS, written once)
    assert autograd.startswith("Autograd, m) { MUH_OPS_TORCH_OPERATORS(MUH_NOT_DIFFERENTIABLE) }")
    assert "autogradNotImplementedFallback()" in text.split("#define MUH_NOT_DIFFERENTIABLE", 1)[1].split("\n", 1)[0]
    header = (tmp_path / operators.BINDING).with_name("ops_torch_dtypes.h").read_text()
    listed = header.split("#define MUH_OPS_TORCH_OPERATORS(X)", 1)[1]
    assert sorted(re.findall(r"X\((\w+)\)", listed)) == sorted(operators.SCHEMAS)
    assert sorted(operators_ctypes.IMPLS) == sorted(operators.SCHEMAS)


def test_in_place_operators_declare_what_they_write():
    writes = {name: re.findall(r"Tensor\((\w)!\) (\w+)", s) for name, s in operators.SCHEMAS.items()}
    assert writes["rms_norm"] == [("a", "out")]
    assert writes["fused_add_rms_norm"] == [("a", "input"), ("b", "residual")]
    assert writes["gemma_fused_add_rms_norm"] == [("a", "input"), ("b", "residual")]
    assert [w for _, w in writes["topk_softmax"]] == ["topk_weights", "topk_ids", "token_expert_indicies"]
    for functional in ("gemma_rms_norm", "gated_rms_norm", "shared_expert_combine", "moe_topk_softmax"):
        assert writes[functional] == [] and "-> ()" not in operators.SCHEMAS[functional]


@needs_torch  # and nvcc; not marked `nvcc`: CI has nvcc but no PyTorch, so these skip there with the reason
@pytest.mark.slow
def test_extension_builds_and_registers_every_operator(tmp_path):
    gen = tmp_path / "gen"
    presets.write_ops("h200", gen)
    script = textwrap.dedent(f"""
        import torch
        from muh.runtime import operators
        loaded = operators.load({str(gen)!r}, arch="sm_90")
        assert loaded.backend == "extension", loaded
        for name in operators.SCHEMAS:
            assert torch._C._dispatch_has_kernel_for_dispatch_key("muh::" + name, "CUDA"), name
            assert torch._C._dispatch_has_kernel_for_dispatch_key("muh::" + name, "Autograd"), name  # issue 42
        m = torch.ops.muh
        xg = torch.empty(3, 4, 256, device="meta", dtype=torch.float16, requires_grad=True)
        try:  # not differentiable: backward says so (PyTorch's not-implemented autograd kernel)
            m.gemma_rms_norm(xg, torch.empty(256, device="meta", dtype=torch.float16), 1e-6).sum().backward()
            raise AssertionError("backward through muh::gemma_rms_norm did not raise")
        except RuntimeError as err:
            assert str(err) == "derivative for muh::gemma_rms_norm is not implemented", err
        x = torch.empty(3, 4, 256, device="meta", dtype=torch.float16)
        w = torch.empty(256, device="meta", dtype=torch.float16)
        assert m.gemma_rms_norm(x, w, 1e-6).shape == x.shape
        assert m.gated_rms_norm(x, x, w, 1e-6).shape == x.shape
        wt, ids = m.moe_topk_softmax(torch.empty(5, 256, device="meta"), 8, True, torch.int64)
        assert (wt.shape, wt.dtype, ids.dtype) == ((5, 8), torch.float32, torch.int64)
        print("ok", loaded.backend)
    """)
    r = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**_env(), "MUH_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert r.returncode == 0 and "ok extension" in r.stdout, r.stdout + r.stderr


@needs_torch  # and nvcc; not marked `nvcc`: CI has nvcc but no PyTorch, so these skip there with the reason
@pytest.mark.slow
def test_ctypes_fallback_serves_the_same_schemas_with_a_logged_reason(tmp_path):
    gen = tmp_path / "gen"
    presets.write_ops("h200", gen)
    (gen / operators.BINDING).unlink()  # the extension cannot build
    script = textwrap.dedent(f"""
        import logging, torch
        logging.basicConfig(level=logging.WARNING)
        from muh.runtime import operators
        loaded = operators.load({str(gen)!r}, arch="sm_90")
        assert loaded.backend == "ctypes" and "ops_torch.cpp is missing" in loaded.reason, loaded
        for name in operators.SCHEMAS:
            assert torch._C._dispatch_has_kernel_for_dispatch_key("muh::" + name, "CUDA"), name
        print("ok", loaded.backend)
    """)
    r = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**_env(), "MUH_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert r.returncode == 0 and "ok ctypes" in r.stdout, r.stdout + r.stderr
    assert "serving torch.ops.muh.* through ctypes" in r.stderr and "ops_torch.cpp is missing" in r.stderr


def _env() -> dict:
    import os

    return dict(os.environ)


def test_ctypes_structs_match_the_generated_header(tmp_path):
    """The ctypes fallback's argument structs have the C header's layout (offsets, size), read back from
    a program the host C compiler builds against the generated ops.h."""
    import ctypes
    import shutil

    from muh.runtime import llm

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("no host C compiler (cc/gcc): nvcc needs one, CI has it")
    gen = tmp_path / "gen"
    presets.write_ops("h200", gen)
    checks = []
    for struct, cls in (("muh_op_norm_args", llm.NormArgs), ("muh_op_gate_add_args", llm.GateAddArgs)):
        checks.append(f'printf("{struct} size %zu\\n", sizeof(struct {struct}));')
        for name, _ in cls._fields_:
            c_name = "in" if name == "in_" else name
            checks.append(f'printf("{struct} {name} %zu\\n", offsetof(struct {struct}, {c_name}));')
    src = tmp_path / "layout.c"
    src.write_text(
        '#include <stddef.h>\n#include <stdio.h>\n#include "muh/ops/ops.h"\nint main(void) {\n'
        + "\n".join(checks)
        + "\nreturn 0;\n}\n"
    )
    exe = tmp_path / "layout"
    subprocess.run([cc, "-I", str(gen / "include"), str(src), "-o", str(exe)], check=True)
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split("\n")
    want = []
    for struct, cls in (("muh_op_norm_args", llm.NormArgs), ("muh_op_gate_add_args", llm.GateAddArgs)):
        want.append(f"{struct} size {ctypes.sizeof(cls)}")
        want += [f"{struct} {name} {getattr(cls, name).offset}" for name, _ in cls._fields_]
    assert got[:-1] == want
