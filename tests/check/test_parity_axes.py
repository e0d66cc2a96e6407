"""Parity fails closed on CUB's case list (operators, offset widths, types), and its cache trusts nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from muh.check import cub_truth, parity
from muh.check import tuning_headers as th
from muh.codegen.base import BuildContext
from muh.derive import derive, scaling
from muh.derive.resolve import resolve_query
from muh.diagnostics import MuhError
from muh.schema import load
from muh.schema.policy_key import Query

ROOT = Path(__file__).resolve().parents[2]
NVIDIA = ROOT / "specs" / "nvidia.muh"


def without_block(text: str, head: str) -> str:
    at = text.index(head)
    end = text.index("\n}\n", at) + 3
    return text[:at] + text[end:]


def in_block(text: str, head: str, old: str, new: str) -> str:
    at = text.index(old, text.index(head))
    assert at < text.index("\n}\n", text.index(head))
    return text[:at] + new + text[at + len(old) :]


def with_scope(text: str, *patterns: str) -> str:
    """``text`` with ``patterns`` added to its `parity { out_of_scope = […] }` (the block added after the
    version line when the spec has none)."""
    listed = ", ".join(f'"{p}"' for p in patterns)
    for opening in ("\n  out_of_scope = [", "\nparity { out_of_scope = ["):
        if opening in text:
            return text.replace(opening, opening + listed + ", ", 1)
    head, _, rest = text.partition("\n")
    return head + "\nparity {\n  out_of_scope = [" + listed + "]\n}\n" + rest


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "specs" / "nvidia.muh"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


# ---- the case list comes from CUB, not from the spec ---------------------------------------------


def test_case_list_does_not_depend_on_the_spec():
    full = load(NVIDIA.read_text(), "specs/nvidia.muh")
    cut = load(without_block(NVIDIA.read_text(), "algorithm reduce on sm90 {"), "specs/nvidia.muh")
    assert parity.expected_probes(full) == parity.expected_probes(cut)
    compared, gaps, excused = parity.coverage(cut)
    assert {parity.case_name(p) for p, _ in gaps} == {
        parity.case_name(p) for p in parity.expected_probes(full) if p.algorithm == "reduce" and p.cc == 900
    }
    # (2 float types x 4 operators + 4 integer types x 7 + 3 records x 4) x 2 offset widths
    assert len(gaps) == 96 and {p.value != "" for p, _ in excused} == {True}  # only keys and values that differ


def test_out_of_scope_excuses_by_pattern():
    text = with_scope(
        without_block(NVIDIA.read_text(), "algorithm reduce on sm90 {"), "reduce sm90", "scan * * bit_* *"
    )
    spec = load(text, "specs/nvidia.muh")
    compared, gaps, excused = parity.coverage(spec)
    assert not gaps
    # scan bit_* cases are covered, so compared; the spec's own scope excuses keys and values that differ
    assert {why for p, why in excused if not p.value} == {"reduce sm90"}
    counts = parity.family_counts(spec)
    assert counts["reduce"] == (384, 288, 96)


def test_a_thread_count_cubs_agents_cannot_run_is_an_error_in_either_mode():
    """Issue 41: the hub `muh build` generates runs CUB's own kernels, whose agents run whole warps, so a count
    that is not a multiple of the warp is an error at its line even where the spec reproduces CUB's policies
    (it was accepted there before the hubs existed)."""
    base = NVIDIA.read_text()
    odd = in_block(base, "algorithm for_each on sm90", "threads = 256", "threads = 100")
    for text in (odd, odd.replace("cub_parity = true", "cub_parity = false")):
        with pytest.raises(MuhError) as err:
            load(text, "specs/nvidia.muh")
        assert any(d.code == "E-WARP" and "threads = 100" in d.message for d in err.value.diagnostics)


@pytest.mark.nvcc
def test_planted_gaps_exit_1_naming_what_is_missing(cli, tmp_path, nvcc):
    # a deleted block
    code, out, err = cli(
        "check", write(tmp_path, without_block(NVIDIA.read_text(), "algorithm reduce on sm90 {")), "--only", "parity"
    )
    assert code == 1, out + err
    assert (
        "GAP reduce: 96 CUB cases not compared (no `algorithm reduce on sm90`): reduce sm90 float32 plus offset32"
        in out
    )
    assert re.search(r"\n\s+reduce +384 +288 +0 +96\n", out)
    assert "96 MISSING" in out.splitlines()[-1] or "96 MISSING" in out
    # a dropped type
    text = in_block(
        NVIDIA.read_text(), "algorithm scan on sm100", "types = [float32, float64, int32,", "types = [float32, int32,"
    )
    code, out, err = cli("check", write(tmp_path, text), "--only", "parity")
    assert code == 1, out + err
    assert (
        "GAP scan: 8 CUB cases not compared (`float64` is not in the `types` of `algorithm scan on sm100`): "
        "scan sm100 float64 plus offset32"
    ) in out
    # the same gap, declared out of scope: passes, and says so
    code, out, err = cli("check", write(tmp_path, with_scope(text, "scan sm100 float64")), "--only", "parity")
    assert code == 0, out + err
    assert re.search(r"parity: \d+ cases passed; CUB policy cases: 4244 expected, 3868 compared, 376 out of scope", out)


def test_tuning_headers_count_and_gaps_without_compiling():
    ctx = BuildContext(*(lambda s: (s, derive(s)))(load(NVIDIA.read_text(), "specs/nvidia.muh")))
    eq = th.equality(ctx, th.header_files(ctx))
    left = ("radix_sort_pairs",)  # no key/value tunings in the spec: out of scope
    assert eq.asserts == sum(not (p.value and p.algorithm in left) for p in cub_truth.policy_probes()) and not eq.gaps
    assert eq.source.count("static_assert(muh_probe::cub_") > eq.asserts  # plus one per field, for the message
    text = in_block(NVIDIA.read_text(), "algorithm histogram on sm90", "types = [", "types = [float32, ")
    text = in_block(text, "algorithm histogram on sm90", "uint8, ", "")
    spec = load(text, "specs/nvidia.muh")
    eq = th.equality(BuildContext(spec, derive(spec)), th.header_files(BuildContext(spec, derive(spec))))
    assert eq.gaps == ("histogram sm90 uint8: `uint8` is not in the `types` of `algorithm histogram on sm90`",)


# ---- operators: the sm_80/90 scan tunings hold for every basic operator ---------------------------


@pytest.mark.nvcc
def test_scan_with_max_follows_cub(nvcc):
    spec = load(NVIDIA.read_text(), "specs/nvidia.muh")
    truth = cub_truth.load_truth(
        probes=[
            cub_truth.PolicyProbe("scan", 900, "float32", "max", 32),
            cub_truth.PolicyProbe("scan", 900, "float32", "mul", 32),
        ]
    )
    cases = {c.case: c for c in parity.policy_parity(spec, derive(spec), truth)}
    case = cases["scan sm90 float32 max offset32"]
    assert case.ok and "threads=128 items=24" in case.detail and "delay.ns=688" in case.detail, case
    assert cases["scan sm90 float32 mul offset32"].ok  # not a basic operator: CUB's untuned default
    assert "items=15" in cases["scan sm90 float32 mul offset32"].detail
    # keyed on `.plus`, as muh had it, the max case is CUB's mismatch again
    old = in_block(NVIDIA.read_text(), "algorithm scan on sm90", "policy float32.primitive", "policy float32.plus")
    spec = load(old, "specs/nvidia.muh")
    cases = {c.case: c for c in parity.policy_parity(spec, derive(spec), truth)}
    bad = cases["scan sm90 float32 max offset32"]
    assert not bad.ok and ("items", 15, 24) in {f[:3] for f in bad.failures}


def test_operator_classes_layer_by_specificity():
    spec = load(NVIDIA.read_text(), "specs/nvidia.muh")
    text = NVIDIA.read_text()

    def line_of(key: str) -> int:
        return text[: text.index(f"policy {key} {{", text.index("algorithm scan on sm100"))].count("\n") + 1

    def line(resolved) -> int:
        return int(resolved.where.split(":")[1])

    plus64 = resolve_query(spec, "scan@sm100", Query("float32", "plus", 64))
    assert plus64.values["modifier"].value == "ca"
    assert line_of("float32.plus.offset64") < line(plus64.values["modifier"]) < line_of("float32.plus.offset64") + 5
    plus32 = resolve_query(spec, "scan@sm100", Query("float32", "plus", 32))
    assert plus32.values["modifier"].value == "default" and plus32.value("threads") == 384
    maxed = resolve_query(spec, "scan@sm100", Query("float32", "max", 64))
    assert "float32.primitive" in maxed.values["delay"].rule and maxed.value("items") == 24
    mul = resolve_query(spec, "scan@sm100", Query("float32", "mul", 64))
    assert mul.values["delay"].rule.endswith("policy default") and mul.value("items") == 15


# ---- a parity hardware whose shared memory and warp differ from CUB's constants ---------------------


def b200x(cub_parity: bool) -> str:
    """sm_100 with a 64-thread warp and 32 KiB per block (no NVIDIA card: a CUDA-compatible one of a vendor
    with 64-lane warps), running CUB's sm_100 reduce tuning; every other CUB case is declared out of scope."""
    text = NVIDIA.read_text()
    hw = text[text.index("hardware sm100 {") : text.index("\n}\n", text.index("hardware sm100 {")) + 3]
    hw = (
        hw.replace("hardware sm100", "hardware b200x")
        .replace("vendor = nvidia", "vendor = iluvatar")
        .replace("warp_size = 32", "warp_size = 64")
        .replace("smem_per_block = 48 KiB", "smem_per_block = 32 KiB")
        .replace("cub_parity = true", f"cub_parity = {'true' if cub_parity else 'false'}")
    )
    alg = text[
        text.index("algorithm reduce on sm100 {") : text.index("\n}\n", text.index("algorithm reduce on sm100 {")) + 3
    ]
    others = [f for f in cub_truth.ALGORITHMS if f != "reduce"] + ["reduce sm80", "reduce sm86", "reduce sm90"]
    scope = "parity {\n  out_of_scope = [" + ", ".join(f'"{o}"' for o in others) + "]\n}\n"
    types = "".join(line + "\n" for line in text.splitlines() if line.startswith("type "))
    return "muh 1\n" + scope + hw + types + alg.replace("on sm100", "on b200x")


