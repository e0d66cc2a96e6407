"""The orchestration with a fake compiler and fake GPUs: DB writes, cache hits, resume, failure
classes, budget, confirmation and the decision. Timings are synthetic; nothing asserts on speed."""

from __future__ import annotations

import re

import pytest

from muh.tune import runner as R
from muh.tune.measure import Result
from muh.tune.runner import Options, Runner


def _labels_in(source: str) -> dict[int, str]:
    return {int(i): lab for i, lab in re.findall(r"// ---- variant (\d+): (\S+) ----", source)}


class FakeGpu:
    """Times each variant as a function of its label (smaller items = faster, by construction)."""

    def __init__(self, pool, fail=None):
        self.pool = pool
        self.fail = fail or {}
        self.calls = 0

    def __call__(self, binary, indices, gpu, *, sizes, runs, warmup, seed, timeout, stop=None):
        self.calls += 1
        src = self.pool.units[self._unit_of(binary)]
        labels = _labels_in(src)
        out = {}
        for i in indices:
            lab = labels[i]
            if lab in self.fail:
                out[i] = Result(self.fail[lab], "planted")
                continue
            items = int(re.search(r"ipt_(\d+)", lab).group(1))
            base = [1000.0 * (k + 1) for k in range(len(sizes))]
            var = [b * (0.5 + items / 32) for b in base]  # ipt_16 == base
            out[i] = Result("ok", "", list(sizes), var, base, runs)
        return out

    def _unit_of(self, binary) -> int:
        data = open(binary, "rb").read()
        return int(data.split(b" ")[1]) - 1


@pytest.fixture
def setup(loaded, machine, fake_pool, monkeypatch, tmp_path):
    gpu = FakeGpu(fake_pool)
    monkeypatch.setattr(R, "run_unit", gpu)

    def make(**kw):
        opts = Options(
            family="reduce",
            types=["float32"],
            db=tmp_path / "t.sqlite",
            work=tmp_path / "w",
            batch=4,
            strategy="exhaustive",
            **kw,
        )
        run = Runner(loaded.spec, machine, opts)
        run.pool = fake_pool
        return run

    return make, gpu


def test_search_confirm_and_decide(setup):
    make, gpu = setup
    run = make()
    rep = run.run_type("float32")
    assert rep.counts().get("ok", 0) > 0
    best = rep.ok_rows()[0]
    assert best.label.startswith("ipt_8.")  # the synthetic model makes 8 items fastest
    assert rep.decision is not None and rep.decision.winner is not None
    assert rep.decision.winner.startswith("ipt_8.")
    assert rep.winner.get("items") == 8
    assert len(rep.aa) == run.opts.confirm_rounds
    run.close()


def test_rerun_is_all_cache_hits(setup):
    make, gpu = setup
    make().run_type("float32")
    calls = gpu.calls
    rep = make().run_type("float32")
    assert gpu.calls == calls  # search and confirmation both come from the database
    assert all(r.cached for r in rep.rows.values())


def test_budget_then_resume_continues_without_remeasuring(setup):
    make, gpu = setup
    first = make(budget=6).run_type("float32")
    assert len(first.rows) == 6
    done = set(first.rows)
    second = make(budget=12).run_type("float32")
    assert len(second.rows) == 12
    assert all(second.rows[lab].cached for lab in done)
    assert sum(not r.cached for r in second.rows.values()) == 6


def test_failures_are_classified_and_do_not_stop_the_run(setup, fake_pool):
    make, gpu = setup
    gpu.fail = {
        "ipt_12.tpb_128.ipv_2": "wrong_result",
        "ipt_12.tpb_256.ipv_2": "timeout",
        "ipt_12.tpb_384.ipv_2": "launch_error",
    }
    fake_pool.fail_marker = "// ---- variant 1: ipt_8.tpb_128.ipv_2 ----"
    rep = make().run_type("float32")
    st = {lab: r.status for lab, r in rep.rows.items()}
    assert st["ipt_12.tpb_128.ipv_2"] == "wrong_result"
    assert st["ipt_12.tpb_256.ipv_2"] == "timeout"
    assert st["ipt_12.tpb_384.ipv_2"] == "launch_error"
    assert st["ipt_8.tpb_128.ipv_2"] == "compile_error"
    assert rep.counts()["ok"] >= 10  # the rest of the batch with the compile error was measured


