"""CUB ground truth: the probe program, its cache, its errors, and the policies CUB selects."""

from __future__ import annotations

import pytest

from muh.check import cub_truth
from muh.diagnostics import MuhError

#: CUB's cases with keys and values of one type.
SAME = [p for p in cub_truth.policy_probes() if not p.value]


def test_case_list_is_deterministic_and_large():
    a, b = cub_truth.scaling_cases(), cub_truth.scaling_cases()
    assert a == b and len(a) >= 500
    assert cub_truth.render_program(a, SAME) == cub_truth.render_program(b, SAME)
    assert cub_truth.scaling_cases(seed=1) != a
    # keys and values of different types instantiate the hubs with both (never silently one type)
    pair = cub_truth.PolicyProbe("reduce_by_key", 900, "int32", "plus", 32, "struct16a8")
    program = cub_truth.render_program([], [pair])
    assert "muh_probe::kv<std::int32_t, muh_probe::struct16a8>" in program and "struct alignas(8) struct16a8" in program


def test_missing_nvcc_is_a_diagnostic(monkeypatch):
    monkeypatch.setattr(cub_truth.shutil, "which", lambda *a, **k: None)
    monkeypatch.delenv("MUH_NVCC", raising=False)
    monkeypatch.delenv("CUDACXX", raising=False)
    with pytest.raises(MuhError) as err:
        cub_truth.load_truth()
    diag = err.value.diagnostics[0]
    assert diag.code == "E-NVCC" and "nvcc" in diag.message and diag.hint


@pytest.mark.nvcc
def test_compile_error_is_a_diagnostic(nvcc):
    with pytest.raises(MuhError) as err:
        cub_truth.compile_and_run("this is not C++\n", nvcc)
    assert err.value.diagnostics[0].code == "E-NVCC-COMPILE"


@pytest.mark.nvcc
def test_truth_is_cached_by_cub_version(nvcc, tmp_path, monkeypatch):
    monkeypatch.setenv("MUH_CACHE_DIR", str(tmp_path))
    version = cub_truth.cub_version(nvcc)
    calls = []

    def fake_run(source, nvcc_path, **kw):  # the compile itself is exercised by every other test
        calls.append(source)
        return '{"cub_version": %d, "scaling": [], "policies": []}' % version

    monkeypatch.setattr(cub_truth, "compile_and_run", fake_run)
    cases = cub_truth.scaling_cases(count=5)
    probes = [cub_truth.PolicyProbe("reduce", 900, "float32")]
    first = cub_truth.load_truth(cases, probes)
    (entry,) = tmp_path.glob("cub-truth-*.json")
    assert entry.name.startswith(f"cub-truth-{version}-") and version == 300001
    assert cub_truth.load_truth(cases, probes) == first and len(calls) == 1
    cub_truth.load_truth(cases, probes + [cub_truth.PolicyProbe("scan", 900, "float32")])
    assert len(calls) == 2  # another probe set is another program
    entry.write_text("{ damaged")
    cub_truth.load_truth(cases, probes)
    assert len(calls) == 3


@pytest.fixture(scope="module")
def truth(nvcc):
    return cub_truth.load_truth()


@pytest.mark.nvcc
def test_cub_version_is_pinned(truth):
    # The parity fixtures describe CCCL 3.0.1; a different CUB needs a reviewed specs/nvidia.muh.
    assert truth.cub_version == 300001


@pytest.mark.nvcc
def test_fallback_policies(truth):
    # reduce on sm_90 (and sm_80/86) runs CUB's sm_60 policy; scan on sm_86 its untuned default.
    for cc in (800, 860, 900):
        assert truth.policies[("reduce", cc, "float32", "plus", 32, "")]["policy"] == 600
    sm86 = truth.policies[("scan", 860, "float32", "plus", 32, "")]
    assert (sm86["threads"], sm86["items"]) == (128, 15)
    assert sm86["delay"] == {"kind": "fixed", "ns": 350, "l2_write_latency": 450}
    assert truth.policies[("scan", 1000, "float32", "plus", 32, "")]["delay"]["kind"] == "backon_jitter"


@pytest.mark.nvcc
def test_fallback_policies_of_the_other_families(truth):
    # DeviceSegmentedSort's newest policy is sm_86's (sm_90 and sm_100 run it: CCCL issue #6173).
    for cc in (900, 1000):
        assert truth.policies[("segmented_sort", cc, "int32", "plus", 32, "")]["policy"] == 860
    # One policy since sm_50 (adjacent difference) and sm_70 (batched memcpy).
    assert {
        truth.policies[("adjacent_difference", cc, "float64", "plus", 32, "")]["policy"] for cc in cub_truth.ARCHES
    } == {500}
    assert {truth.policies[("batch_memcpy", cc, "uint8", "plus", 32, "")]["policy"] for cc in cub_truth.ARCHES} == {700}
    # Untuned by-key sums on sm_86 use CUB's reduce-by-key delay constructor.
    for t in ("int32", "int64", "float64"):
        assert truth.policies[("reduce_by_key", 860, t, "plus", 32, "")]["delay"]["kind"] == "reduce_by_key"
    # … and a user-defined value none (CUB: only primitive values of up to 8 bytes wait that way)
    assert truth.policies[("reduce_by_key", 860, "int32", "plus", 32, "struct16a8")]["delay"]["kind"] == "no_delay"
    assert truth.policies[("reduce_by_key", 860, "struct16a8", "plus", 32, "int32")]["delay"]["kind"] == "reduce_by_key"
    # DeviceSelect::Unique shares DeviceSelect::If's hub.
    for key, value in truth.policies.items():
        if key[0] == "unique":
            assert value == {**truth.policies[("select_if",) + key[1:]], "family": "unique"}


@pytest.mark.nvcc
def test_every_probe_answered(truth):
    assert set(truth.policies) == {p.key for p in cub_truth.policy_probes()}
    assert len(truth.policies) >= 2 * 4 * 4
