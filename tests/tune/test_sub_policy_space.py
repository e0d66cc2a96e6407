"""`muh tune` over sub-policy dimensions (``<sub-policy>.<dim>``, muh/schema/models.py sub_dim): radix sort's
onesweep / histogram / single-tile blocks, any family with sub-policies alike. On specs/h200.muh with a radix
`space` block written into a copy; no GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from muh.diagnostics import MuhError
from muh.tune.space import build_space, candidate_spec, effective, static_filter
from muh.tune.unit import emitter_reasons

ROOT = Path(__file__).resolve().parents[2]
SPACE = (
    "space { onesweep.threads = [256, 384]  onesweep.items = [16, 20]  onesweep.radix_bits = [8, 9]  "
    "histogram.threads = [128, 256] }"
)


def _spec(tmp_path, space: str = SPACE) -> Path:
    from radix_spec import radix_space_spec

    return radix_space_spec(tmp_path, space)


def _load(path):
    from muh.pipeline import load_file

    return load_file(path)


def test_the_bundled_spec_s_radix_space_is_sub_policy_dims(tmp_path):
    """specs/h200.muh's radix_sort space (the campaign's): onesweep threads x items, histogram threads."""
    from muh.pipeline import load_file

    sp = build_space(load_file(ROOT / "specs" / "h200.muh").spec, "radix_sort", "uint32")
    assert set(sp.dims) == {"onesweep.threads", "onesweep.items", "histogram.threads"} and sp.size == 24


def test_a_space_names_sub_policy_dims_and_the_kernel_gets_them(tmp_path):
    spec = _load(_spec(tmp_path)).spec
    sp = build_space(spec, "radix_sort", "uint32")
    assert sp.dims == {
        "onesweep.threads": [256, 384],
        "onesweep.items": [16, 20],
        "onesweep.radix_bits": [8, 9],
        "histogram.threads": [128, 256],
    }
    assert sp.size == 16
    # the base is the spec's policy, sub-policies included: CUB's sm_90 onesweep 384 x 20, histogram 128 x 16
    base = sp.base.as_dict()
    assert (base["onesweep.threads"], base["onesweep.items"], base["histogram.items"]) == (384, 20, 16)
    assert sp.base.label(tuple(sp.dims)) == (
        "histogram_threads_128.onesweep_items_20.onesweep_radix_bits_8.onesweep_threads_384"
    )
    keep, rejected = static_filter(sp, extra=lambda e: emitter_reasons(e, spec.hardware["h200"]))
    assert len(keep) == 8 and len(rejected) == 8  # 9 radix bits: the kernels' own check (at most 256 digits)
    assert all(r.variant.get("onesweep.radix_bits") == 9 for r in rejected)
    assert all("onesweep radix_bits=9 must be 4..8" in r.reasons[0] for r in rejected)
    seen = set()
    for v in keep:
        params = dict(effective(v, sp).params)
        want = (v.get("onesweep.threads"), v.get("onesweep.items"), v.get("histogram.threads"))
        assert (params["kThreads"], params["kItems"], params["kHistThreads"]) == want
        assert (params["kBits"], params["kHistItems"]) == (8, 16)  # radix bits 8 kept; histogram.items: the spec's
        seen.add(effective(v, sp).key)
    assert len(seen) == 8  # every kept variant is its own kernel


def test_the_candidate_spec_writes_the_variant_into_the_sub_policy(tmp_path):
    """What --apply and a build would take: the variant's sub-policy values in the tuned policy's block, the
    sub-policy's other members (radix_bits, rank) kept."""
    sp = build_space(_load(_spec(tmp_path)).spec, "radix_sort", "float32")
    v = next(x for x in sp.variants() if x.get("onesweep.threads") == 256 and x.get("onesweep.items") == 16)
    pol = candidate_spec(sp, v).algorithms[sp.akey].policies[sp.policy_key]
    assert pol.subs["onesweep"].given() == {
        "threads": 256,
        "items": 16,
        "radix_bits": 8,
        "rank": "match_early_counts_any",
    }
    assert pol.subs["histogram"].given()["threads"] == v.get("histogram.threads")


@pytest.mark.parametrize(
    "space, needle",
    [
        ("space { onesweeps.threads = [256] }", "`radix_sort` has no sub-policy `onesweeps`"),
        ("space { onesweep.thread = [256] }", "`onesweep.thread` is not tunable for radix_sort"),
    ],
)
def test_a_bad_sub_policy_dim_is_a_diagnostic(tmp_path, space, needle):
    with pytest.raises(MuhError) as e:
        _load(_spec(tmp_path, space))
    assert needle in str(e.value)


def test_a_dim_the_harness_cannot_vary_is_refused(tmp_path):
    """`rank` is a dimension of the onesweep sub-policy (spec-valid), but muh's kernels have one ranking: not
    in radix_sort's tunable dims."""
    spec = _load(_spec(tmp_path, "space { onesweep.rank = [match, memoize] }")).spec
    with pytest.raises(MuhError) as e:
        build_space(spec, "radix_sort", "uint32")
    assert "cannot vary `onesweep.rank` of radix_sort" in str(e.value)


def test_dry_run_of_radix_sort(cli, tmp_path, monkeypatch):
    import muh.tune.machine as M

    monkeypatch.setattr(M, "detect", lambda: M.Machine((), "none", "13.0.88", "/usr/bin/nvcc"))
    code, out, err = cli("tune", str(_spec(tmp_path)), "radix_sort", "--dry-run", "--types", "uint32,float64")
    assert code == 0, err
    assert "radix_sort@h200 uint32: 16 variants in the space, 8 pass the static filter, 8 rejected" in out
    assert "base histogram_threads_128.onesweep_items_20.onesweep_radix_bits_8.onesweep_threads_384" in out
    assert "radix_sort@h200 float64: 16 variants" in out and "onesweep radix_bits=N must be N..N" in out


def test_apply_writes_sub_policy_winners_into_their_blocks(tmp_path):
    """--apply: `onesweep.items` goes into the policy's `onesweep { … }` (replaced in place), `histogram.threads`
    into a `histogram { … }` added to the policy; the result loads, and derive reads the written values."""
    from muh.tune.rewrite import Evidence, apply_winner

    path = _spec(tmp_path)
    ev = Evidence("NVIDIA H200", "2026-12-06", "CUDA 13.0.88", 30, "onesweep_items_16", 1.05, 1.01, 1.04, 1.08, "fp")
    text = apply_winner(
        path.read_text(),
        str(path),
        "radix_sort",
        "h200",
        "float32",
        {"onesweep.items": 16, "histogram.threads": 256},
        ev,
    )
    assert "onesweep { items = 16 @measured(" in text and "histogram { threads = 256 @measured(" in text
    path.write_text(text)
    sp = build_space(_load(path).spec, "radix_sort", "float32")
    base = sp.base.as_dict()
    assert (base["onesweep.items"], base["histogram.threads"], base["onesweep.threads"]) == (16, 256, 384)
    with pytest.raises(MuhError, match="a size bucket holds no sub-policies"):
        apply_winner(text, str(path), "radix_sort", "h200", "float32", {"onesweep.items": 12}, ev, bucket=(0, 1 << 20))
