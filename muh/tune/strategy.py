"""Search strategies: in which order the (statically filtered) variants are measured.

Every strategy is deterministic for a seed, so an interrupted run resumes on the same sequence
(measured variants are skipped as cache hits). ``next_batch(n, scores)`` returns up to ``n``
variants not yet proposed, given the scores measured so far (``None`` for a failed variant).

- exhaustive: the whole filtered space, in space order.
- random: the space in a seeded random order (CCCL's tuning scripts sample the Cartesian product
  in random order too); with a budget this is uniform sampling without replacement.
- model: a seeded random start, then the variants a surrogate predicts best, with one random pick
  per batch for exploration. The surrogate is inverse-distance-weighted k nearest neighbours over
  the normalised numeric dimensions (log2 for power-of-two-ish sizes): cheap, dependency-free, and
  good enough for the smooth, low-dimensional spaces of CUB policies.
"""

from __future__ import annotations

import math
import random
from typing import Callable, Sequence

from muh.tune.space import Variant

STRATEGIES = ("exhaustive", "random", "model")


class Strategy:
    def __init__(self, variants: Sequence[Variant], seed: int = 0):
        self.variants = list(variants)
        self.seed = seed
        self.proposed: set[str] = set()

    def remaining(self) -> list[Variant]:
        return [v for v in self.variants if v.label() not in self.proposed]

    def _take(self, vs: list[Variant], n: int) -> list[Variant]:
        out = vs[:n]
        self.proposed.update(v.label() for v in out)
        return out

    def next_batch(self, n: int, scores: dict[str, float | None]) -> list[Variant]:
        raise NotImplementedError


class Exhaustive(Strategy):
    def next_batch(self, n, scores):
        return self._take(self.remaining(), n)


class RandomOrder(Strategy):
    def __init__(self, variants, seed=0):
        super().__init__(variants, seed)
        self.order = list(self.variants)
        random.Random(seed).shuffle(self.order)

    def next_batch(self, n, scores):
        return self._take([v for v in self.order if v.label() not in self.proposed], n)


def _features(v: Variant) -> dict[str, float]:
    out = {}
    for k, x in v.values:
        if isinstance(x, bool):
            out[k] = float(x)
        elif isinstance(x, int):
            out[k] = math.log2(x) if x > 0 else 0.0
        elif isinstance(x, str):
            out[f"{k}={x}"] = 1.0
    return out


class Model(Strategy):
    """Random warm-up, then best predicted first (one exploratory random pick per batch)."""

    def __init__(self, variants, seed=0, warmup: int = 8, k: int = 4):
        super().__init__(variants, seed)
        self.rng = random.Random(seed)
        self.order = list(self.variants)
        self.rng.shuffle(self.order)
        self.warmup = warmup
        self.k = k
        feats = [_features(v) for v in self.variants]
        keys = sorted({k for f in feats for k in f})
        lo = {k: min(f.get(k, 0.0) for f in feats) for k in keys}
        hi = {k: max(f.get(k, 0.0) for f in feats) for k in keys}
        self.vec = {
            v.label(): [(f.get(k, 0.0) - lo[k]) / ((hi[k] - lo[k]) or 1.0) for k in keys]
            for v, f in zip(self.variants, feats)
        }

    def predict(self, label: str, scores: dict[str, float | None]) -> float:
        known = [(lab, s) for lab, s in scores.items() if lab in self.vec]
        if not known:
            return 0.0
        x = self.vec[label]
        dists = sorted((math.dist(x, self.vec[lab]), 0.0 if s is None else s) for lab, s in known)[: self.k]
        if dists[0][0] == 0.0:
            return dists[0][1]
        w = [1.0 / d for d, _ in dists]
        return sum(wi * s for wi, (_, s) in zip(w, dists)) / sum(w)

    def next_batch(self, n, scores):
        rest = [v for v in self.order if v.label() not in self.proposed]
        measured = sum(1 for lab in scores if lab in self.vec)
        if measured < self.warmup or not rest:
            return self._take(rest, n)
        ranked = sorted(rest, key=lambda v: (-self.predict(v.label(), scores), rest.index(v)))
        pick = ranked[: max(1, n - 1)]
        explore = [v for v in rest if v not in pick]
        if len(pick) < n and explore:
            pick.append(explore[self.rng.randrange(len(explore))])
        return self._take(pick, n)


def make(name: str, variants: Sequence[Variant], seed: int = 0) -> Strategy:
    table: dict[str, Callable[..., Strategy]] = {"exhaustive": Exhaustive, "random": RandomOrder, "model": Model}
    return table[name](variants, seed)
