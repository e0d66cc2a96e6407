"""Scaling parity, property-based: hypothesis draws nominal policies, CUB (compiled once) answers.

Phase 1 lets hypothesis generate the case list (derandomized, so the list — and the compiled
program's cache key — is the same on every run); phase 2 compiles one program against the installed
CUB for all of them; then every case must agree with muh/derive/scaling.py.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from muh.check import cub_truth
from muh.check.parity import scaling_parity
from muh.derive import scaling

SIZES = st.sampled_from(cub_truth.STANDARD_SIZES) | st.sampled_from(cub_truth.ODD_SIZES) | st.integers(1, 300)
CASES = st.builds(
    cub_truth.ScalingCase,
    rule=st.sampled_from(("mem_bound", "reg_bound", "nominal_4b_items", "nominal_8b_items")),
    threads=st.integers(32, 1024).map(lambda t: t - t % 32) | st.integers(1, 1024),
    items=st.integers(1, 32) | st.integers(1, 4000),
    size=SIZES,
)


def _draw_cases(n: int = 400) -> list[cub_truth.ScalingCase]:
    drawn: list[cub_truth.ScalingCase] = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(CASES)
    def collect(case):
        drawn.append(case)

    collect()
    return sorted(set(drawn))


#: Nominal8BItemsToItems (adjacent_difference): items up to 8 bytes keep I8, wider ones get ceil(8*I8/size).
N8B_EXAMPLES = {
    (7, 1): 7,
    (7, 8): 7,
    (7, 9): 7,
    (7, 12): 5,
    (7, 16): 4,
    (7, 24): 3,
    (7, 100): 1,
    (7, 1024): 1,
    (16, 12): 11,
    (1, 1000): 1,
}


@pytest.fixture(scope="module")
def truth(nvcc):
    n8b = {cub_truth.ScalingCase("nominal_8b_items", 128, i8, size) for i8, size in N8B_EXAMPLES}
    cases = sorted(set(_draw_cases()) | set(cub_truth.scaling_cases()) | n8b)
    return cub_truth.load_truth(cases=cases)


@pytest.mark.nvcc
def test_case_list_is_large_and_covers_sizes(truth):
    sizes = {c.size for c in truth.scaling}
    assert len(truth.scaling) >= 500
    assert set(cub_truth.STANDARD_SIZES) <= sizes and len(sizes - set(cub_truth.STANDARD_SIZES)) >= 10
    assert {c.rule for c in truth.scaling} == {"mem_bound", "reg_bound", "nominal_4b_items", "nominal_8b_items"}


@pytest.mark.nvcc
def test_muh_scaling_equals_cub(truth):
    bad = [c for c in scaling_parity(truth) if not c.ok]
    assert not bad, "\n".join(f"{c.case}: {c.failures}" for c in bad[:20])


@pytest.mark.nvcc
def test_facts_examples(truth):
    # worked examples of CUB's scaling rules (cub/util_arch.cuh), checked against the compiled truth.
    want = {
        ("mem_bound", 512, 16, 8): (512, 8),
        ("reg_bound", 384, 22, 8): (384, 11),
        ("mem_bound", 256, 500, 1): (64, 1000),
        ("mem_bound", 256, 10000, 1024): (32, 39),
        ("reg_bound", 256, 500, 1): (128, 500),
    }
    for key, value in want.items():
        assert truth.scaling[cub_truth.ScalingCase(*key)] == value


@pytest.mark.nvcc
def test_nominal_8b_items_equals_cub(truth):
    # muh's `nominal_8b` rule (adjacent_difference) against cub::Nominal8BItemsToItems<char[size]>.
    for (i8, size), items in N8B_EXAMPLES.items():
        case = cub_truth.ScalingCase("nominal_8b_items", 128, i8, size)
        assert truth.scaling[case] == (0, items), case
        assert scaling.nominal_8b_items(i8, size) == items, case
        assert scaling.RULES["nominal_8b"](128, i8, size) == (128, items)


def test_warp_and_smem_generalise():
    # The BI-V100's warp of 64: threads round to multiples of 64 when the tile caps them.
    got = scaling.mem_bound(1024, 24, 8, smem=48 * 1024, warp=64)
    assert got.threads % 64 == 0 and got.threads * got.items * 8 <= 48 * 1024 + 64 * got.items * 8
    assert scaling.mem_bound(256, 500, 1, 49152, 32) == scaling.mem_bound(256, 500, 1)
