"""One fact, one place: the element types' codes, sizes and C types are written once
(muh/runtime/dtypes.py); the kernel families' types, policies and C interface once each
(muh/families/<name>.py). This test reads the sources and fails on a second table."""
from __future__ import annotations

import ast
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
        hits = [(k.value, v.value) for k, v in pairs
                if isinstance(k, ast.Constant) and k.value in NAMES and isinstance(v, ast.Constant)
                and (type(v.value) is int or v.value in C_TYPES)]
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

    c = {"float": ctypes.c_float, "double": ctypes.c_double, "int": ctypes.c_int, "long long": ctypes.c_longlong,
         "signed char": ctypes.c_byte, "unsigned char": ctypes.c_ubyte, "short": ctypes.c_short,
         "unsigned short": ctypes.c_ushort, "unsigned": ctypes.c_uint, "unsigned long long": ctypes.c_ulonglong}
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

    text = "muh 1\n" + hardware() + "algorithm scan on lab {\n  types = [float32]\n  policy default { threads = 128  items = 4 }\n}\n"

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
    return [f"{path.relative_to(ROOT)}:{n.lineno}" for n in ast.walk(tree)
            if isinstance(n, (ast.Tuple, ast.List)) and len(n.elts) == len(dtypes.OPS)
            and all(isinstance(e, ast.Constant) for e in n.elts) and tuple(e.value for e in n.elts) == dtypes.OPS]


def test_the_ops_dtypes_are_listed_once():
    """derive, the ops' records, codegen's bindings, the runtime and the vLLM provider read dtypes.OPS
    (topk, a kernel family of its own, happens to choose the same three types for itself)."""
    files = [p for p in sorted((ROOT / "muh").rglob("*.py")) if p != OWNER and "topk" not in p.parts]
    found = [t for p in files for t in _ops_lists(p)]
    assert not found, "the ops' dtypes written outside muh/runtime/dtypes.py (read dtypes.OPS):\n" + "\n".join(found)
    spelled = ", ".join(dtypes.OPS)
    templates = [p for p in sorted((ROOT / "muh").rglob("*.j2")) if spelled in p.read_text()]
    assert not templates, f"templates spelling `{spelled}` (render it from dtypes.OPS): {templates}"
