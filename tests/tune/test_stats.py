"""Scores, CCCL annotation lines and winner selection, on synthetic timings (no timing asserts)."""

from __future__ import annotations

import pytest

from muh.tune import stats
from muh.tune.stats import Candidate, Score, decide, score


def test_weights_are_cccls_and_sum_to_one():
    assert stats.WEIGHTS == (0.172, 0.261, 0.281, 0.286)
    assert abs(sum(stats.WEIGHTS) - 1.0) < 1e-9


def test_score_is_the_weighted_mean_of_base_over_variant():
    s = score([100, 100, 100, 100], [50, 100, 100, 200])
    assert s.speedups == (2.0, 1.0, 1.0, 0.5)
    assert s.score == pytest.approx(2.0 * 0.172 + 0.261 + 0.281 + 0.5 * 0.286)
    assert (s.min, s.max) == (0.5, 2.0)
    assert s.mean == pytest.approx(1.125)


def test_annotation_line_has_cccls_shape():
    s = Score(1.148442, 0.997167, 1.139902, 1.462651, (1.0,))
    assert s.line("ipt_22.tpb_384") == "ipt_22.tpb_384 1.148442 0.997167 1.139902 1.462651"


def test_other_sizes_get_log_weights():
    w = stats.weights_for([1 << 10, 1 << 20])
    assert w[1] > w[0] and abs(sum(w) - 1) < 1e-9


def _rounds(*speedups):
    return [score([1.0] * len(sp), [1.0 / x for x in sp]) for sp in speedups]


def test_winner_beyond_noise_and_never_slower():
    aa = _rounds((1.01, 0.99, 1.0, 1.0), (0.995, 1.0, 1.005, 1.0))
    good = Candidate("ipt_16.tpb_512", _rounds((1.1, 1.08, 1.05, 1.05), (1.09, 1.07, 1.06, 1.04)))
    d = decide([good], aa)
    assert d.winner == "ipt_16.tpb_512"
    assert d.size_noise == pytest.approx([0.01, 0.01, 0.005, 0.005])
    assert d.noise == pytest.approx(0.172 * 0.01 + 0.261 * 0.01 + 0.281 * 0.005 + 0.286 * 0.005)


def test_within_noise_keeps_the_incumbent():
    aa = _rounds((1.03, 0.97, 1.03, 1.03))
    meh = Candidate("a", _rounds((1.02, 1.02, 1.02, 1.02), (1.02, 1.02, 1.02, 1.02)))
    d = decide([meh], aa)
    assert d.winner is None and "within noise" in d.why


def test_a_regression_at_one_size_disqualifies():
    aa = _rounds((1.0, 1.0, 1.0, 1.0))
    fast_but_regresses = Candidate("a", _rounds((0.8, 1.2, 1.3, 1.3), (0.8, 1.2, 1.3, 1.3)))
    slower_safe = Candidate("b", _rounds((1.0, 1.05, 1.05, 1.05), (1.0, 1.05, 1.05, 1.05)))
    d = decide([fast_but_regresses, slower_safe], aa)
    assert d.winner == "b"
    assert any(lab == "a" for lab, _ in d.ranked)


def test_one_bad_round_disqualifies():
    aa = _rounds((1.0, 1.0, 1.0, 1.0))
    flappy = Candidate("a", _rounds((1.2,) * 4, (1.2,) * 4, (0.99,) * 4))
    assert decide([flappy], aa).winner is None


def test_noise_has_a_floor():
    assert stats.noise_of(_rounds((1.0, 1.0, 1.0, 1.0))) == stats.MIN_NOISE


def test_noisy_small_size_does_not_hide_a_large_size_gain():
    # 2^16 timings are noisy (A/A ±6 %), the big sizes are tight: a +10 % gain at 2^24/2^28 that
    # stays inside the small size's noise is a winner (the score's noise is weighted like the score)
    aa = _rounds((0.94, 1.013, 0.993, 1.0), (1.026, 1.003, 0.999, 1.002))
    gain = Candidate("ipt_24.tpb_384", _rounds((0.97, 1.02, 1.09, 1.11), (0.96, 1.02, 1.10, 1.12)))
    assert decide([gain], aa).winner == "ipt_24.tpb_384"


def test_regression_beyond_the_small_sizes_own_noise_rejects():
    aa = _rounds((0.94, 1.013, 0.993, 1.0), (1.026, 1.003, 0.999, 1.002))
    regress = Candidate("ipt_24.tpb_384", _rounds((0.92, 1.02, 1.09, 1.11), (0.93, 1.02, 1.10, 1.12)))
    d = decide([regress], aa)
    assert d.winner is None and "slower than base at size index 0" in d.why
