"""One `muh tune` run: space → static filter → strategy → compile fan-out (→ no-spill rule) → GPU workers → database
→ confirmation of the top candidates → decision (→ `--apply`).

The orchestrator is one thread. Compile jobs run on a pool (threads or Ray); one measuring
worker per GPU (a thread per local GPU, or a Ray actor per GPU of the cluster: ``muh.tune.workers``)
takes compiled units from a queue. Every result is committed to the database as it arrives, with the
GPU that measured it, so Ctrl-C (or a crash) loses at most the units in flight, and the next run with
the same arguments resumes — also with another number of GPUs: measured kernels are cache hits.
"""

from __future__ import annotations

import hashlib
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path

import muh
from muh.diagnostics import Diagnostic, MuhError
from muh.schema.models import Hardware, Spec
from muh.tune import stats
from muh.tune.compile import make_pool, store
from muh.tune.db import RunKey, Trial, TuneDB
from muh.tune.machine import Machine
from muh.tune.measure import Result, kill_all, run_unit
from muh.tune.space import Space, Variant, build_space, effective, static_filter
from muh.tune.strategy import make as make_strategy
from muh.tune.unit import (
    UnitVariant,
    emitter_reasons,
    nvcc_args,
    render_unit,
    source_hash,
    spill_detail,
    spilled_variants,
)
from muh.tune.workers import Job, Outcome, RayWorkers, ThreadWorkers


@dataclass
class Options:
    family: str
    types: list[str]
    budget: int | None = None
    time_limit: float | None = None  # seconds
    strategy: str = "random"
    seed: int = 0
    batch: int = 8  # variants per translation unit
    jobs: int | None = None  # compile workers
    runs: int = 15
    warmup: int = 3
    confirm_top: int = 3
    confirm_rounds: int = 3
    confirm_runs: int = 25
    sizes: tuple[int, ...] = stats.SIZES
    db: Path = Path(".muh-tune/tune.db")
    work: Path | None = None  # compiled units (default: a temporary folder, removed at the end)
    ray: bool = False
    ray_address: str | None = None
    topk: tuple[int, int] | None = None  # (row length, k) of the top-k problem; default unit.TOPK_COLS/TOPK_K
    gpus: int | None = None  # measuring workers (default: every GPU visible / in the Ray cluster)
    variant_timeout: float = 120.0
    compile_timeout: float = 900.0
    compile_only: bool = False
    implementation: str = "muh"  # whose kernels: muh's, or CUB's on candidate hubs (muh/tune/cub.py)


@dataclass
class Row:
    label: str
    kernel: str
    status: str
    detail: str = ""
    score: stats.Score | None = None
    cached: bool = False


@dataclass
class TypeReport:
    dtype: str
    space: Space
    rejected: int
    rows: dict[str, Row] = field(default_factory=dict)
    candidates: list[stats.Candidate] = field(default_factory=list)
    aa: list[stats.Score] = field(default_factory=list)
    decision: stats.Decision | None = None
    winner: Variant | None = None
    samples: int = 0
    interrupted: bool = False
    base_kernel: str = ""  # the base's compiled kernel: another label of the same kernel is no challenger
    reference: Row | None = None  # --implementation cub: CUB's shipped policy timed against the base

    def ok_rows(self) -> list[Row]:
        return sorted((r for r in self.rows.values() if r.status == "ok" and r.score), key=lambda r: -r.score.score)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows.values():
            out[r.status] = out.get(r.status, 0) + 1
        return out


class Events:
    """What the CLI shows; the runner only calls these (no printing here)."""

    def start(self, dtype: str, total: int, filtered: int, space: int) -> None: ...
    def advance(self, n: int = 1) -> None: ...
    def line(self, text: str) -> None: ...
    def phase(self, text: str) -> None: ...


def kernel_id(v: Variant, space: Space, hw: Hardware, cache: dict) -> str:
    eff = effective(v, space)
    if eff.key not in cache:
        cache[eff.key] = hashlib.sha256((eff.key + source_hash(eff, hw)).encode()).hexdigest()[:16]
    return cache[eff.key]