def test_identical_kernels_are_measured_once(loaded, machine, fake_pool, monkeypatch, tmp_path):
    gpu = FakeGpu(fake_pool)
    monkeypatch.setattr(R, "run_unit", gpu)
    opts = Options(
        family="reduce",
        types=["float64"],
        db=tmp_path / "t.sqlite",
        work=tmp_path / "w",
        batch=4,
        strategy="exhaustive",
        confirm_top=1,
    )
    run = Runner(loaded.spec, machine, opts)
    run.pool = fake_pool
    rep = run.run_type("float64")
    kernels = {r.kernel for r in rep.rows.values()}
    assert len(kernels) < len(rep.rows)  # vec 2 and 4 collapse for 8-byte items
    measured = sum(len(_labels_in(u)) - 1 for u in fake_pool.units[:-1])  # minus the base, minus the confirm unit
    assert measured == len(kernels) - sum(1 for r in rep.rows.values() if r.status == "filtered")


def test_interrupt_keeps_what_was_measured(setup, monkeypatch):
    make, gpu = setup
    run = make()
    real = gpu.__call__
    count = {"n": 0}

    def flaky(*a, **kw):
        count["n"] += 1
        if count["n"] == 2:
            run.stop.set()  # what Ctrl-C does (runner.interrupt)
        return real(*a, **kw)

    monkeypatch.setattr(R, "run_unit", flaky)
    rep = run.run_type("float32")
    assert rep.interrupted
    kept = run.db.count()
    assert kept >= 4
    monkeypatch.setattr(R, "run_unit", gpu)
    rep2 = make().run_type("float32")
    assert not rep2.interrupted
    assert sum(r.cached for r in rep2.rows.values()) >= 4


def test_confirmation_unit_carries_a_twin_of_the_base(setup, fake_pool):
    make, gpu = setup
    rep = make().run_type("float32")
    confirm_unit = fake_pool.units[-1]
    labels = _labels_in(confirm_unit)
    assert labels[0] == "ipt_16.tpb_256.ipv_4"  # the base
    assert labels[max(labels)] == "twin:ipt_16.tpb_256.ipv_4"  # its separately compiled twin, for the A/A test
    assert len(rep.aa) == 3


def test_apply_writes_kept_evidence_when_nothing_wins(setup, small_spec, machine, monkeypatch):
    """`--apply` after a run whose best candidate did not beat the base: measured-and-kept evidence."""
    from muh.pipeline import load_file
    from muh.tune import cli as C

    make, _ = setup

    def same(binary, indices, g, *, sizes, runs, warmup, seed, timeout, stop=None):
        return {i: Result("ok", "", list(sizes), [1000.0] * len(sizes), [1000.0] * len(sizes), runs) for i in indices}

    monkeypatch.setattr(R, "run_unit", same)  # every variant exactly as fast as the base: nobody wins
    run = make()
    rep = run.run_type("float32")
    run.close()
    assert rep.decision is not None and rep.decision.winner is None
    ctx = {"loaded": load_file(small_spec), "machine": machine, "spec_path": small_spec}
    changed = C._apply(ctx, [rep])
    assert changed.startswith("float32: kept ")
    spec = load_file(small_spec).spec
    m = spec.measured["algorithms.reduce@lab.policies.float32.items"]
    assert m.kept and m.device == "Fake GPU"


