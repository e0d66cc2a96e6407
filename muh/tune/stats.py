"""Scores, CCCL annotation lines and winner selection (pure functions over measured medians).

speedup(size) = base median time / variant median time, both measured in the same run;
score = the weighted mean of the speedups with CCCL's weights for 2^16, 2^20, 2^24, 2^28 elements
(bigger sizes count more). A challenger replaces the incumbent only when its score beats 1 by more
than the noise measured in the same confirmation rounds (the base timed against itself, an A/A
test), and no size is slower than the base by more than that noise (CCCL rejects any regression).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

SIZES = (1 << 16, 1 << 20, 1 << 24, 1 << 28)
WEIGHTS = (
    0.172,
    0.261,
    0.281,
    0.286,
)  # CCCL's score weights (benchmarks/scripts/cccl/bench/score.py, https://github.com/NVIDIA/cccl)
MIN_NOISE = 0.005  # never trust a difference below 0.5 %, whatever the A/A test says


def weights_for(sizes) -> list[float]:
    """CCCL's weights for its four sizes; for other size lists, weights growing with log2(size)."""
    sizes = list(sizes)
    if tuple(sizes) == SIZES:
        return list(WEIGHTS)
    import math

    raw = [math.log2(max(2, s)) for s in sizes]
    total = sum(raw)
    return [r / total for r in raw]


@dataclass(frozen=True)
class Score:
    score: float
    min: float
    mean: float
    max: float
    speedups: tuple[float, ...]

    def line(self, label: str) -> str:
        """``label score min mean max`` exactly as CCCL's tuning scripts print it."""
        return f"{label} {self.score:.6f} {self.min:.6f} {self.mean:.6f} {self.max:.6f}"


def score(base_ns, variant_ns, sizes=SIZES) -> Score:
    """Score of a variant from per-size median times (same order as ``sizes``)."""
    if len(base_ns) != len(variant_ns) or not base_ns:
        raise ValueError("base and variant need one time per size")
    sp = tuple(b / v for b, v in zip(base_ns, variant_ns))
    w = weights_for(sizes)
    s = sum(x * y for x, y in zip(sp, w)) / sum(w)
    return Score(s, min(sp), statistics.fmean(sp), max(sp), sp)


def median(xs) -> float:
    return float(statistics.median(xs))


@dataclass
class Candidate:
    """Repeated measurements of one variant: one Score per confirmation round."""

    label: str
    rounds: list[Score] = field(default_factory=list)

    @property
    def score(self) -> float:
        return median([r.score for r in self.rounds])

    def size_speedups(self) -> list[float]:
        """Per size, the median speedup over the rounds."""
        return [median(col) for col in zip(*(r.speedups for r in self.rounds))]


@dataclass
class Decision:
    winner: str | None  # None: keep the incumbent
    noise: float | None  # noise of the score; None: no A/A test was needed (nothing to confirm)
    why: str
    ranked: list[tuple[str, float]] = field(default_factory=list)
    size_noise: list[float] = field(default_factory=list)  # per size, from the A/A rounds


def size_noise_of(aa_rounds: list[Score]) -> list[float]:
    """Per size: the largest deviation from 1 of the base-vs-base speedup over the A/A rounds."""
    if not aa_rounds:
        return []
    return [max([MIN_NOISE] + [abs(s - 1.0) for s in col]) for col in zip(*(r.speedups for r in aa_rounds))]


def noise_of(aa_rounds: list[Score], sizes=SIZES) -> float:
    """Noise of a score: the CCCL-weighted per-size noise, or the largest A/A score deviation if larger.

    Small sizes (microseconds) are noisier than large ones; weighting the per-size noise like the
    score keeps one noisy 2^16 timing from hiding a real gain at 2^28, while the per-size regression
    test below still uses each size's own noise.
    """
    per = size_noise_of(aa_rounds)
    if not per:
        return MIN_NOISE
    w = weights_for(sizes) if len(per) == len(tuple(sizes)) else [1.0 / len(per)] * len(per)
    weighted = sum(a * b for a, b in zip(w, per)) / sum(w)
    return max([MIN_NOISE, weighted] + [abs(r.score - 1.0) for r in aa_rounds])


def decide(candidates: list[Candidate], aa_rounds: list[Score], sizes=SIZES) -> Decision:
    """Pick a winner among confirmed candidates, or keep the incumbent.

    A candidate qualifies when (a) its median score exceeds 1 + the score's noise, (b) every round
    scores above 1, and (c) at every size its median speedup is at least 1 - that size's noise
    (never slower than the base anywhere beyond noise). The highest median score among those wins.
    """
    noise = noise_of(aa_rounds, sizes)
    per = size_noise_of(aa_rounds)
    ranked = sorted(((c.label, c.score) for c in candidates if c.rounds), key=lambda x: -x[1])
    reasons = []
    best = None
    for c in sorted((c for c in candidates if c.rounds), key=lambda c: -c.score):
        if c.score <= 1.0 + noise:
            reasons.append(f"{c.label}: score {c.score:.4f} within noise ±{noise:.4f}")
            continue
        if min(r.score for r in c.rounds) <= 1.0:
            reasons.append(f"{c.label}: a confirmation round scored {min(r.score for r in c.rounds):.4f} ≤ 1")
            continue
        sp = c.size_speedups()
        tol = per if len(per) == len(sp) else [noise] * len(sp)
        slow = [i for i, s in enumerate(sp) if s < 1.0 - tol[i]]
        if slow:
            i = slow[0]
            reasons.append(f"{c.label}: slower than base at size index {i} ({sp[i]:.4f} < 1 - {tol[i]:.4f})")
            continue
        best = c
        break
    if best is None:
        why = "no candidate beats the base beyond noise; keeping the incumbent"
        if reasons:
            why += " (" + "; ".join(reasons[:3]) + ")"
        return Decision(None, noise, why, ranked, per)
    return Decision(
        best.label,
        noise,
        f"{best.label} scores {best.score:.4f} > 1 + noise {noise:.4f}, no size slower than base beyond its noise",
        ranked,
        per,
    )
