"""`muh tune SPEC FAMILY --implementation cub`: CUB's own kernels measured on candidate policy hubs.

Without a GPU: the dry run's counts and reasons (validate's CUB rules on the candidate spec), the flag and
family errors, the database keys of the two implementations, a search with a fake compiler and GPU whose
winner (a sub-policy's value too) is written back with its evidence and builds; with nvcc: a candidate
ptxas refuses (too much shared memory) is a `compile_error` row and the unit's harness passes its
self-test. The GPU search itself: tests/gpu/test_cub_tune_gpu.py."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from muh.tune import runner as R
from muh.tune.measure import Result
from muh.tune.runner import Options, Runner

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "bench" / "cub_tune" / "h200_cub.muh"


@pytest.fixture
def no_gpu(monkeypatch):
    import muh.tune.machine as M

    monkeypatch.setattr(M, "detect", lambda: M.Machine((), "none", "13.0.88", "/usr/bin/nvcc"))


@pytest.fixture
def spec(tmp_path) -> Path:
    p = tmp_path / "h200_cub.muh"
    shutil.copy(SPEC, p)
    return p


def test_dry_run_select_if(cli, spec, no_gpu):
    code, out, err = cli("tune", spec, "select_if", "--implementation", "cub", "--dry-run")
    assert code == 0, err
    # threads [256, 384, 400, 512] x items [12, 17, 22]; 400 is no multiple of the warp (validate's rule)
    assert "select_if@h200 (CUB's kernels) int32: 12 variants in the space, 9 pass the static filter, 3 rejected" in out
    assert "base ipt_17.tpb_384; winners go to `policy int32`" in out
    assert re.search(r"rejected\s+3 × threads = N is not a multiple of warp_size = N on `h200`", out)


def test_dry_run_segmented_sort_varies_sub_policies(cli, spec, no_gpu):
    code, out, err = cli("tune", spec, "segmented_sort", "--implementation", "cub", "--dry-run")
    assert code == 0, err
    # large.items 2 x large.radix_bits 2 x small.threads_per_segment 2 x small.threads 2 = 16; small.threads =
    # 128 differs from medium's 256, which CUB's agent cannot take (one block size for both): 8 refused
    assert "segmented_sort@h200 (CUB's kernels) int32: 16 variants in the space, 8 pass the static filter" in out
    assert "base large_items_23.large_radix_bits_6.small_threads_256.small_threads_per_segment_2" in out
    assert re.search(r"rejected\s+8 × medium.threads = N differs from small.threads = N in segmented_sort", out)


def test_dry_run_radix_sort_refuses_digit_widths_cub_cannot_mix(cli, spec, no_gpu):
    code, out, err = cli("tune", spec, "radix_sort", "--implementation", "cub", "--dry-run")
    assert code == 0, err
    # onesweep threads 3 x items 3 x radix_bits 2 = 18; radix_bits = 7 differs from the histogram's 8, which
    # CUB holds as one member (ONESWEEP_RADIX_BITS): 9 refused at validate
    assert "radix_sort@h200 (CUB's kernels) int32: 18 variants in the space, 9 pass the static filter" in out
    assert re.search(r"rejected\s+9 × histogram.radix_bits = N differs from onesweep.radix_bits = N", out)


def test_a_family_cub_does_not_tune_is_refused_naming_those_that_work(cli, no_gpu):
    code, out, err = cli("tune", ROOT / "specs" / "h200.muh", "topk", "--implementation", "cub", "--dry-run")
    assert code == 2 and "Traceback" not in err + out
    assert "cannot measure `topk`: CUB does not tune it" in err
    assert "--implementation cub measures: select_if, segmented_sort, radix_sort" in err


def test_a_cub_family_without_a_harness_is_refused(cli, no_gpu):
    code, out, err = cli("tune", ROOT / "specs" / "h200.muh", "reduce", "--implementation", "cub", "--dry-run")
    assert code == 2 and "Traceback" not in err + out
    assert "cannot measure `reduce`: `muh tune` has no CUB harness for it yet" in err
    assert "select_if, segmented_sort, radix_sort" in err


def test_a_spec_of_several_hardware_or_a_parity_target_is_refused(cli, tmp_path, no_gpu):
    code, out, err = cli("tune", ROOT / "specs" / "nvidia.muh", "select_if", "--implementation", "cub", "--dry-run")
    assert code == 2 and "declares select_if on sm100, sm80, sm86, sm90" in err and "Traceback" not in err + out
    one = tmp_path / "parity.muh"
    text = SPEC.read_text()
    one.write_text(text.replace("  toolchain {", "  cub_parity = true\n  toolchain {", 1))
    code, out, err = cli("tune", one, "select_if", "--implementation", "cub", "--dry-run")
    assert code == 2 and "`h200` is a CUB parity target (`cub_parity = true`)" in err and "parity.muh:" in err


def test_implementation_typo(cli, spec, no_gpu):
    code, out, err = cli("tune", spec, "select_if", "--implementation", "cbu", "--dry-run")
    assert code == 2 and "Traceback" not in err + out
    assert "--implementation 'cbu' is not an implementation" in err and "did you mean `cub`" in err


def test_muh_implementation_points_to_cub(cli, spec, no_gpu):
    """Without --implementation, select_if (no muh kernel) says how to tune CUB's."""
    code, out, err = cli("tune", spec, "select_if", "--dry-run")
    assert code == 2 and "cannot measure `select_if` yet" in err and "--implementation cub" in err


