"""Static comparison of muh's radix sort kernels with CUB's at sm_90, no GPU: registers, shared memory, spills and
resident blocks per SM from `nvcc -Xptxas -v`; instruction mix from `cuobjdump -sass` (global load widths, shared
and global atomics, votes, barriers, local memory).

    python3 bench/radix_static.py [--dtype uint32] [--muh-ref GIT_REV] [--out-md FILE]

muh: the H200 spec's policy of one key type (bench/presets.h200), keys only, its kernels alone in a translation unit
(the generated radix_sort.cu instantiates all 60 key/value pairs); `--muh-ref REV` takes radix_sort.cuh and
radix_sort_host.cuh from that commit instead (the numbers before a change). CUB: `DeviceRadixSort::SortKeys` of the
same key type, the toolkit's CUB (its sm_90 policy hub). Needs nvcc, and cuobjdump for the instruction mix (the
CUDA toolkit's, or `pip install nvidia-cuda-cuobjdump`). Occupancy: H100/H200 (sm_90) limits — 65536 registers
(allocated per warp, 256 at a time), 233472 B of shared memory (1 KB reserved per block), 2048 threads, 32 blocks
per SM.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from muh.runtime import dtypes as DT  # noqa: E402 - after the checkout is on sys.path

REGS, SMEM, SMEM_RESERVED, THREADS, BLOCKS = 65536, 233472, 1024, 2048, 32
DTYPES = ("uint32", "int32", "float32", "uint64")  # the key types compared (muh/runtime/dtypes.py has their rows)


def ordered_type(dtype: str) -> str:
    """The unsigned C++ type of a key's ordered bits (the same width as the key)."""
    return DT.TABLE[f"uint{8 * DT.SIZE[dtype]}"].cxx


MUH_TU = """
#include "muh/host.cuh"
#include "muh/kernels/params.cuh"
#include "muh/kernels/radix_sort_host.cuh"
namespace pr = muh::params::radix_sort_{dtype};
struct P {{
  enum {{ kKeyKind = pr::kKeyKind, kBits = pr::kBits, kThreads = pr::kThreads, kItems = pr::kItems,
         kMinBlocks = pr::kMinBlocks, kHistThreads = pr::kHistThreads, kHistItems = pr::kHistItems,
         kHistMinBlocks = pr::kHistMinBlocks,
         kHistBlocksPerSm = pr::kHistBlocksPerSm, kScanThreads = pr::kScanThreads,
         kSingleThreads = pr::kSingleThreads, kSingleItems = pr::kSingleItems, kSingleBits = pr::kSingleBits }};
}};
typedef {v} NV;
template int muh::radix_sort::sort<{u}, pr::kKeyKind, NV, P>(const {u}*, {u}*, {u}*, const NV*, NV*, NV*, long long,
                                                             int, int, bool, void*, size_t, int*, cudaStream_t,
                                                             long long, bool);
"""

CUB_TU = """
#include <cub/device/device_radix_sort.cuh>
#include <stdint.h>
extern "C" int cub_sort_keys(const {t}* in, {t}* out, long long n, void* ws, size_t* ws_bytes, cudaStream_t s) {{
  return (int)cub::DeviceRadixSort::SortKeys(ws, *ws_bytes, in, out, (int)n, 0, 8 * (int)sizeof({t}), s);
}}
"""
CUB_PAIRS_TU = """
#include <cub/device/device_radix_sort.cuh>
#include <stdint.h>
extern "C" int cub_sort_pairs(const {t}* in, {t}* out, const {v}* vin, {v}* vout, long long n, void* ws,
                              size_t* ws_bytes, cudaStream_t s) {{
  return (int)cub::DeviceRadixSort::SortPairs(ws, *ws_bytes, in, out, vin, vout, (int)n, 0, 8 * (int)sizeof({t}), s);
}}
"""
VALUE_TYPES = {
    0: "muh::radix_sort::NoValue",
    1: "unsigned char",
    2: "unsigned short",
    4: "unsigned",
    8: "unsigned long long",
}  # the raw bits of a value of that many bytes (the kernels' V)

