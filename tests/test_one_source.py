"""One fact, one place: the element types' codes, sizes and C types are written once
(muh/runtime/dtypes.py); the kernel families' types, policies and C interface once each
(muh/families/<name>.py); the LLM ops' C interface once (muh/runtime/c_api.py). This test reads the
sources and fails on a second table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from muh.runtime import dtypes

ROOT = Path(__file__).resolve().parents[1]
OWNER = ROOT / "muh" / "runtime" / "dtypes.py"
NAMES = set(dtypes.TABLE)
C_TYPES = {d.cxx for d in dtypes.TABLE.values()} | {d.storage for d in dtypes.TABLE.values()} | {"bf16", "half"}


def _tables(path: Path) -> list[str]:
    """Dict literals (or dict(...) calls) that map two or more type names to numbers or C type names."""
    out = []
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            pairs = list(zip(node.keys, node.values))
        else:
            continue
        hits = [
            (k.value, v.value)
            for k, v in pairs
            if isinstance(k, ast.Constant)
            and k.value in NAMES
            and isinstance(v, ast.Constant)
            and (type(v.value) is int or v.value in C_TYPES)
        ]
        if len(hits) >= 2:
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {dict(hits)}")
    return out


def test_no_second_dtype_table():
    files = [p for p in sorted((ROOT / "muh").rglob("*.py")) if p != OWNER]
    files += sorted((ROOT / "bench").rglob("*.py")) + sorted((ROOT / "tools").rglob("*.py"))
    found = [t for p in files for t in _tables(p)]
    assert not found, "dtype tables outside muh/runtime/dtypes.py (import it instead):\n" + "\n".join(found)


def test_the_check_finds_a_table(tmp_path):
    """The check is not blind: a copy of the old emitter's table is found."""
    p = tmp_path / "x.py"
    p.write_text('DTYPE_CODE = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 3}\n')
    global ROOT
    old, ROOT = ROOT, tmp_path
    try:
        assert len(_tables(p)) == 1
    finally:
        ROOT = old


def test_generated_enums_print_the_table():
    from bench import presets
    from muh.codegen.kernels import emitter

    api = dict(emitter.generate(presets.h200()))["include/muh/kernels/api.h"]
    for d in dtypes.TABLE.values():
        assert f"MUH_{d.name.upper()} = {d.code}," in api


def test_codes_are_unique_and_sizes_match_the_c_types():
    codes = [d.code for d in dtypes.TABLE.values()]
    assert len(set(codes)) == len(codes)
    # sizes against the C types (C's own sizes on this LP64 host; __half/bf16 are 2 bytes by definition)
    import ctypes

    c = {
        "float": ctypes.c_float,
        "double": ctypes.c_double,
        "int": ctypes.c_int,
        "long long": ctypes.c_longlong,
        "signed char": ctypes.c_byte,
        "unsigned char": ctypes.c_ubyte,
        "short": ctypes.c_short,
        "unsigned short": ctypes.c_ushort,
        "unsigned": ctypes.c_uint,
        "unsigned long long": ctypes.c_ulonglong,
    }
    for d in dtypes.TABLE.values():
        assert ctypes.sizeof(c[d.storage]) == d.size, d.name


def test_hardware_limits_have_one_owner(monkeypatch):
    """validate (E-WARP, E-THREADS), derive (E-SMEM) and the tuning header's static_asserts ask
    muh/families/limits.py: a rule changed there changes what each of them holds a policy to."""
    import pytest
    from lab_card import hardware

    from muh.derive import derive
    from muh.diagnostics import MuhError
    from muh.families import limits
    from muh.pipeline import Loaded, render
    from muh.schema import load

    text = (
        "muh 1\n"
        + hardware()
        + "algorithm scan on lab {\n  types = [float32]\n  policy default { threads = 128  items = 4 }\n}\n"
    )

    def header() -> str:  # the scan tuning header, its lines joined (the asserts are wrapped)
        spec = load(text, "l.muh")
        files = render(Loaded(spec, derive(spec), text))
        return " ".join(next(f.content for f in files if f.path.endswith("tuning_scan.cuh")).split())

    assert ".threads <= hardware::lab.max_threads_per_block," in header()
    monkeypatch.setitem(limits.CXX, "block", "{threads} < 2 * {max_threads_per_block}")
    assert ".threads < 2 * hardware::lab.max_threads_per_block," in header()

    monkeypatch.setattr(limits, "tile_fits", lambda *a: False)
    with pytest.raises(MuhError) as err:
        derive(load(text, "l.muh"))
    assert [d.code for d in err.value.diagnostics] == ["E-SMEM"]

    monkeypatch.setattr(limits, "block_fits", lambda threads, most: threads <= 64)
    with pytest.raises(MuhError) as err:
        load(text, "l.muh")
    assert [d.code for d in err.value.diagnostics] == ["E-THREADS"]


def _ops_lists(path: Path) -> list[str]:
    """Tuple/list literals spelling the LLM ops' element types (dtypes.OPS) in their order."""
    tree = ast.parse(path.read_text(), str(path))
    return [
        f"{path.relative_to(ROOT)}:{n.lineno}"
        for n in ast.walk(tree)
        if isinstance(n, (ast.Tuple, ast.List))
        and len(n.elts) == len(dtypes.OPS)
        and all(isinstance(e, ast.Constant) for e in n.elts)
        and tuple(e.value for e in n.elts) == dtypes.OPS
    ]