def test_a_sub_policy_the_family_lacks_is_a_spec_error(cli, tmp_path):
    bad = tmp_path / "bad.muh"
    bad.write_text(SPEC.read_text().replace("large.items = [19, 23]", "huge.items = [19, 23]"))
    code, out, err = cli("check", bad)
    assert code != 0 and "`segmented_sort` has no sub-policy `huge`" in err and "bad.muh:" in err


def test_types_the_cub_harness_does_not_measure(cli, spec, no_gpu):
    code, out, err = cli("tune", spec, "select_if", "--implementation", "cub", "--types", "float16", "--dry-run")
    assert code == 2 and "does not measure select_if on float16" in err


# -- keys, a search with a fake compiler and GPU, write-back ------------------------------------------
def test_kernel_and_run_keys_carry_the_implementation(spec, machine, tmp_path):
    from dataclasses import replace

    from muh.pipeline import load_file
    from muh.tune.space import build_space, effective

    loaded = load_file(spec)
    space = build_space(loaded.spec, "select_if", "int32", implementation="cub")
    eff = effective(space.base, space)
    assert eff.implementation == "cub"
    assert replace(eff, implementation="muh").key != eff.key  # the same numbers, another implementation
    keys = {}
    for impl in ("muh", "cub"):
        run = Runner(
            loaded.spec,
            machine,
            Options(
                family="select_if", types=["int32"], db=tmp_path / "k.sqlite", work=tmp_path / "w", implementation=impl
            ),
        )
        keys[impl] = run._key(space.akey, "int32", "k").algorithm
        run.close()
    assert keys == {"muh": "select_if@h200", "cub": "select_if@h200[cub]"}


def _labels(source: str) -> dict[int, str]:
    return {int(i): lab for i, lab in re.findall(r"// ---- variant (\d+): (\S+) ----", source)}


class FastLabel:
    """A fake GPU: the variants whose label holds ``fast`` run at 0.8 of the base's time; ``fail`` labels get
    that status (a dispatch error, a wrong result)."""

    def __init__(self, pool, fast: str, fail: dict | None = None):
        self.pool, self.fast, self.fail = pool, fast, fail or {}

    def __call__(self, binary, indices, gpu, *, sizes, runs, warmup, seed, timeout, stop=None):
        labels = _labels(self.pool.units[int(open(binary, "rb").read().split(b" ")[1]) - 1])
        out = {}
        for i in indices:
            lab = labels[i]
            if lab.removeprefix("twin:") in self.fail:
                out[i] = Result(self.fail[lab], "planted")
                continue
            t = 800.0 if self.fast in lab and not lab.startswith("twin:") else 1000.0
            out[i] = Result("ok", "", list(sizes), [t] * len(sizes), [1000.0] * len(sizes), runs)
        return out