@pytest.mark.nvcc
def test_cub_parity_reproduces_cub_on_hardware_unlike_cubs(nvcc):
    spec = load(b200x(True), "specs/b200x.muh")
    report = parity.run_parity(spec)
    assert report.ok, parity.render(report)
    policy = [c for c in report.cases if c.group == "policy"]
    assert len(policy) == 96 and all(c.case.startswith("reduce sm100") for c in policy)
    f64 = next(c for c in policy if c.case == "reduce sm100 float64 plus offset32")
    assert "threads=640" in f64.detail  # CUB's value, though 640 x 8 x 8 B > 32 KiB would scale down


def test_without_cub_parity_the_hardware_scales():
    spec = load(b200x(False), "specs/b200x.muh")
    hw = spec.hardware["b200x"]
    got = resolve_query(spec, "reduce@b200x", Query("float64", "plus", 32))
    assert got.values["threads"].inputs["smem"] == 32 * 1024 and got.values["threads"].inputs["warp"] == 64
    want = scaling.mem_bound(640, 16, 8, hw.smem_per_block, hw.warp_size)
    assert (got.value("threads"), got.value("items")) == tuple(want) == (512, 8)
    assert got.value("threads") != scaling.mem_bound(640, 16, 8).threads  # CUB's constants give 640
    cases = parity.target_rules(spec, derive(spec))
    assert cases and all(c.ok for c in cases)