@dataclass
class _Search:
    """One space's search under way (Runner.run_space): what it was set up with, and what is in flight."""

    space: Space
    hw: Hardware
    rep: TypeReport
    key: RunKey
    base_kernel: str
    label: dict  # id(variant) -> label
    by_label: dict  # label -> variant
    kernel: dict  # label -> kernel id
    strategy: object
    gpus: int
    deadline: float | None
    scores: dict[str, float | None] = field(default_factory=dict)
    waiting: dict[str, list[str]] = field(default_factory=dict)  # kernel -> labels waiting for it
    units: dict[Future, list[tuple[str, str]]] = field(default_factory=dict)  # compiling
    measuring: dict[Future, list[tuple[int, str, str]]] = field(default_factory=dict)
    proposed: int = 0
    exhausted: bool = False
    base_spill_told: bool = False


class Runner:
    def __init__(self, spec: Spec, machine: Machine, opts: Options, events: Events | None = None):
        self.spec, self.machine, self.opts = spec, machine, opts
        self.events = events or Events()
        self.stop = threading.Event()
        self.db = TuneDB(opts.db)
        self.session = self.db.start_session(
            {
                "spec": spec.file,
                "family": opts.family,
                "types": opts.types,
                "strategy": opts.strategy,
                "seed": opts.seed,
                "budget": opts.budget,
                "gpu": machine.gpu_name,
                "fingerprint": machine.fingerprint,
            }
        )
        self.pool = None
        self.workers = None
        self._kcache: dict = {}
        self._tmp = None
        if opts.work is None:
            import tempfile

            self._tmp = tempfile.TemporaryDirectory(prefix="muh-tune-")
            opts.work = Path(self._tmp.name)

    # -- plumbing ----------------------------------------------------------------------------------
    def _key(
        self, akey: str, dtype: str, base_kernel: str, bucket: str | None = None, shape: tuple | None = None
    ) -> RunKey:
        m = self.machine
        if bucket is not None:  # each size bucket is its own run: its sizes only
            akey = f"{akey}[{bucket}]"
        if self.opts.implementation != "muh":  # muh's and CUB's trials never mix
            akey = f"{akey}[{self.opts.implementation}]"
        if self.opts.family == "topk":  # each problem shape is its own run: timings of two shapes never mix
            from muh.tune.unit import TOPK_COLS, TOPK_K

            cols, k = shape or self.opts.topk or (TOPK_COLS, TOPK_K)
            akey = f"{akey}[cols={cols},k={k}]"
        return RunKey(
            self.spec.name, akey, dtype, base_kernel, m.fingerprint, m.gpu_name, m.driver, m.toolkit, muh.__version__
        )

    def _pool(self):
        if self.pool is None:
            # compiled units are kept beside the results database (content-addressed: compile once)
            self.pool = make_pool(
                self.opts.ray, self.opts.ray_address, self.opts.jobs, Path(self.opts.db).parent / "tune-units"
            )
        return self.pool

    def _workers(self):
        """The measuring workers: a Ray actor per GPU with --ray/--ray-address, else a thread per local GPU."""
        if self.workers is None:
            o = self.opts
            if o.ray or o.ray_address:
                self.workers = RayWorkers(o.ray_address, o.gpus, stop=self.stop)
                # the cluster's GPUs, not this machine's, are what the trials are keyed by
                self.machine = self.workers.machine(self.machine.toolkit, self.machine.nvcc)
            else:
                gpus = self.machine.gpus[: o.gpus] if o.gpus else self.machine.gpus
                # looked up at call time, so tests can stand in a fake GPU for run_unit
                self.workers = ThreadWorkers(gpus, measure=lambda *a, **k: run_unit(*a, **k), stop=self.stop)
        return self.workers

    def _job(self, binary: Path, indices: list[int] | int, runs: int, seed: int) -> Job:
        """Measure ``indices`` of ``binary`` (an int n: indices 1..n) against its base (index 0)."""
        o = self.opts
        if isinstance(indices, int):
            indices = list(range(1, indices + 1))
        return Job(binary, list(indices), list(self.sizes), runs, o.warmup, seed, o.variant_timeout)

    def close(self) -> None:
        self.db.end_session(self.session, "interrupted" if self.stop.is_set() else "finished")
        if self.workers is not None:
            self.workers.close()
        if self.pool is not None:
            self.pool.shutdown()
        self.db.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def interrupt(self) -> None:
        self.stop.set()
        kill_all()

    # -- one element type --------------------------------------------------------------------------
    @property
    def sizes(self) -> tuple[int, ...]:
        """The sizes the space being tuned is measured at (a size bucket's own; else --sizes)."""
        return getattr(self, "_sizes", None) or tuple(self.opts.sizes)

    def run_type(self, dtype: str, bucket: tuple[int, int | None] | None = None) -> TypeReport:
        """Search ``dtype``'s space (of one size bucket: measured only at the sizes in it)."""
        return self.run_space(
            build_space(self.spec, self.opts.family, dtype, bucket, implementation=self.opts.implementation)
        )

    def run_space(self, space: Space) -> TypeReport:
        s = self._start(space)
        try:
            while not self.stop.is_set():
                self._propose(s)
                if s.deadline is not None and time.monotonic() >= s.deadline:
                    s.exhausted = True
                if not s.units and not s.measuring and s.exhausted:
                    break
                self._collect(s)
        except KeyboardInterrupt:
            self.interrupt()
            s.rep.interrupted = True
        # units that finished while stopping are kept too (a unit stopped mid-way reports only what it finished)
        for f in [f for f in s.measuring if f.done() and f.exception() is None]:
            self._measured(s.rep, s.scores, s.waiting, s.key, s.measuring.pop(f), f.result())
        if self.stop.is_set():
            s.rep.interrupted = True
            return s.rep
        if self.opts.implementation == "cub":
            self._reference(s)
        if not self.opts.compile_only:
            self._confirm(s.rep, space, s.hw, s.key, s.by_label, s.kernel, s.base_kernel)
        return s.rep

    def _start(self, space: Space) -> "_Search":
        """The search of ``space`` set up: its sizes, the filtered variants and their kernels, the strategy
        (E-FLAG when no size falls in its bucket, E-TUNE when the current policy cannot be generated)."""
        o = self.opts
        dtype = space.dtype
        self._sizes = tuple(space.sizes(o.sizes))
        if not self._sizes:
            raise MuhError(
                [
                    Diagnostic(
                        "E-FLAG",
                        f"no size of --sizes falls in the bucket `{space.bucket_label}` of {o.family} {dtype}",
                        None,
                        hint="add a size in it to --sizes",
                    )
                ]
            )
        hw = self.spec.hardware[self.spec.algorithms[space.akey].on]
        dims = tuple(space.dims)
        keep, rejected = static_filter(space, extra=lambda e: emitter_reasons(e, hw))
        base_reasons = emitter_reasons(effective(space.base, space), hw)
        if base_reasons:
            raise MuhError(
                [
                    Diagnostic(
                        "E-TUNE",
                        f"the current {o.family} {dtype} policy cannot be generated: {base_reasons[0]}",
                        self.spec.span_of(("algorithms", space.akey)),
                    )
                ]
            )
        base_kernel = kernel_id(space.base, space, hw, self._kcache)
        rep = TypeReport(dtype, space, len(rejected), base_kernel=base_kernel)
        gpus = 0 if o.compile_only else self._workers().count  # with Ray: the cluster's GPUs key the trials
        key = self._key(space.akey, dtype, base_kernel, space.bucket_label, space.shape)
        label = {id(v): v.label(dims) for v in keep}
        by_label = {v.label(dims): v for v in keep}
        kernel = {lab: kernel_id(v, space, hw, self._kcache) for lab, v in by_label.items()}
        total = min(len(keep), o.budget) if o.budget else len(keep)
        self.events.start(space.name, total, len(rejected), space.size)
        strategy = make_strategy(o.strategy, keep, o.seed)
        deadline = time.monotonic() + o.time_limit if o.time_limit else None
        return _Search(space, hw, rep, key, base_kernel, label, by_label, kernel, strategy, gpus, deadline)

    def _propose(self, s: "_Search") -> None:
        """Ask the strategy for batches while the compile pool and the GPUs have room (and time is left):
        database hits are recorded at once, a kernel already on its way is waited for, the rest compiled."""
        o = self.opts
        in_gpu = len(s.measuring)
        ahead = getattr(self._pool(), "workers", 2) + s.gpus
        while (
            not s.exhausted and len(s.units) + in_gpu < ahead and (s.deadline is None or time.monotonic() < s.deadline)
        ):
            n = o.batch if not o.budget else min(o.batch, o.budget - s.proposed)
            batch = s.strategy.next_batch(n, s.scores) if n > 0 else []
            if not batch:
                s.exhausted = True
                break
            s.proposed += len(batch)
            fresh = []
            for v in batch:
                lab = s.label[id(v)]
                k = s.kernel[lab]
                hit = self.db.get(s.key, k)
                if hit is not None:
                    self._record(s.rep, s.scores, lab, k, hit, cached=True)
                    continue
                if k in s.waiting:
                    s.waiting[k].append(lab)
                    continue
                s.waiting[k] = [lab]
                fresh.append((lab, k))
            if fresh:
                self._submit(s.units, s.space, s.hw, fresh)

    def _collect(self, s: "_Search") -> None:
        """Wait a little for a compiled or a measured unit, and take every one that is done."""
        done = [f for f in s.units if f.done()]
        measured = [f for f in s.measuring if f.done()]
        if not done and not measured:
            if s.units or s.measuring:
                wait(list(s.units) + list(s.measuring), timeout=0.2, return_when=FIRST_COMPLETED)
            else:
                time.sleep(0.05)
        for f in done:
            self._compiled(s, s.units.pop(f), f.result())
        for f in measured:
            self._measured(s.rep, s.scores, s.waiting, s.key, s.measuring.pop(f), f.result())

    def _compiled(self, s: "_Search", members: list[tuple[str, str]], comp) -> None:
        """A compiled unit of ``members`` (label, kernel): a killed one is queued again; one that
        compiled has its spilling variants rejected (the no-spill rule) and the rest sent to a GPU; a
        failed unit of several variants is split to find the culprit, one of one variant is its error."""
        o = self.opts
        space, rep, scores, waiting, key = s.space, s.rep, s.scores, s.waiting, s.key
        if comp.killed:
            if not self.stop.is_set():
                self._submit(s.units, space, s.hw, members)
            return
        if comp.ok:
            # the no-spill rule: a variant whose kernels spill registers is rejected, not timed
            spilled = spilled_variants(comp.spills)
            if 0 in spilled and not s.base_spill_told:  # the incumbent: still the yardstick, said once
                s.base_spill_told = True
                self.events.line(
                    f"note: the base {space.base.label(tuple(space.dims))} itself has {spill_detail(spilled[0])}"
                )
            indexed = []
            for i, (lab, k) in enumerate(members, start=1):
                if i in spilled:
                    self._finish(
                        rep, scores, waiting, key, k, Trial("spills", spill_detail(spilled[i]), variant=lab, kernel=k)
                    )
                else:
                    indexed.append((i, lab, k))
            if o.compile_only:
                for _, lab, k in indexed:
                    self._finish(
                        rep,
                        scores,
                        waiting,
                        key,
                        k,
                        Trial("compiled", "compile only", variant=lab, kernel=k),
                        store_db=False,
                    )
                return
            if indexed:
                path = store(comp.binary, o.work / "bin")
                job = self._job(path, [i for i, _, _ in indexed], o.runs, o.seed * 7919 + 1)
                s.measuring[self._workers().submit(job)] = indexed
        elif len(members) > 1:
            for m in members:  # find the culprit(s): one unit per variant
                self._submit(s.units, space, s.hw, [m])
        else:
            lab, k = members[0]
            self._finish(rep, scores, waiting, key, k, Trial("compile_error", comp.log[-1500:], variant=lab, kernel=k))

    def _submit(self, units, space: Space, hw: Hardware, members: list[tuple[str, str]], twin: bool = False) -> None:
        """Queue one unit: the base (index 0), ``members`` (1..n) and, with ``twin``, a second copy
        of the base (n+1) — a separate instance for an honest A/A test."""
        dims = tuple(space.dims)
        if getattr(self, "_by_space", None) is not space:
            self._by_space, self._by = space, {v.label(dims): v for v in space.variants()}
        by = self._by
        uv = [UnitVariant(0, space.base.label(dims), effective(space.base, space))]
        uv += [UnitVariant(i, lab, effective(by[lab], space)) for i, (lab, _) in enumerate(members, start=1)]
        if twin:
            uv.append(UnitVariant(len(uv), "twin:" + space.base.label(dims), effective(space.base, space)))
        # the unit is run with --sizes (this bucket's); its default sizes are the run's, so the units of
        # two size buckets are the same source and compile once (LocalPool's cache)
        src = render_unit(space.family, space.dtype, hw, uv, list(self.opts.sizes), space.shape or self.opts.topk)
        nvcc = self.machine.nvcc or "nvcc"
        units[self._pool().submit(src, nvcc_args(hw), nvcc, self.opts.compile_timeout)] = list(members)

    def _measured(self, rep, scores, waiting, key: RunKey, members: list[tuple[int, str, str]], out: Outcome) -> None:
        """Record a measured unit: ``members`` are (index in the unit, label, kernel) (BaseFailed and a dead
        cluster propagate to the CLI before this)."""
        for i, lab, k in members:
            r = out.results.get(i)
            if r is None and self.stop.is_set():
                continue  # not measured because of the interrupt: measure it on resume
            self._finish(
                rep,
                scores,
                waiting,
                key,
                k,
                self._trial(lab, k, r or Result("launch_error", "no result"), device=out.device),
            )

    def _trial(self, lab: str, k: str, r: Result, phase: str = "search", rnd: int = 0, device: str = "") -> Trial:
        t = Trial(**asdict(r), variant=lab, kernel=k, phase=phase, round=rnd, device=device)
        if r.status == "ok" and r.variant_ns and all(x > 0 for x in r.variant_ns):
            s = stats.score(r.base_ns, r.variant_ns, r.sizes)
            t.score, t.min, t.mean, t.max = s.score, s.min, s.mean, s.max
        return t

    def _finish(self, rep, scores, waiting, key, k: str, t: Trial, store_db: bool = True) -> None:
        if store_db:
            self.db.put(key, t, self.session)
        for lab in waiting.pop(k, [t.variant]):
            self._record(rep, scores, lab, k, t, cached=False)

    def _record(self, rep: TypeReport, scores, lab: str, k: str, t: Trial, cached: bool) -> None:
        sc = None
        if t.status == "ok" and t.score is not None:
            sc = stats.score(t.base_ns, t.variant_ns, t.sizes)
        rep.rows[lab] = Row(lab, k, t.status, t.detail, sc, cached)
        scores[lab] = sc.score if sc else None
        self.events.advance()
        if sc:
            self.events.line(sc.line(lab) + ("  (cached)" if cached else ""))
        else:
            self.events.line(
                f"{lab} {t.status}"
                + (f": {t.detail.splitlines()[0][:160]}" if t.detail else "")
                + ("  (cached)" if cached else "")
            )

    def _reference(self, s: "_Search") -> None:
        """`--implementation cub`: CUB's shipped policy — its public entry point, CUB's own hub for the GPU —
        timed against the base in one fresh process (``--confirm-runs`` per size, correctness-gated like any
        variant) and stored as phase ``reference``: the summary's reference row, so a kept incumbent or a
        winner is seen against what CUB ships. Never a candidate. ``--compile-only``: compiled only."""
        from muh.tune import cub

        o, space, hw = self.opts, s.space, s.hw
        eff = effective(space.base, space)
        k = "ref-" + cub.source_hash(eff, hw, nvcc_args(hw), cub.SHIPPED)
        t = None if o.compile_only else self.db.get(s.key, k, "reference", 0)
        cached = t is not None
        if t is None:
            uv = [UnitVariant(0, space.base.label(tuple(space.dims)), eff), UnitVariant(1, cub.SHIPPED, eff)]
            src = render_unit(space.family, space.dtype, hw, uv, list(o.sizes), space.shape)
            comp = self._pool().submit(src, nvcc_args(hw), self.machine.nvcc or "nvcc", o.compile_timeout).result()
            if not comp.ok:
                s.rep.reference = Row(cub.SHIPPED, k, "compile_error", comp.log[-800:])
                return
            if o.compile_only:
                return
            binary = store(comp.binary, o.work / "bin")
            out = self._workers().submit(self._job(binary, [1], o.confirm_runs, o.seed * 131 + 5)).result()
            t = self._trial(cub.SHIPPED, k, out.results.get(1) or Result("launch_error", "no result"), "reference")
            t.device = out.device
            self.db.put(s.key, t, self.session)
        sc = stats.score(t.base_ns, t.variant_ns, t.sizes) if t.status == "ok" and t.score is not None else None
        s.rep.reference = Row(cub.SHIPPED, k, t.status, t.detail, sc, cached)

    # -- confirmation and decision -----------------------------------------------------------------
    def _confirm(self, rep: TypeReport, space: Space, hw: Hardware, key: RunKey, by_label, kernel, base_kernel) -> None:
        o = self.opts
        seen, top = set(), []
        for r in rep.ok_rows():
            if r.kernel in seen or r.kernel == base_kernel or r.score.score <= 1.0:
                continue
            seen.add(r.kernel)
            top.append(r)
            if len(top) >= o.confirm_top:
                break
        if not top:
            rep.decision = stats.Decision(
                None,
                None,
                "no variant scored above the base in the search; keeping the incumbent",
                [(r.label, r.score.score) for r in rep.ok_rows()[:5]],
            )
            rep.samples = o.runs  # the evidence for keeping: the search's timed runs per size
            return
        self.events.phase(
            f"confirming the top {len(top)} of {rep.dtype} against the base ({o.confirm_rounds} rounds, A/A included)"
        )
        members = [(r.label, r.kernel) for r in top]
        missing = [
            rnd
            for rnd in range(o.confirm_rounds)
            if any(self.db.get(key, k, "confirm", rnd) is None for k in [base_kernel] + [m[1] for m in members])
        ]
        binary = None
        if missing:
            units: dict = {}
            self._submit(units, space, hw, members, twin=True)
            fut = next(iter(units))
            comp = fut.result()
            if not comp.ok:
                rep.decision = stats.Decision(
                    None, None, "the confirmation unit failed to compile; keeping the incumbent"
                )
                return
            binary = store(comp.binary, o.work / "bin")
        # A/A: the base against its twin (a separately compiled instance at the last index), so the
        # noise includes instance and placement effects, not only run-to-run jitter. Each round is one
        # process on one GPU (base, candidates and twin together); rounds spread over the workers.
        twin = len(members) + 1
        pending = {
            self._workers().submit(self._job(binary, twin, o.confirm_runs, o.seed * 104729 + 31 * rnd + 7)): rnd
            for rnd in missing
        }
        for fut, rnd in pending.items():
            if self.stop.is_set():
                rep.interrupted = True
                return
            out: Outcome = fut.result()
            for i, (lab, k) in list(enumerate(members, start=1)) + [
                (twin, ("twin:" + space.base.label(tuple(space.dims)), base_kernel))
            ]:
                r = out.results.get(i) or Result("launch_error", "no result")
                self.db.put(key, self._trial(lab, k, r, "confirm", rnd, device=out.device), self.session)
        cands = {lab: stats.Candidate(lab) for lab, _ in members}
        samples = 0
        for rnd in range(o.confirm_rounds):
            aa = self.db.get(key, base_kernel, "confirm", rnd)
            if aa is None or aa.status != "ok":
                continue
            rep.aa.append(stats.score(aa.base_ns, aa.variant_ns, aa.sizes))
            for lab, k in members:
                t = self.db.get(key, k, "confirm", rnd)
                if t is not None and t.status == "ok":
                    cands[lab].rounds.append(stats.score(t.base_ns, t.variant_ns, t.sizes))
                    samples += t.samples
        rep.candidates = list(cands.values())
        rep.decision = stats.decide(rep.candidates, rep.aa, self.sizes)
        rep.samples = samples // max(1, len(members))
        if rep.decision.winner:
            rep.winner = by_label[rep.decision.winner]

    # -- tuned against untuned ---------------------------------------------------------------------
    def _bucket_at(self, spec: Spec, dtype: str) -> tuple | None:
        """((lo, hi), size) of the bucket of ``spec``'s ``dtype`` policy that the measured problem falls in,
        where its buckets test a part of the family's shape (topk: the --topk-shape k); else None (the
        policy's own values, as without buckets)."""
        from muh import families
        from muh.tune.space import spec_bucket_key, spec_buckets

        key = spec_bucket_key(spec, self.opts.family, dtype)
        rec = families.find(self.opts.family)
        if rec is None:  # a family muh only describes (CUB's kernels): no shape of its own
            return None
        h = rec.harness
        if key is None or key not in h.shape_keys:
            return None
        value = (self.opts.topk or h.shape)[h.shape_keys.index(key)]
        return next(
            (
                (b, key)
                for b in spec_buckets(spec, self.opts.family, dtype)
                if b[0] <= value and (b[1] is None or value < b[1])
            ),
            None,
        )

    def compare(self, old: Spec, dtype: str) -> tuple[list[stats.Score], list[stats.Score], str, str]:
        """Time ``old``'s policy (base, index 0) against this spec's (index 1), correctness-gated.

        Returns (rounds of new-vs-old scores, A/A rounds, old label, new label).
        """
        from muh.tune.space import nominal_base

        o = self.opts
        at = self._bucket_at(self.spec, dtype)
        space = build_space(self.spec, o.family, dtype, *(at or ()), implementation=o.implementation)
        dims = tuple(space.dims)
        hw = self.spec.hardware[self.spec.algorithms[space.akey].on]
        olds = [a for a in old.algorithms.values() if a.family == o.family]
        if not olds:
            raise MuhError([Diagnostic("E-TUNE", f"the spec to compare with has no `{o.family}`", None)])
        old_at = self._bucket_at(old, dtype)
        old_vals, _ = nominal_base(olds[0], dtype, old_at[0] if old_at else None)
        old_v = Variant(o.family, dtype, tuple(sorted(old_vals.items())))
        uv = [
            UnitVariant(0, "old:" + old_v.label(dims), effective(old_v, space)),
            UnitVariant(1, "new:" + space.base.label(dims), effective(space.base, space)),
            UnitVariant(2, "old:" + old_v.label(dims), effective(old_v, space)),
        ]
        src = render_unit(o.family, dtype, hw, uv, list(o.sizes), o.topk)
        comp = self._pool().submit(src, nvcc_args(hw), self.machine.nvcc or "nvcc", o.compile_timeout).result()
        if not comp.ok:
            raise MuhError(
                [Diagnostic("E-TUNE", "the comparison unit does not compile", None, notes=(comp.log[-800:],))]
            )
        binary = store(comp.binary, o.work / "bin")
        rounds, aa = [], []
        for rnd in range(o.confirm_rounds):
            res = run_unit(
                binary,
                [1, 2],
                self.machine.gpus[0].index,
                sizes=list(o.sizes),
                runs=o.confirm_runs,
                warmup=o.warmup,
                seed=o.seed * 13 + rnd + 1,
                timeout=o.variant_timeout,
                stop=self.stop,
            )
            new, same = res.get(1), res.get(2)
            if new is None or new.status != "ok":
                raise MuhError(
                    [
                        Diagnostic(
                            "E-TUNE",
                            f"the spec's {o.family} {dtype} policy failed: "
                            f"{new.status if new else 'no result'}: {new.detail if new else ''}",
                            None,
                        )
                    ]
                )
            rounds.append(stats.score(new.base_ns, new.variant_ns, new.sizes))
            if same is not None and same.status == "ok":
                aa.append(stats.score(same.base_ns, same.variant_ns, same.sizes))
        return rounds, aa, old_v.label(dims), space.base.label(dims)