def _search(spec, machine, fake_pool, monkeypatch, tmp_path, family, gpu):
    from muh.pipeline import load_file

    monkeypatch.setattr(R, "run_unit", gpu)
    loaded = load_file(spec)
    opts = Options(
        family=family,
        types=["int32"],
        db=tmp_path / "t.sqlite",
        work=tmp_path / "w",
        batch=4,
        strategy="exhaustive",
        implementation="cub",
    )
    run = Runner(loaded.spec, machine, opts)
    run.pool = fake_pool
    rep = run.run_type("int32")
    run.close()
    return loaded, rep


def test_units_are_cub_dispatch_on_the_candidates_hubs(spec, machine, fake_pool, monkeypatch, tmp_path):
    """Every unit holds each candidate's hub as `muh build` writes it, under its own namespace, and the
    run entry calls the hub's convenience entry (CUB's DispatchSelectIf with that hub)."""
    from muh.pipeline import load_file, render

    _, rep = _search(spec, machine, fake_pool, monkeypatch, tmp_path, "select_if", FastLabel(fake_pool, "ipt_12"))
    unit = fake_pool.units[0]
    assert "#include <cub/cub.cuh>" in unit and "#define muh muh_v0" in unit and "#define muh muh_v1" in unit
    assert "muh::cub::select_if::run(" in unit and "::cub::DispatchSelectIf<" in unit
    built = {f.path: f.content for f in render(load_file(spec))}["include/muh/cub/select_if.cuh"]
    hub = built[built.index("namespace muh {") :]
    assert hub.split("\n", 1)[1][:2000] in unit  # the base's hub: the build's own text (the spec's policy)
    assert rep.counts().get("ok") == 9


def test_cub_s_shipped_policy_is_a_reference_row(spec, machine, fake_pool, monkeypatch, tmp_path, capsys):
    """Besides the candidates, CUB's public entry point (CUB's own hub for the GPU) is timed against the
    base in a unit of its own: a reference row in the summary and the database, never a candidate."""
    import sqlite3

    from muh.tune.view import Console

    gpu = FastLabel(fake_pool, "cub:shipped")  # CUB's shipped policy 1.25x the base's speed
    _, rep = _search(spec, machine, fake_pool, monkeypatch, tmp_path, "select_if", gpu)
    ref_unit = next(u for u in fake_pool.units if "// ---- variant 1: cub:shipped ----" in u)
    assert "::cub::DeviceSelect::If(temp" in ref_unit and "muh_v1::cub::select_if" not in ref_unit
    assert rep.reference.status == "ok" and rep.reference.score.score == pytest.approx(1.25)
    assert "cub:shipped" not in rep.rows and rep.decision.winner is None
    rows = sqlite3.connect(tmp_path / "t.sqlite").execute("SELECT variant FROM trials WHERE phase = 'reference'")
    assert [r[0] for r in rows] == ["cub:shipped"]
    capsys.readouterr()
    Console(5).summary(rep)
    out = capsys.readouterr().out
    assert "reference: CUB's shipped policy (CUB's public entry point, its own hub for this GPU): " in out
    assert "base time / its time = 1.2500 (per size 1.250, 1.250, 1.250, 1.250)" in out


def test_search_applies_the_winner_with_evidence(cli, spec, machine, fake_pool, monkeypatch, tmp_path):
    from muh.pipeline import load_file
    from muh.tune import cli as C

    loaded, rep = _search(
        spec, machine, fake_pool, monkeypatch, tmp_path, "select_if", FastLabel(fake_pool, "ipt_12.tpb_256")
    )
    assert rep.decision.winner == "ipt_12.tpb_256"
    ctx = {"loaded": loaded, "machine": machine, "spec_path": spec}
    assert C._apply(ctx, [rep]) == "int32: items = 12, threads = 256"
    after = load_file(spec)
    pol = after.spec.algorithms["select_if@h200"].policies["int32"]
    assert (pol.threads, pol.items) == (256, 12)
    assert after.spec.measured["algorithms.select_if@h200.policies.int32.items"].variant == "ipt_12.tpb_256"
    code, out, err = cli("build", spec, "-o", tmp_path / "out")  # the next build regenerates the hub
    assert code == 0, err
    hub = (tmp_path / "out" / "include" / "muh" / "tuning" / "tuning_select_if.cuh").read_text()
    assert "256" in hub


