from __future__ import annotations

from decimal import Decimal

import pytest
from lab_card import hardware

from muh.diagnostics import MuhError
from muh.schema import load


def spec_with(smem: str, **extra: str) -> str:
    """The lab card as `hardware h` with ``smem`` as its smem_per_block (and ``extra`` keys)."""
    return "muh 1\n" + hardware("h", smem_per_block=smem, **extra)


@pytest.mark.parametrize(
    "text,bytes_", [("48 KiB", 49152), ("0.5 MiB", 524288), ("1 GiB", 2**30), ("49152 B", 49152), ("48 KB", 48000)]
)
def test_sizes_exact(text, bytes_):
    spec = load(spec_with(text))
    assert spec.hardware["h"].smem_per_block == bytes_


def test_bandwidth_and_duration_exact():
    spec = load(spec_with("48 KiB", mem_bandwidth="584.2 GB/s", launch_latency="6.2 us"))
    hw = spec.hardware["h"]
    assert hw.mem_bandwidth == 584_200_000_000
    assert hw.launch_latency == Decimal("6200")


@pytest.mark.parametrize("smem,msg", [("48", "needs a unit"), ("48 us", "expected a size"), ("1.5 B", "whole number")])
def test_unit_errors(smem, msg):
    with pytest.raises(MuhError) as e:
        load(spec_with(smem))
    assert msg in e.value.diagnostics[0].message