# ---- the cache ---------------------------------------------------------------------------------------


@pytest.mark.nvcc
def test_cache_is_keyed_by_included_headers_and_bypassed_by_no_cache(nvcc, tmp_path, monkeypatch):
    headers = cub_truth.included_headers(nvcc)
    assert any(h.endswith("cub/device/dispatch/tuning/tuning_scan.cuh") for h in headers)
    monkeypatch.setenv("MUH_CACHE_DIR", str(tmp_path))
    version = cub_truth.cub_version(nvcc)
    calls = []

    def fake_run(source, nvcc_path, **kw):
        calls.append(source)
        return '{"cub_version": %d, "scaling": [], "policies": []}' % version

    monkeypatch.setattr(cub_truth, "compile_and_run", fake_run)
    cases, probes = cub_truth.scaling_cases(count=3), [cub_truth.PolicyProbe("reduce", 900, "float32")]
    cub_truth.load_truth(cases, probes)
    cub_truth.load_truth(cases, probes)
    assert len(calls) == 1
    cub_truth.load_truth(cases, probes, use_cache=False)
    assert len(calls) == 2  # --no-cache
    real = cub_truth.toolchain_digest(nvcc)
    monkeypatch.setattr(cub_truth, "toolchain_digest", lambda n: real + "-a patched header")
    cub_truth.load_truth(cases, probes)
    assert len(calls) == 3 and len(list(tmp_path.glob("cub-truth-*.json"))) == 2


@pytest.mark.nvcc
def test_no_cache_option_recompiles(cli, tmp_path, nvcc, monkeypatch):
    monkeypatch.setenv("MUH_CACHE_DIR", str(tmp_path / "cache"))
    code, out, err = cli("check", ROOT / "specs" / "baseline.muh", "--only", "tuning_headers", "--no-cache", cwd=ROOT)
    assert code == 0, out + err
    assert not (tmp_path / "cache").exists()  # nothing read, nothing written
