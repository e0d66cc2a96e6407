"""Fixtures for muh tune: a small spec, fake machines, fake compile pools and GPUs (no timing asserts)."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path

import pytest
from lab_card import hardware

ROOT = Path(__file__).resolve().parents[2]

SMALL = (
    """muh 1

# a small lab card
"""
    + hardware()
    + """
algorithm reduce on lab {
  policy default {
    threads = 256  # CUB's sm_60 policy
    items = 16
    vec = 4
    modifier = ldg
    scaling = mem_bound
  }
  space { items = [8, 12, 16]  threads = [128, 256, 384, 1056]  vec = [2, 4] }
}

algorithm scan on lab {
  policy default { threads = 128  items = 24  delay = fixed(ns = 688 ns, l2_write_latency = 1140 ns)
                   scaling = mem_bound }
  space { items = [12, 24, 48]  threads = [128, 256, 512] }
}
"""
)


@pytest.fixture
def small_text() -> str:
    return SMALL


@pytest.fixture
def small_spec(tmp_path) -> Path:
    p = tmp_path / "lab.muh"
    p.write_text(SMALL)
    return p


@pytest.fixture
def loaded(small_spec):
    from muh.pipeline import load_file

    return load_file(small_spec)


@pytest.fixture
def machine():
    from muh.tune.machine import Gpu, Machine

    return Machine((Gpu(0, "Fake GPU"),), "580.0", "13.0.88", "nvcc")


class FakePool:
    """Compiles instantly; a unit whose source contains a marker fails to compile."""

    kind = "fake"
    workers = 2

    def __init__(self, fail_marker: str | None = None):
        self.fail_marker = fail_marker
        self.units: list[str] = []
        self.lock = threading.Lock()

    def submit(self, source, args, nvcc, timeout):
        from muh.tune.compile import Compiled

        with self.lock:
            self.units.append(source)
        f: Future = Future()
        ok = not (self.fail_marker and self.fail_marker in source)
        f.set_result(
            Compiled(ok, b"#!fake " + str(len(self.units)).encode() if ok else b"", "" if ok else "error: planted", 0.0)
        )
        return f

    def shutdown(self):
        pass


@pytest.fixture
def fake_pool():
    return FakePool()


@pytest.fixture
def fake_gpu(machine, fake_pool, monkeypatch):
    """`fake_gpu(gpu)`: `muh tune` (the CLI) compiles with the fake pool, detects the fake machine and
    measures with ``gpu`` (a callable in place of `run_unit`); returns ``gpu``."""
    import muh.tune.machine as M
    from muh.tune import runner as R

    def install(gpu):
        monkeypatch.setattr(R, "run_unit", gpu)
        monkeypatch.setattr(R, "make_pool", lambda *a, **k: fake_pool)
        monkeypatch.setattr(M, "detect", lambda: machine)
        return gpu

    return install
