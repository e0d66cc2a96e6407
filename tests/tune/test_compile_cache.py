"""Compiled units kept by content (one compile per distinct source, flags and nvcc), and one measuring
process per GPU at a time (several `muh tune` side by side never time at once on one GPU)."""

from __future__ import annotations

import os
import stat
import threading
import time

from muh.tune.compile import LocalPool, unit_key
from muh.tune.measure import gpu_lock


def fake_nvcc(tmp_path):
    """A compiler that counts its compilations and writes the source as the 'binary'."""
    log = tmp_path / "calls"
    exe = tmp_path / "nvcc"
    exe.write_text(f"""#!/bin/sh
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0; fi
echo x >> {log}
while [ $# -gt 1 ]; do
  if [ "$1" = "-o" ]; then out=$2; fi
  shift
done
cp "$1" "$out"
""")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe), log


def test_a_unit_compiles_once_per_source(tmp_path):
    nvcc, log = fake_nvcc(tmp_path)
    pool = LocalPool(2, cache=tmp_path / "units")
    try:
        a1 = pool.submit("int a;", ["-O3"], nvcc, 60).result()
        a2 = pool.submit("int a;", ["-O3"], nvcc, 60).result()
        b = pool.submit("int b;", ["-O3"], nvcc, 60).result()
        c = pool.submit("int a;", ["-O1"], nvcc, 60).result()
    finally:
        pool.shutdown()
    assert a1.ok and a2.ok and b.ok and c.ok
    assert a1.binary == a2.binary == b"int a;" and b.binary == b"int b;"
    assert a2.log == "cached" and a1.log != "cached"
    assert len(log.read_text().split()) == 3  # a, b, a with other flags
    assert unit_key("int a;", ["-O3"], nvcc) != unit_key("int a;", ["-O1"], nvcc)
    assert len(list((tmp_path / "units").glob("unit-*[!s]"))) == 3  # binaries (each with its .spills report)
    assert len(list((tmp_path / "units").glob("unit-*.spills"))) == 3


def test_a_failed_compile_is_not_kept(tmp_path):
    pool = LocalPool(1, cache=tmp_path / "units")
    try:
        r = pool.submit("int a;", [], str(tmp_path / "no-such-nvcc"), 60).result()
    finally:
        pool.shutdown()
    assert not r.ok and not (tmp_path / "units").exists()


def test_one_measuring_process_per_gpu(tmp_path):
    held, overlap, other = [], [], []

    def measure(gpu, tag):
        with gpu_lock(gpu):
            held.append(tag)
            if len(held) > 1:
                overlap.append(tuple(held))
            time.sleep(0.05)
            held.remove(tag)

    threads = [threading.Thread(target=measure, args=("7", i)) for i in range(4)]
    for t in threads:
        t.start()
    with gpu_lock("8"):  # another GPU is not held by them
        other.append(os.getpid())
    for t in threads:
        t.join()
    assert overlap == [] and other
