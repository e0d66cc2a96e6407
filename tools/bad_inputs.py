"""Feed muh bad input the way a new user (or a hostile value) would, through the real command, and
count the outcomes: a clean diagnostic (exit 1 or 2, a message, no traceback) or not.

Cases: edits of specs/baseline.muh (every reproducer of issue 11 among them), bad command lines,
and file-system situations (output folders muh must not touch, odd spec names). Prints a Markdown
table per category and every case that was not clean.
Usage: python tools/bad_inputs.py [--jobs 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = (ROOT / "specs" / "baseline.muh").read_text()
DEPLOY = (ROOT / "tests" / "fixtures" / "deploy" / "competition.muh").read_text()

# (old, new) edits of the baseline spec
SPEC_EDITS = [
    ("threads = 256\n    items = 16\n    vec = 4", 'threads = "256"\n    items = 16\n    vec = 4'),
    ("sm_count = 16", "sm_count = 1e3"),
    ("sm_count = 16", "sm_count = 0x10"),
    ("sm_count = 16", "sm_count = 0"),
    ("sm_count = 16", "sm_count = -16"),
    ("sm_count = 16", "sm_count = 16.5"),
    ("sm_count = 16", "sm_count = 99999999999999999999999999"),
    ("sm_count = 16", "sm_count = true"),
    ("sm_count = 16", "sm_count = [16]"),
    ("sm_count = 16", "sm_count = 16 KiB"),
    ("sm_count = 16", "sm_count = 1..16"),
    ("sm_count = 16", "sm_count ="),
    ("sm_count = 16", "sm_count 16"),
    ("sm_count = 16", "sm_cuont = 16"),
    ("sm_count = 16", "sm_count = 16\n  sm_count = 16"),
    ("smem_per_block = 48 KiB", "smem_per_block = 1208925819614629174706176 KiB"),
    ("smem_per_block = 48 KiB", "smem_per_block = -48 KiB"),
    ("smem_per_block = 48 KiB", "smem_per_block = 48 kib"),
    ("smem_per_block = 48 KiB", "smem_per_block = 48 KiBs"),
    ("smem_per_block = 48 KiB", "smem_per_block = 48KB/s"),
    ("smem_per_block = 48 KiB", "smem_per_block = 48"),
    ("smem_per_block = 48 KiB", "smem_per_block = 0.5 B"),
    ("smem_per_block = 48 KiB", "smem_per_block = 48 ms"),
    ("mem_bandwidth = 584.2 GB/s", "mem_bandwidth = nan GB/s"),
    ("mem_bandwidth = 584.2 GB/s", "mem_bandwidth = inf GB/s"),
    ("mem_bandwidth = 584.2 GB/s", "mem_bandwidth = 1e30 GB/s"),
    ("launch_latency = 6.2 us", "launch_latency = -6.2 us"),
    ("launch_latency = 6.2 us", "launch_latency = 6.2 hours"),
    ("warp_size = 64", "warp_size = 63"),
    ("warp_size = 64", "warp_size = 0"),
    ("hardware bi100 {", "hаrdware bi100 {"),  # Cyrillic а
    ("hardware bi100 {", "hardware bi100 {\u200b"),
    ("hardware bi100 {", "hardware bi100"),
    ("vendor = iluvatar", "vendor = amd"),
    ("cxx = 14", "cxx = 15"),
    ("cxx = 14", 'cxx = "14"'),
    ('cuda = "10.2"', "cuda = 10.2"),
    ('device_name = "Iluvatar BI-V100"', 'device_name = "Iluvatar/BI,V100"'),
    ('device_name = "Iluvatar BI-V100"', 'device_name = "a\\qb"'),
    ("muh 1", "muh 2"),
    ("muh 1", ""),
    ("algorithm reduce on bi100 {", "algorithm reduce on bi200 {"),
    ("algorithm reduce on bi100 {", "algorithm reduse on bi100 {"),
    ("algorithm reduce on bi100 {", "algorithm reduce bi100 {"),
    ("    threads = 256\n    items = 16", "    threads = 96\n    items = 16"),
    ("    threads = 256\n    items = 16", "    threads = 8192\n    items = 16"),
    ("    modifier = ldg", "    modifier = ldgg"),
    ("    modifier = ldg", "    load = ldg"),
    ("    block = warp_reductions", "    block = warp_scans"),
    ("policy float32.plus {", "policy float33.plus {"),
    ("policy float32.plus {", "policy float32.pluss {"),
    ("policy float32.plus {", "policy float32.plus.x {"),
    ("space { items = 7..24", "space { items = 24..7"),
    ("space { items = 7..24", "space { items = 7..24 step 0"),
    ("space { items = 7..24", "space { items = 1..999999999"),
    ("space { items = 7..24", "space { items = 7.5..24"),
    ("space { items = 7..24", "space { items = []"),
    (
        "delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)",
        "delay = backon_jitterz(ns = 952 ns, l2_write_latency = 415 ns)",
    ),
    (
        "delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)",
        "delay = backon_jitter(ns = 952, l2_write_latency = 415 ns)",
    ),
    (
        "delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)",
        "delay = backon_jitter(ns = 952 ns, bogus = 3 ns)",
    ),
    ("delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)", "delay = backon_jitter(952 ns)"),
    ("delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)", "delay = backon_jitter(ns = 1 ns, ns = 2 ns)"),
    ("delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)", "delay = backon_jitter(ns = 952 ns"),
    ('served_model_name = "llm"', 'served_model_name = ["llm", "-x"]'),
    ('served_model_name = "llm"', 'served_model_name = "line\\nbreak"'),
    ('served_model_name = "llm"', 'served_model_name = "bad \\x escape"'),
    ('served_model_name = "llm"', 'served_model_name = "unterminated'),
    ("max_num_seqs = 2", "max_num_seqs = two"),
    ("max_num_seqs = 2", "max_num_seq = 2"),
    ("max_num_seqs = 2", "max_num_seqs = -2"),
    ("dtype = half", "dtype = fp16"),
    ("dtype = half", "dtype = bfloat16"),
    ("tensor_parallel_size = 4", "tensor_parallel_size = 8"),
    ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 0.90 GB"),
    ("{", "{{"),
    ("}", "}}"),
    ("muh 1", "muh 1\n" + "{" * 200),
    ("muh 1", "muh 1\n" + "x = 1\n"),
    ("muh 1", "muh 1\nhardware bi100 { }"),
    ("muh 1", "muh 1\n\x00"),
    # issue 28
    ("sm_count = 16", "sm_count = 2^99999999"),
    ("smem_per_block = 48 KiB", "smem_per_block = 1e999999999 B"),
    ("mem_bandwidth = 584.2 GB/s", "mem_bandwidth = 1e999999999 GB/s"),
    ("sm_count = 16", "sm_count = 1e999999999"),
    ("smem_per_block = 48 KiB", "smem_per_block = 1 B"),
    ("tensor_parallel_size = 4", "tensor_parallel_size = 0"),
    ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 1.5"),
    ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 0"),
    ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 1e309"),
    ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 1e999999999"),
    ("max_num_seqs = 2", "max_num_seqs = 0"),
    ("max_model_len = 80000", "max_model_len = 2^80"),
    ('model = "/model"', 'model = ""'),
    ("max_threads_per_block = 1024", "max_threads_per_block = 1024\n  smem_per_block_optin = 32 KiB"),
    ('cuda = "10.2"', 'cuda = "banana"'),
    ('arch = "ivcore10"', 'arch = "sm_90; rm -rf /"'),
    ('served_model_name = "llm"', 'served_model_name = "ll\u202em"'),
    ('device_name = "Iluvatar BI-V100"', 'device_name = "Iluvatar\u202eBI-V100"'),
    ("muh 1", 'muh 1\nparity { out_of_scope = ["[[[", "*", ""] }'),
    ("delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)", "delay = no_delay"),
]

# values that are not errors but used to go wrong: each must build, and correctly (tests check how)
GOOD_EDITS = [
    ('served_model_name = "llm"', 'served_model_name = "--api-key=leak"'),  # emitted --served-model-name=--api-key=leak
    ('served_model_name = "llm"', 'served_model_name = "a\\\\\\"b"'),  # CMD JSON hadolint reads as JSON
]

# command lines (after `muh`); {spec} is a good copy of the baseline, {tmp} a scratch folder
COMMANDS = [
    ["build", "{tmp}/missing.muh"],
    ["build", "{tmp}"],
    ["build", "{tmp}/binary.muh"],
    ["build", "{tmp}/latin1.muh"],
    ["build", "{tmp}/huge.muh"],
    ["build", "{spec}", "--emulate-warp", "48"],
    ["build", "{spec}", "--emulate-warp", "-4"],
    ["build", "{spec}", "--emulate-warp", "0"],
    ["build", "{spec}", "--emulate-warp", "abc"],
    ["build", "{spec}", "--emulate-warp", "100000"],
    ["build", "{spec}", "-o", "{tmp}/file.txt"],
    ["build", "{spec}", "-o", "{tmp}/foreign"],
    ["build", "{spec}", "-o", "{tmp}/fake_manifest"],
    ["build", "{tmp}/..muh"],
    ["build"],
    ["build", "{spec}", "--bogus"],
    ["explain", "{spec}", "reduce.float33"],
    ["explain", "{spec}", "reduce.int8"],
    ["explain", "{spec}", "reduce.float32.max"],
    ["explain", "{spec}", "reduce.float32.thread"],
    ["explain", "{spec}", "redcue"],
    ["explain", "{spec}", "deploy.nope"],
    ["explain", "{spec}", ""],
    ["explain", "{spec}", "...."],
    ["check", "{spec}", "--only", "parityy"],
    ["check", "{tmp}/missing.muh"],
    ["fmt", "{tmp}/missing.muh"],
    ["fmt", "{tmp}/broken.muh"],
    ["fmt", "--check", "{tmp}/binary.muh"],
    ["tune", "{spec}", "redcue", "--dry-run"],
    ["tune", "{spec}", "reduce", "--dry-run", "--types", "float33"],
    ["tune", "{tmp}/bigspace.muh", "reduce", "--dry-run"],
    ["tune", "{spec}", "reduce", "--time", "ten minutes", "--dry-run"],
    ["tune", "{spec}", "reduce", "--strategy", "genetic", "--dry-run"],
    ["tune", "{spec}", "reduce", "--sizes", "2^x", "--dry-run"],
    ["deploy", "{spec}", "--repo", "{tmp}/missing"],
    ["deploy", "{spec}", "--repo", "{tmp}/notgit"],
    ["deploy", "{tmp}/nodeploy.muh", "--repo", "{tmp}/repo", "--skip-checks"],
    ["deploy", "{tmp}/dockerfolder.muh", "--repo", "{tmp}/repo", "--skip-checks", "--apply"],
    ["build", "/dev/zero"],
    ["fmt", "--check", "/dev/zero"],
    ["probe", "--ingest", "/dev/zero", "{spec}"],
    ["build", "{tmp}/fifo.muh"],
    ["tune", "{spec}", "reduce", "--dry-run", "--db", "{tmp}"],
    ["tune", "{spec}", "reduce", "--dry-run", "--sizes", "-5"],
    ["tune", "{spec}", "reduce", "--dry-run", "--sizes", "2^99"],
    ["deploy", "{spec}", "--repo", ""],
    ["deploy", "{spec}", "--bogus"],
    ["schema", "extra"],
    ["nosuchcommand"],
]


def run(args: list[str], cwd: Path) -> tuple[int, str]:
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "muh.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=120
        )
    except subprocess.TimeoutExpired:
        return -1, "HANG (no answer in 120 s)"
    return proc.returncode, proc.stdout + proc.stderr


def clean(rc: int, out: str) -> bool:
    return rc in (1, 2, 64) and "Traceback" not in out and ("error" in out.lower() or "usage" in out.lower())


def setup(tmp: Path) -> dict[str, str]:
    (tmp / "spec.muh").write_text(BASE)
    (tmp / "binary.muh").write_bytes(b"muh 1\n\x00\x01\x02")
    (tmp / "latin1.muh").write_bytes("muh 1\n# caf\xe9\n".encode("latin-1"))
    (tmp / "huge.muh").write_text("muh 1\n" + "# " + "x" * (2 << 20) + "\n")
    (tmp / "broken.muh").write_text("muh 1\nhardware x {\n")
    (tmp / "file.txt").write_text("mine\n")
    (tmp / "foreign").mkdir()
    (tmp / "foreign" / "app.js").write_text("x\n")
    (tmp / "fake_manifest" / "src").mkdir(parents=True)
    (tmp / "fake_manifest" / "manifest.json").write_text("{}")
    (tmp / "fake_manifest" / "src" / "app.js").write_text("x\n")
    (tmp / "..muh").write_text(BASE)
    (tmp / "bigspace.muh").write_text(
        BASE.replace(
            "space { items = 7..24  threads = 128..1024 step 64  vec = [1, 2, 4] }",
            "space { items = 1..1024  threads = 64..1024  vec = [1, 2, 4, 8, 16] }",
        )
    )
    (tmp / "nodeploy.muh").write_text(BASE.split("deploy ")[0])
    (tmp / "dockerfolder.muh").write_text(
        DEPLOY.replace("deploy competition on bi100 {", 'deploy competition on bi100 {\n  folder = "Dockerfile"')
    )
    (tmp / "notgit").mkdir()
    import os

    os.mkfifo(tmp / "fifo.muh")  # a FIFO as spec blocked forever
    subprocess.run(["git", "init", "-q", str(tmp / "repo")], check=True)
    return {"spec": str(tmp / "spec.muh"), "tmp": str(tmp)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=3)
    args = ap.parse_args()
    results: dict[str, list[tuple[str, int, str]]] = {
        "spec edits": [],
        "command lines": [],
        "file system": [],
        "hostile values (must build)": [],
    }
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        names = setup(tmp)
        jobs = []
        for i, (old, new) in enumerate(SPEC_EDITS):
            assert old in BASE, old
            p = tmp / f"edit{i:03d}.muh"
            p.write_text(BASE.replace(old, new, 1))
            jobs.append(("spec edits", f"`{old[:40]}` → `{new[:40]}`", ["build", str(p), "-o", str(tmp / f"o{i}")]))
        for i, (old, new) in enumerate(GOOD_EDITS):
            assert old in BASE, old
            p = tmp / f"good{i:03d}.muh"
            p.write_text(BASE.replace(old, new, 1))
            jobs.append(("hostile values (must build)", f"`{new[:40]}`", ["build", str(p), "-o", str(tmp / f"g{i}")]))
        for cmd in COMMANDS:
            argv = [a.format(**names) for a in cmd]
            cat = (
                "file system"
                if any(x in " ".join(cmd) for x in ("-o", "..muh", "binary", "latin1", "huge", "missing", '{tmp}"'))
                or cmd[:2] == ["build", "{tmp}"]
                else "command lines"
            )
            jobs.append((cat, "muh " + " ".join(cmd), argv))
        with ThreadPoolExecutor(args.jobs) as ex:
            outs = list(ex.map(lambda j: run(j[2], tmp), jobs))
        for (cat, label, _), (rc, out) in zip(jobs, outs):
            results[cat].append((label, rc, out))
        # nothing the user owns was touched
        untouched = (
            (tmp / "file.txt").read_text() == "mine\n"
            and (tmp / "foreign" / "app.js").read_text() == "x\n"
            and (tmp / "fake_manifest" / "src" / "app.js").read_text() == "x\n"
        )
    print("| category | inputs | clean diagnostics (or, for hostile values, a correct build) | tracebacks | other |")
    print("|---|---|---|---|---|")
    total = [0, 0, 0, 0]
    bad = []
    for cat, rows in results.items():
        n = len(rows)
        good = clean if "must build" not in cat else (lambda rc, out: rc == 0 and "Traceback" not in out)
        ok = sum(good(rc, out) for _, rc, out in rows)
        tb = sum("Traceback" in out for _, _, out in rows)
        print(f"| {cat} | {n} | {ok} | {tb} | {n - ok - tb} |")
        total = [total[0] + n, total[1] + ok, total[2] + tb, total[3] + n - ok - tb]
        bad += [(cat, label, rc, out) for label, rc, out in rows if not good(rc, out)]
    print(f"| **all** | {total[0]} | {total[1]} | {total[2]} | {total[3]} |")
    print(f"\nuser files next to the refused outputs untouched: {untouched}")
    for cat, label, rc, out in bad:
        print(f"\nNOT CLEAN ({cat}) {label}: exit {rc}\n" + "\n".join("    " + line for line in out.splitlines()[:8]))


if __name__ == "__main__":
    main()