def test_the_ops_dtypes_are_listed_once():
    """derive, the ops' records, codegen's bindings, the runtime and the vLLM provider read dtypes.OPS
    (topk, a kernel family of its own, happens to choose the same three types for itself)."""
    files = [p for p in sorted((ROOT / "muh").rglob("*.py")) if p != OWNER and "topk" not in p.parts]
    found = [t for p in files for t in _ops_lists(p)]
    assert not found, "the ops' dtypes written outside muh/runtime/dtypes.py (read dtypes.OPS):\n" + "\n".join(found)
    spelled = ", ".join(dtypes.OPS)
    templates = [p for p in sorted((ROOT / "muh").rglob("*.j2")) if spelled in p.read_text()]
    assert not templates, f"templates spelling `{spelled}` (render it from dtypes.OPS): {templates}"


C_API = ROOT / "muh" / "runtime" / "c_api.py"
_OPS_DECL = re.compile(r"\b(?:int|size_t|void|char\s*\*)\s+muh_op_\w+\s*\(|\bstruct\s+muh_op_\w+\s*\{")


def _ops_signatures_written(path: Path) -> list[str]:
    """A muh_op_* function declared or defined, an ops struct's members, or a table keyed by muh_op_*
    names (ctypes argtypes) in ``path``."""
    text = path.read_text()
    out = [
        f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
        for m in _OPS_DECL.finditer(text)
    ]
    if path.suffix == ".py":
        for node in ast.walk(ast.parse(text, str(path))):
            keys = (
                [
                    k.value
                    for k in getattr(node, "keys", [])
                    if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.startswith("muh_op_")
                ]
                if isinstance(node, ast.Dict)
                else []
            )
            if len(keys) >= 2:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: a table keyed by {keys[:2]}…")
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_fields_" for t in node.targets):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: ctypes _fields_ written out")
    return out


def test_the_ops_c_interface_is_written_once():
    """Every muh_op_* signature and argument struct is written in muh/runtime/c_api.py alone: ops.h's
    declarations and ops.cu's definition heads are rendered from it and the ctypes types derived."""
    files = [
        p for p in sorted((ROOT / "muh").rglob("*")) if p.suffix in (".py", ".j2", ".cuh", ".cpp", ".h") and p != C_API
    ]
    found = [t for p in files for t in _ops_signatures_written(p)]
    assert not found, "the ops' C interface written outside muh/runtime/c_api.py:\n" + "\n".join(found)


def test_the_ops_check_finds_a_second_signature(tmp_path):
    """Not blind: the old hand-written ops.h declaration and ctypes table are found."""
    global ROOT
    h = tmp_path / "ops.h.j2"
    h.write_text(
        "int muh_op_rms_norm(int dtype, void* out, const void* in, const void* weight, long long rows,\n"
        "struct muh_op_gate_add_args {\n"
    )
    py = tmp_path / "llm.py"
    py.write_text(
        '_ARGTYPES = {"muh_op_warp_size": (1, []), "muh_op_max_experts": (1, [])}\n'
        'class NormArgs:\n    _fields_ = [("out", 1)]\n'
    )
    old, ROOT = ROOT, tmp_path
    try:
        assert len(_ops_signatures_written(h)) == 2 and len(_ops_signatures_written(py)) == 2
    finally:
        ROOT = old


def test_ops_h_ops_cu_ctypes_and_records_read_the_one_table(monkeypatch):
    """A signature changed in c_api.OPS_API changes ops.h's declaration, ops.cu's definition, the ctypes
    argtypes and the ops family's record together (nothing else holds it)."""
    import ctypes

    from bench import presets
    from muh.codegen import ops as ops_emit
    from muh.families import registry
    from muh.runtime import c_api, llm

    def files() -> dict:
        return dict(ops_emit.generate(presets.ops("h200"), lambda prefix: f"{prefix} @generated"))

    out = files()
    for f in c_api.OPS_API:
        assert f.decl() in out["include/muh/ops/ops.h"], f.name
        assert f.define() in out["kernels/ops.cu"], f.name
    for s in c_api.OPS_STRUCTS:
        assert s.decl() in out["include/muh/ops/ops.h"], s.name
    assert registry.get("rms_norm").api == c_api.ops("muh_op_norm")
    assert registry.get("silu_and_mul").api == c_api.ops("muh_op_silu_and_mul")
    assert llm._SIGNATURES["muh_op_softmax"] == (
        ctypes.c_int,
        [
            ctypes.c_int,
            ctypes.c_void_p,
            ctypes.c_void_p,
            ctypes.c_longlong,
            ctypes.c_int,
            ctypes.c_longlong,
            ctypes.c_longlong,
            ctypes.c_void_p,
        ],
    )

    changed = tuple(
        c_api.CFunc(f.name, f.ret, f.args[:-1] + (("int", "flags"),) + f.args[-1:], f.doc)
        if f.name == "muh_op_softmax"
        else f
        for f in c_api.OPS_API
    )
    monkeypatch.setattr(c_api, "OPS_API", changed)
    out = files()
    assert "long long out_stride, int flags, void* stream);" in " ".join(out["include/muh/ops/ops.h"].split())
    assert "long long out_stride, int flags, void* stream) {" in " ".join(out["kernels/ops.cu"].split())
    # the runtime's ctypes types, in a fresh interpreter whose table has the change
    import subprocess
    import sys

    code = (
        "from muh.runtime import c_api\n"
        "c_api.OPS_API = tuple(c_api.CFunc(f.name, f.ret, f.args[:-1] + (('int', 'flags'),) + f.args[-1:], f.doc)"
        " if f.name == 'muh_op_softmax' else f for f in c_api.OPS_API)\n"
        "from muh.runtime import llm\n"
        "import ctypes\n"
        "args = llm._SIGNATURES['muh_op_softmax'][1]\n"
        "print(len(args), args[-2] is ctypes.c_int, args[-3] is ctypes.c_longlong)\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert got.split() == ["9", "True", "True"]  # was 8 arguments, out_stride (long long) before the stream