def test_a_sub_policy_winner_is_written_into_its_block(spec, machine, fake_pool, monkeypatch, tmp_path):
    from muh.pipeline import load_file
    from muh.tune import cli as C

    gpu = FastLabel(fake_pool, "large_items_19.large_radix_bits_6.small_threads_256.small_threads_per_segment_4")
    loaded, rep = _search(spec, machine, fake_pool, monkeypatch, tmp_path, "segmented_sort", gpu)
    assert rep.winner is not None
    ctx = {"loaded": loaded, "machine": machine, "spec_path": spec}
    assert C._apply(ctx, [rep]) == "int32: large.items = 19, small.threads_per_segment = 4"
    text = spec.read_text()
    assert re.search(r"policy int32 \{\s+large \{\s+items = 19 @measured\(", text)
    assert re.search(r"\s+small \{\s+threads_per_segment = 4 @measured\(", text)
    after = load_file(spec).spec.algorithms["segmented_sort@h200"].policies["int32"]
    assert after.subs["large"].items == 19 and after.subs["small"].threads_per_segment == 4


def test_failed_candidates_are_never_winners(spec, machine, fake_pool, monkeypatch, tmp_path):
    """The fastest labels fail CUB's dispatch or the gate: they are stored with their status, never ranked."""
    gpu = FastLabel(
        fake_pool,
        "ipt_12",
        fail={"ipt_12.tpb_256": "launch_error", "ipt_12.tpb_384": "wrong_result", "ipt_12.tpb_512": "wrong_result"},
    )
    _, rep = _search(spec, machine, fake_pool, monkeypatch, tmp_path, "select_if", gpu)
    st = {lab: r.status for lab, r in rep.rows.items()}
    assert st["ipt_12.tpb_256"] == "launch_error" and st["ipt_12.tpb_384"] == "wrong_result"
    assert rep.decision.winner is None  # every fast one failed: the incumbent stays


def test_resume_reads_the_database(spec, machine, fake_pool, monkeypatch, tmp_path):
    gpu = FastLabel(fake_pool, "ipt_22")
    _search(spec, machine, fake_pool, monkeypatch, tmp_path, "select_if", gpu)
    n = len(fake_pool.units)
    _, rep = _search(spec, machine, fake_pool, monkeypatch, tmp_path, "select_if", gpu)
    assert len(fake_pool.units) == n and all(r.cached for r in rep.rows.values())


# -- real nvcc ----------------------------------------------------------------------------------------
@pytest.mark.nvcc
@pytest.mark.slow
def test_ptxas_rejected_candidate_is_a_compile_error_row(cli, spec, nvcc, monkeypatch, tmp_path):
    """large.radix_bits = 7: CUB's large-segment kernels then need more than 48 KiB of static shared
    memory, which ptxas refuses (muh's own checks let it through): a compile_error row, never measured."""
    import muh.tune.machine as M

    monkeypatch.setattr(M, "detect", lambda: M.Machine((), "none", "13.0.88", nvcc))
    text = spec.read_text()
    a = text.index("  space {\n    large.items")
    spec.write_text(text[:a] + "  space { large.radix_bits = [7] }\n}\n")
    db = tmp_path / "t.sqlite"
    code, out, err = cli("tune", spec, "segmented_sort", "--implementation", "cub", "--compile-only", "--db", db)
    assert code == 0, err
    assert "large_radix_bits_7 compile_error" in out and "1 compile_error" in out
    import sqlite3

    rows = sqlite3.connect(db).execute("SELECT algorithm, variant, status, detail FROM trials").fetchall()
    assert [(r[0], r[1], r[2]) for r in rows] == [("segmented_sort@h200[cub]", "large_radix_bits_7", "compile_error")]
    assert "uses too much shared data" in rows[0][3]


