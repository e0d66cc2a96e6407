"""Measuring workers, one per GPU: local threads and Ray actors (num_gpus=1 each).

No GPU is needed: the "binary" is a small script that speaks the harness's JSON-lines protocol, and
the Ray cluster is a real local one that declares two GPU resources. A killed actor must lose only
the unit in flight, which another actor then measures; every process started has NVLink multicast off.
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

from muh.tune.measure import SAFE_ENV
from muh.tune.workers import Job, ThreadWorkers

FAKE_HARNESS = textwrap.dedent("""\
    #!{python}
    # Stands in for a compiled unit: one JSON line per asked variant; records the GPU it ran on.
    import json, os, sys, time
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    gate = {gate!r}
    if gate and not os.path.exists(gate):  # the first run of this unit hangs until killed
        open(gate, "w").close()
        time.sleep(300)
    sizes = [int(s) for s in args["--sizes"].split(",")]
    env = {{k: os.environ.get(k) for k in {safe!r}}}
    for v in args["--variants"].split(","):
        print(json.dumps({{"variant": int(v), "status": "ok", "sizes": sizes, "variant_ns": [900.0] * len(sizes),
                          "base_ns": [1000.0] * len(sizes), "samples": 5,
                          "detail": json.dumps({{"gpu": os.environ.get("CUDA_VISIBLE_DEVICES"), "env": env}})}}),
              flush=True)
""")


def _harness(tmp_path: Path, name: str = "unit-fake", gate: Path | None = None) -> Path:
    p = tmp_path / name
    p.write_text(FAKE_HARNESS.format(python=sys.executable, safe=sorted(SAFE_ENV), gate=str(gate) if gate else None))
    p.chmod(0o755)
    return p


def _job(binary: Path, n: int = 2) -> Job:
    return Job(binary, list(range(1, n + 1)), [1 << 16, 1 << 20], runs=5, warmup=1, seed=1, timeout=60)


def test_thread_workers_measure_each_unit_on_one_gpu_with_multicast_off(tmp_path):
    from muh.tune.machine import Gpu

    binary = _harness(tmp_path)
    w = ThreadWorkers([Gpu(0, "Fake", "GPU-a"), Gpu(1, "Fake", "GPU-b")])
    try:
        outs = [f.result(timeout=60) for f in [w.submit(_job(binary)) for _ in range(6)]]
    finally:
        w.close()
    for out in outs:
        details = [json.loads(r.detail) for r in out.results.values()]
        assert len({d["gpu"] for d in details}) == 1  # the whole unit (base and variants) on one GPU
        assert all(d["env"] == SAFE_ENV for d in details)
    assert {o.device for o in outs} <= {"Fake GPU-a", "Fake GPU-b"}


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="Ray is the optional extra muh[tune]")
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_ray_workers_one_actor_per_gpu(ray_cluster, tmp_path):
    from muh.tune.workers import RayWorkers

    binary = _harness(tmp_path)
    w = RayWorkers()
    try:
        assert w.count == 2
        outs = [f.result(timeout=120) for f in [w.submit(_job(binary, 3)) for _ in range(8)]]
    finally:
        w.close()
    gpus = set()
    for out in outs:
        details = [json.loads(r.detail) for r in out.results.values()]
        assert sorted(out.results) == [1, 2, 3]
        assert len({d["gpu"] for d in details}) == 1
        assert all(d["env"] == SAFE_ENV for d in details)
        gpus.add(details[0]["gpu"])
    assert gpus == {"0", "1"}  # Ray pinned each actor to its own GPU, and both measured


@pytest.mark.slow
def test_ray_worker_that_dies_loses_only_its_unit_which_is_retried_elsewhere(ray_cluster, tmp_path, monkeypatch):
    from muh.tune.workers import RayWorkers

    gate = tmp_path / "gate"
    hanging = _harness(tmp_path, "unit-hangs-once", gate)
    normal = _harness(tmp_path, "unit-normal")
    w = RayWorkers()
    try:
        first = w.submit(_job(hanging))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (gate.exists() and w.busy()):
            time.sleep(0.1)
        assert gate.exists(), "the hanging unit never started"
        ((victim, job),) = [(i, j) for i, j in w.busy().items() if Path(j.binary).name == "unit-hangs-once"]
        others = [w.submit(_job(normal)) for _ in range(3)]
        ray_cluster.kill(w.actors[victim])
        out = first.result(timeout=120)
        assert out.retried == 1 and out.errors and sorted(out.results) == [1, 2]
        assert all(f.result(timeout=120).results for f in others)
        assert victim not in w.busy()
    finally:
        w.close()


class HarnessPool:
    """Compiles instantly into the fake harness script (real processes, real JSON lines, no GPU)."""

    kind = "fake"
    workers = 2

    def __init__(self, script: Path):
        self.script = script.read_bytes()
        self.units = 0

    def submit(self, source, args, nvcc, timeout):
        from concurrent.futures import Future

        from muh.tune.compile import Compiled

        self.units += 1
        f: Future = Future()
        f.set_result(Compiled(True, self.script + f"\n# unit {self.units}\n".encode(), "", 0.0))
        return f

    def shutdown(self):
        pass


def test_trials_record_their_gpu_and_resume_with_another_gpu_count(loaded, tmp_path):
    """One GPU, then two of the same model: the second run finds every kernel measured (same fingerprint)."""
    import sqlite3

    from muh.tune.machine import Gpu, Machine
    from muh.tune.runner import Options, Runner

    script = _harness(tmp_path)
    one = Machine((Gpu(0, "Fake", "GPU-a"),), "580.0", "13.0.88", "nvcc")
    two = Machine((Gpu(0, "Fake", "GPU-a"), Gpu(1, "Fake", "GPU-b")), "580.0", "13.0.88", "nvcc")

    def run(machine):
        opts = Options(
            family="reduce",
            types=["float32"],
            db=tmp_path / "t.sqlite",
            work=tmp_path / "w",
            batch=3,
            strategy="exhaustive",
            confirm_rounds=2,
        )
        r = Runner(loaded.spec, machine, opts)
        r.pool = HarnessPool(script)
        try:
            return r.run_type("float32"), r.pool.units
        finally:
            r.close()

    rep1, units1 = run(one)
    assert units1 > 1 and not any(row.cached for row in rep1.rows.values())
    devices = {d for (d,) in sqlite3.connect(tmp_path / "t.sqlite").execute("SELECT DISTINCT device FROM trials")}
    assert devices == {"Fake GPU-a"}
    rep2, units2 = run(two)
    ok = [row for row in rep2.rows.values() if row.status == "ok"]
    assert ok and all(row.cached for row in ok)
    assert units2 == 0  # nothing compiled or measured again: the confirmation rounds were stored too