KERNELS = {  # short name: (muh's mangled-name part, CUB's)
    "histogram": ("histogram_kernel", "DeviceRadixSortHistogramKernel"),
    "exclusive sum": ("exclusive_sum_kernel", "DeviceRadixSortExclusiveSumKernel"),
    "onesweep": ("onesweep_kernel", "DeviceRadixSortOnesweepKernel"),
    "single tile": ("single_tile_kernel", "DeviceRadixSortSingleTileKernel"),
}
OPS = ("LDG", "STG", "LDS", "STS", "ATOMS", "ATOMG", "REDG", "VOTE", "MATCH", "SHFL", "BAR", "LDL", "STL")


def nvcc() -> str:
    return shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def cuobjdump() -> str | None:
    found = shutil.which("cuobjdump") or shutil.which("cuobjdump", path=str(Path(nvcc()).parent))
    if found:
        return found
    try:  # the pip package nvidia-cuda-cuobjdump
        import nvidia

        for base in nvidia.__path__:
            for p in Path(base).glob("*/bin/cuobjdump"):
                return str(p)
    except ImportError:
        pass
    return None


def compile_tu(src: Path, include: Path | None) -> tuple[str, Path]:
    cubin = src.with_suffix(".cubin")
    cmd = [nvcc(), "-std=c++17", "-arch=sm_90", "-O3", "-Xptxas", "-v", "-cubin", "-o", str(cubin), str(src)]
    if include:
        cmd[1:1] = ["-I", str(include)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"nvcc failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r.stdout + r.stderr, cubin


def ptxas(log: str) -> dict:
    """{mangled kernel: {regs, smem, spill}} from the -Xptxas -v log."""
    out, fn = {}, None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            fn = m.group(1)
            out[fn] = {"regs": 0, "smem": 0, "spill": 0}
            continue
        if fn is None:
            continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            out[fn]["spill"] = int(m.group(1)) + int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            out[fn]["regs"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            out[fn]["smem"] = int(s.group(1)) if s else 0
    return out


def sass(cubin: Path) -> dict:
    """{mangled kernel: Counter of opcode families (LDG.E.128 kept whole)}."""
    tool = cuobjdump()
    if tool is None:
        return {}
    r = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True)
    if r.returncode:  # e.g. the pip cuobjdump without nvdisasm beside it: no instruction mix
        print(f"cuobjdump -sass failed, no SASS column: {r.stderr.strip()[:200]}", file=sys.stderr)
        return {}
    text = r.stdout
    out = {}
    for chunk in re.split(r"\n\s+Function : ", text)[1:]:
        name = chunk.split("\n", 1)[0].strip()
        ops = collections.Counter()
        for line in chunk.splitlines():
            m = re.search(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)", line)
            if m and m.group(1).split(".")[0] in OPS:
                ops[m.group(1)] += 1
        out[name] = ops
    return out


def resident(threads: int, regs: int, smem: int) -> tuple[int, str]:
    """Blocks per SM and what limits them."""
    warps = -(-threads // 32)
    warp_regs = -(-regs * 32 // 256) * 256
    by = {
        "registers": (REGS // warp_regs) // warps if warp_regs else BLOCKS,
        "shared memory": SMEM // (smem + SMEM_RESERVED),
        "threads": THREADS // threads,
        "blocks": BLOCKS,
    }
    n = min(by.values())
    return n, min(by, key=by.get)


def mix(ops: collections.Counter) -> str:
    fam = collections.Counter()
    for op, n in ops.items():
        head = op.split(".")[0]
        key = op if head in ("LDG", "STG") else head
        fam[key] += n
    return ", ".join(f"{k} {fam[k]}" for k in sorted(fam))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", default="uint32", choices=DTYPES)
    ap.add_argument("--values", type=int, default=0, choices=sorted(VALUE_TYPES), help="value bytes (0: keys only)")
    ap.add_argument("--muh-ref", help="git revision to take radix_sort.cuh / radix_sort_host.cuh from")
    ap.add_argument("--out-md")
    args = ap.parse_args()

    from bench import presets
    from muh.codegen.kernels import emitter
    from muh.families import radix_sort

    cfg = presets.h200()
    pol = cfg.of("radix_sort")[args.dtype]
    params = {p.cname: p.value for p in radix_sort.params(cfg, args.dtype, pol)}
    work = Path(tempfile.mkdtemp(prefix="radix-static-"))
    emitter.write(cfg, work / "gen")
    if args.muh_ref:
        for f in ("radix_sort.cuh", "radix_sort_host.cuh"):
            text = subprocess.run(
                ["git", "show", f"{args.muh_ref}:muh/families/radix_sort/{f}"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            (work / "gen" / "include" / "muh" / "kernels" / f).write_text(text)
    vt = VALUE_TYPES[args.values]
    (work / "muh.cu").write_text(MUH_TU.format(dtype=args.dtype, u=ordered_type(args.dtype), v=vt))
    cub_tu = (
        CUB_PAIRS_TU.format(t=DT.TABLE[args.dtype].cxx, v=vt)
        if args.values
        else CUB_TU.format(t=DT.TABLE[args.dtype].cxx)
    )
    (work / "cub.cu").write_text(cub_tu)
    muh_log, muh_cubin = compile_tu(work / "muh.cu", work / "gen" / "include")
    cub_log, cub_cubin = compile_tu(work / "cub.cu", None)
    muh_p, cub_p = ptxas(muh_log), ptxas(cub_log)
    muh_s, cub_s = sass(muh_cubin), sass(cub_cubin)
    onesweep_dyn = radix_sort.onesweep_smem(cfg, args.dtype, pol, value_bytes=args.values)
    threads = {  # block threads of each kernel
        "muh": {
            "histogram": pol.hist_threads,
            "exclusive sum": pol.scan_threads,
            "onesweep": pol.threads,
            "single tile": pol.single_threads,
        },
    }
    dyn = {
        "muh": {
            "onesweep": onesweep_dyn,
            "single tile": radix_sort.single_smem(cfg, args.dtype, pol, value_bytes=args.values),
        }
    }

    rows = []
    for short, (muh_name, cub_name) in KERNELS.items():
        for who, table, mix_of, part in (("muh", muh_p, muh_s, muh_name), ("CUB", cub_p, cub_s, cub_name)):
            fn = next((f for f in table if part in f), None)
            if fn is None:
                continue
            got = table[fn]
            t = threads.get(who, {}).get(short)
            if t is None:  # CUB's block size: the sm_90 policy's, as the H200 spec copies it
                t = threads["muh"][short]
            smem = got["smem"] + dyn.get(who, {}).get(short, 0)
            n, limit = resident(t, got["regs"], smem)
            rows.append(
                (
                    short,
                    who,
                    t,
                    got["regs"],
                    smem,
                    got["spill"],
                    f"{n} ({limit})",
                    n * t,
                    mix(mix_of.get(fn, collections.Counter())),
                )
            )
    head = (
        f"| kernel | who | threads | registers | smem B | spill B | blocks/SM (limit) | threads/SM | SASS |\n"
        f"|---|---|---|---|---|---|---|---|---|\n"
    )
    body = "".join("| " + " | ".join(str(x) for x in r) + " |\n" for r in rows)
    ref = f" (muh at {args.muh_ref})" if args.muh_ref else ""
    text = (
        f"{args.dtype} keys{f' with {args.values}-byte values' if args.values else ' only'}{ref}; muh policy: onesweep {pol.threads} x {pol.items} at {pol.radix_bits} bits "
        f"(kMinBlocks {params.get('kMinBlocks', '-')}), histogram {pol.hist_threads} x {pol.hist_items}, grid cap "
        f"{params['kHistBlocksPerSm']} per SM\n\n" + head + body
    )
    print(text)
    if args.out_md:
        Path(args.out_md).write_text(text)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