@pytest.mark.nvcc
@pytest.mark.slow
def test_select_if_unit_compiles_without_spills_and_passes_its_self_test(spec, nvcc, tmp_path):
    from muh.pipeline import load_file
    from muh.runtime import ptxas
    from muh.tune.space import build_space, effective, static_filter
    from muh.tune.unit import UnitVariant, nvcc_args, render_unit

    loaded = load_file(spec)
    space = build_space(loaded.spec, "select_if", "int32", implementation="cub")
    hw = loaded.spec.hardware["h200"]
    keep, _ = static_filter(space)
    other = next(v for v in keep if v.label(tuple(space.dims)) == "ipt_22.tpb_256")
    uv = [
        UnitVariant(0, "base", effective(space.base, space)),
        UnitVariant(1, "ipt_22.tpb_256", effective(other, space)),
    ]
    src = tmp_path / "unit.cu"
    src.write_text(render_unit("select_if", "int32", hw, uv, [1 << 16]))
    exe = tmp_path / "unit"
    res = subprocess.run([nvcc, *nvcc_args(hw), "-o", str(exe), str(src)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
    assert not ptxas.spills(res.stdout + res.stderr)
    got = subprocess.run([str(exe), "--self-test"], capture_output=True, text=True)
    assert got.returncode == 0 and '"self_test": "ok"' in got.stdout


def test_against_times_this_spec_s_hub_against_an_old_one(spec, machine, fake_pool, monkeypatch, tmp_path):
    """`--against OLD.muh` with --implementation cub: one unit of the old spec's hub (base), this spec's,
    and the old one's twin, each CUB's dispatch on its candidate hub."""
    from muh.pipeline import load_file

    old = tmp_path / "old.muh"
    old.write_text(spec.read_text().replace("threads = 384\n    items = 17", "threads = 256\n    items = 17"))
    monkeypatch.setattr(R, "run_unit", FastLabel(fake_pool, "new:"))
    opts = Options(
        family="select_if", types=["int32"], db=tmp_path / "t.sqlite", work=tmp_path / "w", implementation="cub"
    )
    run = Runner(load_file(spec).spec, machine, opts)
    run.pool = fake_pool
    rounds, aa, old_label, new_label = run.compare(load_file(old).spec, "int32")
    run.close()
    assert (old_label, new_label) == ("ipt_17.tpb_256", "ipt_17.tpb_384")
    unit = fake_pool.units[-1]
    assert _labels(unit) == {0: "old:ipt_17.tpb_256", 1: "new:ipt_17.tpb_384", 2: "old:ipt_17.tpb_256"}
    assert unit.count("muh::cub::select_if::run(") == 3 and "::cub::DispatchSelectIf<" in unit
    assert [r.score for r in rounds] == [pytest.approx(1.25)] * opts.confirm_rounds


def test_apply_edits_an_existing_sub_policy_block_and_adds_a_missing_one():
    """`--apply` into a policy that has a `large { … }` block: the value goes into it (replaced or added),
    and a sub-policy the policy lacks gets a block of its own; every other byte is kept."""
    from muh.schema import load
    from muh.tune.rewrite import Evidence, apply_winner

    text = SPEC.read_text().replace(
        "  space {\n    large.items",
        "  policy int32 {\n    large { radix_bits = 6  items = 23 }  # CUB's\n  }\n  space {\n    large.items",
    )
    ev = Evidence(
        device="GPU",
        date="2026-12-06",
        toolkit="t",
        fingerprint="f",
        samples=3,
        variant="v",
        score=1.1,
        min=1.0,
        mean=1.05,
        max=1.1,
    )
    out = apply_winner(text, "x.muh", "segmented_sort", "h200", "int32", {"large.items": 19, "small.items": 5}, ev)
    block = out[out.index("policy int32 {") : out.index("  space {\n    large.items")]
    assert block.count("large {") == 1 and block.count("small {") == 1 and "# CUB's" in block  # edited, not doubled
    assert re.search(r"large \{[^}]*items = 19 @measured\(device = \"GPU\"", block)
    assert re.search(r"small \{\s*items = 5 @measured\(device = \"GPU\"", block)
    pol = load(out, "x.muh").algorithms["segmented_sort@h200"].policies["int32"]
    assert (pol.subs["large"].items, pol.subs["large"].radix_bits, pol.subs["small"].items) == (19, 6, 5)


@pytest.mark.parametrize(
    "family, dispatch, public",
    [
        ("select_if", "DispatchSelectIf", "DeviceSelect::If"),
        ("segmented_sort", "DispatchSegmentedSort", "DeviceSegmentedSort::SortKeys"),
        ("radix_sort", "DispatchRadixSort", "DeviceRadixSort::SortKeys"),
    ],
)
def test_every_family_s_units_and_reference(family, dispatch, public, spec, machine, fake_pool, monkeypatch, tmp_path):
    """Each family's units call its hub's convenience entry (CUB's Dispatch… with the candidate's hub); its
    reference unit calls CUB's public entry point; every filtered candidate is measured."""
    _, rep = _search(spec, machine, fake_pool, monkeypatch, tmp_path, family, FastLabel(fake_pool, "none"))
    search = fake_pool.units[0]
    assert f"muh::cub::{family}::run(" in search and f"::cub::{dispatch}<" in search
    ref = next(u for u in fake_pool.units if "// ---- variant 1: cub:shipped ----" in u)
    assert f"::cub::{public}(temp" in ref
    assert rep.counts() == {"ok": len(rep.rows)} and rep.reference.status == "ok"


GATE_MAIN = r"""
// The family fragment's host reference (check_output) on host vectors: a right output passes, each planted
// wrong one fails with a reason. No GPU: the fragment's CUDA calls only allocate (and may fail here).
int main() {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> dist(-100, 100);
  Ctx c;
  int failures = 0;
  for (long long n : {1003LL, 70001LL}) {
    std::vector<T> h(n);
    for (auto& x : h) x = (T)dist(rng);
    std::vector<T> o = expected(h, n);
    std::string why;
    if (!check_output(c, h, o, n, why)) { printf("right output refused (n=%lld): %s\n", n, why.c_str()); ++failures; }
    for (int k = 0; k < (int)plants(n); ++k) {
      std::vector<T> bad = o;
      plant(bad, n, k);
      why.clear();
      if (check_output(c, h, bad, n, why) || why.empty()) { printf("plant %d passed (n=%lld)\n", k, n); ++failures; }
      else printf("plant %d refused: %s\n", k, why.c_str());
    }
  }
  printf(failures ? "FAIL\n" : "OK\n");
  return failures ? 1 : 0;
}
"""

EXPECTED = {
    "select_if": r"""
static std::vector<T> expected(const std::vector<T>& h, long long n) {
  std::vector<T> o(out_count(n) + 1, (T)-1);
  int k = 0;
  for (long long i = 0; i < n; ++i) if (h[i] < (T)50) o[k++] = h[i];
  memcpy((char*)o.data() + (((size_t)n * sizeof(T) + 3) & ~(size_t)3), &k, sizeof k);
  return o;
}
static long long plants(long long) { return 3; }
static void plant(std::vector<T>& o, long long n, int k) {
  char* at = (char*)o.data() + (((size_t)n * sizeof(T) + 3) & ~(size_t)3);
  int cnt; memcpy(&cnt, at, sizeof cnt);
  if (k == 0) { cnt -= 1; memcpy(at, &cnt, sizeof cnt); }   // one element short
  if (k == 1) o[cnt / 2] += 1;                                 // a wrong element
  if (k == 2) std::swap(o[0], o[cnt - 1]);                     // out of order (if they differ)
  if (k == 2 && o[0] == o[cnt - 1]) o[0] += 1;
}
""",
    "segmented_sort": r"""
static std::vector<T> expected(const std::vector<T>& h, long long n) {
  Segments& s = segments_for(n);
  std::vector<T> o(h.begin(), h.begin() + n);
  for (long long i = 0; i < s.count; ++i) std::sort(o.begin() + s.h[i], o.begin() + s.h[i + 1]);
  o.push_back((T)-1);
  return o;
}
static long long plants(long long) { return 2; }
static void plant(std::vector<T>& o, long long n, int k) {
  Segments& s = segments_for(n);
  if (k == 0) {  // one segment out of order: its first and last keys swapped
    for (long long i = 0; i < s.count; ++i)
      if (o[s.h[i]] != o[s.h[i + 1] - 1]) { std::swap(o[s.h[i]], o[s.h[i + 1] - 1]); break; }
  }
  if (k == 1) { long long i = s.h[s.count / 2]; o[i] += 1; }  // one key changed
}
""",
    "radix_sort": r"""
static std::vector<T> expected(const std::vector<T>& h, long long n) {
  std::vector<T> o(h.begin(), h.begin() + n);
  std::sort(o.begin(), o.end());
  o.push_back((T)-1);
  return o;
}
static long long plants(long long) { return 2; }
static void plant(std::vector<T>& o, long long n, int k) {
  if (k == 0) std::reverse(o.begin(), o.begin() + n);  // descending
  if (k == 1) o[n / 2] += 1;
}
""",
}


@pytest.mark.nvcc
@pytest.mark.parametrize("family", ["select_if", "segmented_sort", "radix_sort"])
def test_the_gate_s_host_reference_refuses_wrong_outputs(family, nvcc, tmp_path):
    """The correctness gate's host reference of each CUB family's fragment, compiled as the unit compiles it
    (nvcc), run on the host: the right output passes; a short count, a wrong key, keys out of order, a
    segment out of order, descending keys are each refused with a reason."""
    from muh.codegen.templates import render
    from muh.tune.cub_harness import HARNESSES

    h = HARNESSES[family]
    api = "".join(f"  {f.ret} (*{f.name[4:]})({', '.join(t for t, _ in f.args)});\n" for f in h.api)
    head = (
        "#include <cuda_runtime.h>\n#include <stdio.h>\n#include <string.h>\n#include <algorithm>\n#include <random>\n"
        "#include <string>\n#include <vector>\ntypedef int T;\nconst bool kIsFloat = false;\n"
        "static double to_d(T v) { return (double)v; }\n"
        f"struct Api {{\n{api}}};\n"
        "struct Ctx { T* in = nullptr; T* out = nullptr; void* ws[1] = {}; size_t ws_size[1] = {};\n"
        "  cudaStream_t s = 0; };\n"
    )
    frag = render("muh.tune", h.harness_template, family=family, threshold="50")
    src = tmp_path / "gate.cu"
    src.write_text(head + frag + EXPECTED[family] + GATE_MAIN)
    exe = tmp_path / "gate"
    res = subprocess.run([nvcc, "-std=c++17", "-o", str(exe), str(src)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.rstrip().endswith("OK"), run.stdout[-3000:]
    assert run.stdout.count("refused:") == 2 * (3 if family == "select_if" else 2)


def test_a_cccl35_spec_is_refused_saying_why(cli, spec, no_gpu):
    """`muh tune` measures CUB 3.0's dispatch on hubs; a spec naming CCCL 3.5 gets selectors, no hubs."""
    text = spec.read_text()
    assert text.count('cuda = "13.0"') == 1
    spec.write_text(text.replace('cuda = "13.0"', 'cuda = "13.0"  cccl = "3.5"'))
    code, out, err = cli("tune", spec, "select_if", "--implementation", "cub", "--dry-run")
    assert code == 0, err
    assert "12 variants in the space, 0 pass the static filter, 12 rejected" in out
    assert "generates no CUB hub for select_if (its toolchain says cccl = 'N.N'" in out
    assert "tune a copy of the spec without `cccl`" in out
