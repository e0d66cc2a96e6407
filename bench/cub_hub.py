"""CUB's own dispatch on muh's generated policy hubs, on the lab GPU: correctness, a race, a candidate search.

    python3 bench/cub_hub.py gen OUT      # render the CUDA programs into OUT (here: needs muh's spec stack)
    bash OUT/build.sh && OUT/run.sh       # on the GPU machine: compile (in parallel) and run; JSON lines out

Three kinds of program, each a plain CUDA C++ executable (no Python on the GPU machine):

* ``entries_<family>``: every convenience entry ``muh::cub::<family>::run`` (hubs generated from
  specs/nvidia.muh, include/muh/cub/) against CUB's public entry point on the same input, on CUB's
  benchmark shapes (2^16 … 2^24 elements; segmented sorts in fixed and random segment sizes): the outputs
  must be identical (integers: exact; float sums: the same value up to the summation order).
* ``race``: the hubs generated from specs/h200.muh (reduce, scan, histogram, transform) against CUB's own
  policies, timed in the same process — the column "CUB with muh's hub".
* ``search_<family>``: candidate hubs for segmented_sort and select_if (int32 keys on sm90), each a spec
  built by `muh build` from the candidate's values, compiled into one program with CUB's own as the base;
  every candidate's output is checked against CUB's before it is timed, and a failing or erroring
  candidate is reported, never ranked.

Several hubs share one translation unit the way `muh tune` shares variants: each generated tree is
inlined under ``#define muh muh_<tag>`` so its namespaces (``muh::tuning``, ``muh::cub``) are its own.
Times are medians of device-event timings over rotating input buffers, after warm-up.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.M)

#: CUB's shipped sm_90 policy for int32 keys (what specs/nvidia.muh writes and cub_dispatch proves), as spec text.
SELECT_BASE = dict(threads=384, items=17, load="warp_transpose", modifier="default", block="warp_scans",
                   delay="fixed(ns = 76 ns, l2_write_latency = 1150 ns)")
SELECT_CANDIDATES = [
    dict(threads=256, items=17), dict(threads=512, items=17), dict(threads=384, items=12),
    dict(threads=384, items=22), dict(threads=256, items=24), dict(delay="fixed(ns = 350 ns, l2_write_latency = 450 ns)"),
    dict(load="direct", items=10, threads=128),
]
SORT_BASE = dict(large=dict(threads=256, items=23, radix_bits=6, rank="memoize", load="transpose", modifier="default",
                            block="warp_scans"),
                 small=dict(threads=256, threads_per_segment=2, items=9, load="transpose", modifier="ldg"),
                 medium=dict(threads=256, threads_per_segment=16, items=7, load="transpose", modifier="ldg"))
#: Tried and refused by the compiler (ptxas: CUB's large-segment kernels then need more than 48 KiB of static
#: shared memory — 0x10860 and 0x10440 bytes on sm_90), so never timed: large.threads=512 large.items=11, and
#: large.radix_bits=7 (bench/results/cub-hub-2026-12-06/README.md).
SORT_CANDIDATES = [
    dict(large=dict(items=17)), dict(large=dict(items=19)), dict(large=dict(radix_bits=5)),
    dict(small=dict(items=5), medium=dict(items=11)), dict(small=dict(threads_per_segment=4)),
    dict(medium=dict(threads_per_segment=32)), dict(small=dict(threads=128), medium=dict(threads=128)),
]


def hardware_block() -> str:
    """specs/nvidia.muh's sm90 block (the hub's one rung)."""
    text = (ROOT / "specs" / "nvidia.muh").read_text()
    a = text.index("hardware sm90 {")
    return text[a:text.index("\n}\n", a) + 3]


def _value(v) -> str:
    return str(v)


def select_spec(values: dict) -> str:
    body = "\n".join(f"    {k} = {_value(v)}" for k, v in values.items())
    return (f"muh 1\n{hardware_block()}\nalgorithm select_if on sm90 {{\n  types = [int32]\n"
            f"  policy default {{\n{body}\n    scaling = none\n  }}\n}}\n")


def sort_spec(values: dict) -> str:
    subs = "\n".join(f"    {s} {{ " + "  ".join(f"{k} = {v}" for k, v in d.items()) + "  scaling = none }"
                     for s, d in values.items())
    return (f"muh 1\n{hardware_block()}\nalgorithm segmented_sort on sm90 {{\n  types = [int32]\n"
            f"  policy default {{\n{subs}\n  }}\n}}\n")


def merged(base: dict, change: dict) -> dict:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for k, v in change.items():
        if isinstance(v, dict):
            out[k].update(v)
        else:
            out[k] = v
    return out


def label(change: dict) -> str:
    parts = []
    for k, v in change.items():
        if isinstance(v, dict):
            parts += [f"{k}.{kk}={vv}" for kk, vv in v.items()]
        else:
            parts.append(f"{k}={v}".replace(" ", ""))
    return " ".join(parts) or "base"


def build_tree(spec_text: str, name: str) -> Path:
    """`muh build` of a spec text; the output folder."""
    tmp = Path(tempfile.mkdtemp(prefix="muh-cubhub-"))
    src = tmp / f"{name}.muh"
    src.write_text(spec_text)
    out = tmp / "out"
    subprocess.run([sys.executable, "-m", "muh.cli", "build", str(src), "-o", str(out)], check=True, cwd=ROOT,
                   capture_output=True)
    return out


def inline(path: Path, done: set[Path]) -> str:
    """A generated header with its quote includes expanded once (``#pragma once`` dropped)."""
    path = path.resolve()
    if path in done:
        return ""
    done.add(path)
    out = []
    for line in path.read_text().splitlines():
        m = _INCLUDE.match(line)
        if m:
            out.append(inline(path.parent / m.group(1), done))
        elif line.strip() != "#pragma once":
            out.append(line)
    return "\n".join(out)


def tree_code(tag: str, include: Path, families: list[str]) -> str:
    done: set[Path] = set()
    body = "\n".join(inline(include / "muh" / "cub" / f"{f}.cuh", done) for f in families)
    return f"// ---- hubs {tag} ----\n#define muh muh_{tag}\n{body}\n#undef muh\n"


PRELUDE = (Path(__file__).parent / "cub_hub_prelude.cuh").read_text
#: The search programs' dispatch over candidates (one switch: the candidates live in their own namespaces).
SEARCH_ARGS = {"select_if": "t, b, in, out, nsel, n, op", "segmented_sort": "t, b, in, out, n, segs, beg, end"}
SEARCH_RUN = {
    "select_if": "static cudaError_t search_run(int v, void* t, size_t& b, const int* in, int* out, int* nsel, "
                 "long long n, LessThan op) {{\n  switch (v) {{\n{cases}  }}\n  return cudaErrorInvalidValue;\n}}\n",
    "segmented_sort": "static cudaError_t search_run(int v, void* t, size_t& b, const int* in, int* out, long long n, "
                      "long long segs, const int* beg, const int* end) {{\n  switch (v) {{\n{cases}  }}\n"
                      "  return cudaErrorInvalidValue;\n}}\n",
}


def write(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    nv = ROOT / "generated" / "nvidia" / "include"
    h200 = ROOT / "generated" / "h200" / "include"
    programs = {}
    groups = {"reduce": ["reduce", "segmented_reduce", "reduce_by_key"], "scan": ["scan", "scan_by_key"],
              "select": ["select_if", "select_flagged", "unique", "partition", "unique_by_key"],
              "radix": ["radix_sort", "radix_sort_pairs", "segmented_radix_sort", "merge_sort"], "segsort": ["segmented_sort"],
              "histogram": ["histogram", "transform"],
              "more": ["adjacent_difference", "for_each", "merge", "rle_encode", "rle_non_trivial_runs",
                       "three_way_partition", "batch_memcpy"]}
    for g, fams in groups.items():
        programs[f"entries_{g}"] = (tree_code("nv", nv, fams) + f"#define MUH_ENTRIES_{g.upper()} 1\n")
    programs["race"] = tree_code("h200", h200, ["reduce", "scan", "histogram", "transform"]) + "#define MUH_RACE 1\n"
    for fam, base, cands, spec in (("select_if", SELECT_BASE, SELECT_CANDIDATES, select_spec),
                                   ("segmented_sort", SORT_BASE, SORT_CANDIDATES, sort_spec)):
        code, labels = [], []
        for i, change in enumerate([{}] + cands):
            tree = build_tree(spec(merged(base, change)), f"{fam}_{i}")
            code.append(tree_code(f"v{i}", tree / "include", [fam]))
            labels.append(label(change))
        n = len(labels)
        table = ", ".join(json.dumps(x) for x in labels)
        code.append(f"#define MUH_SEARCH_{fam.upper()} {n}\nstatic const char* kLabels[{n}] = {{{table}}};\n")
        code.append(SEARCH_RUN[fam].format(cases="".join(
            f"    case {i}: return muh_v{i}::cub::{fam}::run({SEARCH_ARGS[fam]});\n" for i in range(n))))
        programs[f"search_{fam}"] = "\n".join(code)
    prelude = PRELUDE()
    for name, code in programs.items():
        (out / f"{name}.cu").write_text("#include <cub/cub.cuh>\n#include \"cub_hub_prelude.cuh\"\n" + code
                                        + '#include "cub_hub_main.cuh"\n')
    (out / "cub_hub_prelude.cuh").write_text(prelude)
    (out / "cub_hub_main.cuh").write_text((Path(__file__).parent / "cub_hub_main.cuh").read_text())
    names = " ".join(programs)
    (out / "build.sh").write_text(
        "#!/usr/bin/env bash\n# compile every program in parallel (nvcc -arch=sm_90)\ncd \"$(dirname \"$0\")\"\n"
        f"for p in {names}; do (nvcc -std=c++17 -O3 -arch=sm_90 -o $p $p.cu > $p.build.log 2>&1 "
        "|| echo \"BUILD FAILED $p\") & done; wait\n")
    (out / "run.sh").write_text(
        "#!/usr/bin/env bash\ncd \"$(dirname \"$0\")\"\n"
        f"for p in {names}; do [ -x ./$p ] && timeout 120 ./$p || echo '{{\"program\": \"'$p'\", \"status\": \"did not run\"}}'; done\n")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "gen":
        print(__doc__)
        return 2
    write(Path(argv[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
