"""Re-run muh tune's decision on the confirmation trials stored in a results database.

    python bench/tune_decide_db.py .muh-cache/tune.sqlite

For each (spec, algorithm, type, machine) it prints the A/A noise per size, each candidate's
per-size median speedups and median score, and `muh.tune.stats.decide`'s verdict. No GPU needed:
this is how the numbers in bench/results/tune-h200.md were re-checked after the rule changed.
"""
from __future__ import annotations

import json
import sqlite3
import sys
from collections import defaultdict

from muh.tune import stats


def main(path: str) -> None:
    c = sqlite3.connect(path)
    rows = c.execute("SELECT spec, algorithm, dtype, fingerprint, gpu, variant, kernel, base, round, sizes, base_ns, variant_ns "
                     "FROM trials WHERE phase='confirm' AND status='ok' ORDER BY id").fetchall()
    groups = defaultdict(list)
    for r in rows:
        groups[r[:5]].append(r)
    for (spec, alg, dtype, fp, gpu), rs in groups.items():
        aa, cands = [], {}
        for _, _, _, _, _, variant, kernel, base, rnd, sizes, b, v in rs:
            s = stats.score(json.loads(b), json.loads(v), json.loads(sizes))
            if kernel == base:
                aa.append(s)
            else:
                cands.setdefault(variant, stats.Candidate(variant)).rounds.append(s)
        d = stats.decide(list(cands.values()), aa)
        print(f"{spec} {alg} {dtype} on {gpu} ({fp}): {len(aa)} A/A rounds")
        print("  A/A noise per size: " + ", ".join(f"±{x:.4f}" for x in d.size_noise) + f"; score noise ±{d.noise:.4f}")
        for cand in sorted(cands.values(), key=lambda x: -x.score):
            sp = cand.size_speedups()
            print(f"  {cand.label:<22} median per size " + " ".join(f"{x:.3f}" for x in sp) + f"  score {cand.score:.4f}")
        print(f"  decision: {d.why}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".muh-cache/tune.sqlite")