def test_kept_evidence_names_another_kernel_not_a_relabelled_base(setup, small_spec, machine, fake_pool, monkeypatch):
    """float64: vec 2 and vec 4 compile to one kernel (16-byte loads), so `ipt_16.tpb_256.ipv_2` *is* the
    base. When it measures fastest (the base against itself: noise), the kept record must name the best
    different kernel (H200 campaign, reduce int64, 2026-12-01)."""
    from muh.pipeline import load_file
    from muh.tune import cli as C

    make, _ = setup

    def base_fastest(binary, indices, g, *, sizes, runs, warmup, seed, timeout, stop=None):
        labels = _labels_in(fake_pool.units[int(open(binary, "rb").read().split(b" ")[1]) - 1])
        out = {}
        for i in indices:
            t = 998.0 if labels[i].startswith("ipt_16.tpb_256.") else 1010.0 + i  # the base's kernel: "faster"
            out[i] = Result("ok", "", list(sizes), [t] * len(sizes), [1000.0] * len(sizes), runs)
        return out

    monkeypatch.setattr(R, "run_unit", base_fastest)
    run = make()
    rep = run.run_type("float64")
    run.close()
    relabelled = rep.rows["ipt_16.tpb_256.ipv_2"]
    assert relabelled.kernel == rep.base_kernel and relabelled.score.score > 1  # the base "won" against itself
    assert rep.decision is not None and rep.decision.winner is None
    best_other = max((r for r in rep.ok_rows() if r.kernel != rep.base_kernel), key=lambda r: r.score.score)
    ctx = {"loaded": load_file(small_spec), "machine": machine, "spec_path": small_spec}
    assert C._apply(ctx, [rep]).startswith("float64: kept ")
    m = load_file(small_spec).spec.measured["algorithms.reduce@lab.policies.float64.items"]
    assert m.kept and m.variant == best_other.label and m.score < 1


SPILLER = "ipt_8.tpb_128.ipv_2"  # the synthetic model's fastest: it would win if it were timed


def test_runner_rejects_a_spilling_variant_and_times_the_rest(
    loaded, machine, fake_pool, monkeypatch, tmp_path, capsys
):
    from muh.runtime import ptxas
    from muh.tune.view import Console

    pool = fake_pool
    plain = pool.submit

    def submit(source, args, nvcc, timeout):  # the kernel of the variant labelled SPILLER spills 4 bytes
        f = plain(source, args, nvcc, timeout)
        comp = f.result()
        idx = [i for i, lab in _labels_in(source).items() if lab == SPILLER]
        sym = [f"_ZN{len(f'muh_v{i}')}muh_v{i}6detail11reduce_kernILi8EEEvPKfPfi" for i in idx]
        comp.spills = tuple(ptxas.Spill(s, 4, 4) for s in sym)
        return f

    monkeypatch.setattr(pool, "submit", submit)
    gpu = FakeGpu(pool)
    asked: list[tuple[str, ...]] = []

    def measure(binary, indices, g, **kw):
        labels = _labels_in(pool.units[gpu._unit_of(binary)])
        asked.append(tuple(labels[i] for i in indices))
        return gpu(binary, indices, g, **kw)

    monkeypatch.setattr(R, "run_unit", measure)

    def run():
        opts = Options(
            family="reduce",
            types=["float32"],
            db=tmp_path / "t.sqlite",
            work=tmp_path / "w",
            batch=4,
            strategy="exhaustive",
        )
        r = Runner(loaded.spec, machine, opts)
        r.pool = pool
        try:
            return r.run_type("float32")
        finally:
            r.close()

    rep = run()
    row = rep.rows[SPILLER]
    assert row.status == "spills" and row.score is None
    assert "reduce_kern" in row.detail and "4 bytes spill stores, 4 bytes spill loads" in row.detail
    assert not any(SPILLER in labels for labels in asked)  # never timed
    # the rest of its unit was measured, and the winner is one the build accepts
    assert rep.counts()["ok"] == len(rep.rows) - rep.counts().get("filtered", 0) - 1
    assert rep.decision.winner is not None and rep.decision.winner != SPILLER
    Console().summary(rep)  # the printed table names the rejection and its reason
    shown = capsys.readouterr().out
    assert "1 spills" in shown and f"rejected (spills) {SPILLER}: register spills" in shown
    # the rejection is in the database: a second run reads it back and compiles nothing new for it
    units = len(pool.units)
    again = run()
    assert again.rows[SPILLER].status == "spills" and again.rows[SPILLER].cached
    assert len(pool.units) == units
