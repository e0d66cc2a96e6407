"""Heat maps of a `muh tune` search from its results database, without a GPU (the campaign's pages).

    python3 bench/tune_heatmaps.py SPEC FAMILY DB OUT_DIR [--before OLD_SPEC]

For each type of FAMILY in SPEC: the search of the database with the most trials of that type (a type
searched twice, over a narrower and then a wider space, draws the wider one), its scores over the first
two dimensions (best over the others, muh/tune/plot.py), ○ the base of that search and ★ the spec's
policy where the search moved it. ``--before``: the spec before the campaign (the bases of the searches
that started from it)."""
from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    from muh.pipeline import load_file
    from muh.tune.plot import draw
    from muh.tune.space import build_space

    ap = argparse.ArgumentParser()
    ap.add_argument("spec", type=Path)
    ap.add_argument("family")
    ap.add_argument("db", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--before", type=Path)
    a = ap.parse_args()
    spec = load_file(a.spec).spec
    old = load_file(a.before).spec if a.before else spec
    con = sqlite3.connect(a.db)
    alg = next(x for x in spec.algorithms.values() if x.family == a.family)
    for dtype in alg.types:
        space = build_space(spec, a.family, dtype)
        dims = tuple(space.dims)
        by = {v.label(dims): v for v in space.variants()}
        groups = con.execute("SELECT base, count(*) FROM trials WHERE algorithm LIKE ? AND dtype = ? AND phase = "
                             "'search' GROUP BY base ORDER BY count(*) DESC", (f"{a.family}@%", dtype)).fetchall()
        if not groups:
            print(f"{dtype}: no search in {a.db}")
            continue
        rows = con.execute("SELECT variant, score FROM trials WHERE algorithm LIKE ? AND dtype = ? AND phase = "
                           "'search' AND base = ? AND status = 'ok'", (f"{a.family}@%", dtype, groups[0][0])).fetchall()
        pts = [(by[lab].as_dict(), score) for lab, score in rows if lab in by]
        now = space.base.as_dict()
        start = build_space(old, a.family, dtype).base.as_dict()
        # the search's base: the spec before the campaign, unless this search started from its winner
        base = now if len(rows) > len(build_space(old, a.family, dtype).variants()) else start
        win = now if now != base else None
        title = (f"{a.family} {dtype}: score over {' × '.join(list(space.dims)[:2])}, {len(pts)} variants "
                 f"(○ base, ★ winner)")
        path = draw(a.out / f"tune-{a.family}-{dtype}.png", title, pts, list(space.dims), base, win)
        print(f"{dtype}: {len(pts)} variants -> {path}")


if __name__ == "__main__":
    main()
