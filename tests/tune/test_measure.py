"""The measurement worker against a fake harness process: JSON lines, hangs, crashes, base failure.
(Real subprocesses, no GPU; the timeouts are the worker's watchdog, not timing assertions.)"""

from __future__ import annotations

import sys
import textwrap

import pytest

from muh.tune.measure import BaseFailed, run_unit

FAKE = textwrap.dedent("""\
    #!{python}
    import json, sys, time
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    todo = [int(x) for x in args["--variants"].split(",")]
    print(json.dumps({{"device": "fake"}}), flush=True)
    if {base_fails}:
        print(json.dumps({{"variant": 0, "status": "wrong_result", "detail": "base: out[3] = nan"}}), flush=True)
        sys.exit(5)
    for v in todo:
        if v == 2:
            time.sleep(60)          # hangs
        if v == 3:
            sys.stderr.write("illegal memory access\\n")
            sys.exit(3)             # dies without a line
        if v == 4:
            print(json.dumps({{"variant": 4, "status": "wrong_result", "detail": "sum 1 != 2"}}), flush=True)
            continue
        print(json.dumps({{"variant": v, "status": "ok", "samples": 3, "sizes": [1, 2],
                          "variant_ns": [10.0, 20.0], "base_ns": [11.0, 22.0]}}), flush=True)
""")


def fake(tmp_path, base_fails=False):
    p = tmp_path / "unit"
    p.write_text(FAKE.format(python=sys.executable, base_fails=base_fails))
    p.chmod(0o755)
    return p


def test_every_variant_gets_a_class(tmp_path):
    res = run_unit(fake(tmp_path), [1, 2, 3, 4, 5], "0", sizes=[1, 2], runs=3, warmup=1, seed=1, timeout=2.0)
    assert {i: r.status for i, r in res.items()} == {
        1: "ok",
        2: "timeout",
        3: "launch_error",
        4: "wrong_result",
        5: "ok",
    }
    assert "illegal memory access" in res[3].detail
    assert res[1].variant_ns == [10.0, 20.0] and res[1].base_ns == [11.0, 22.0] and res[1].samples == 3


def test_a_failing_base_stops_with_a_clear_error(tmp_path):
    with pytest.raises(BaseFailed, match="out\\[3\\]"):
        run_unit(fake(tmp_path, base_fails=True), [1], "0", sizes=[1], runs=3, warmup=1, seed=1, timeout=5.0)
