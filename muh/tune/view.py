"""What `muh tune` shows: a progress bar with ETA, CCCL annotation lines, the final table."""

from __future__ import annotations

import contextlib
from pathlib import Path

from rich.console import Console as RichConsole
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from muh.tune.runner import Events, TypeReport


class Console:
    def __init__(self, top: int = 10):
        probe = RichConsole()
        self.out = RichConsole(highlight=False, soft_wrap=True, width=None if probe.is_terminal else 200)
        self.top = top
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.out,
            transient=False,
        )
        self.task = None

    def live(self):
        return self.progress if self.out.is_terminal else contextlib.nullcontext()

    def events(self) -> Events:
        view = self

        class _E(Events):
            def start(self, dtype, total, filtered, space):
                view.out.print(
                    f"{dtype}: {space} variants in the space, {filtered} rejected by the static filter, "
                    f"measuring up to {total}",
                    markup=False,
                )  # `float64 [elements < 2^24]`
                from rich.markup import escape

                view.task = view.progress.add_task(escape(f"tune {dtype}"), total=total)

            def advance(self, n=1):
                if view.task is not None:
                    view.progress.advance(view.task, n)

            def line(self, text):
                view.out.print(text, markup=False)

            def phase(self, text):
                view.out.print(text, markup=False)

        return _E()

    def header(self, ctx, opts) -> None:
        m = ctx["machine"]
        gpus = ", ".join(f"{g.index}: {g.name}" for g in m.gpus) or "none (compile only)"
        impl = " (CUB's kernels on candidate hubs)" if ctx.get("implementation") == "cub" else ""
        self.out.print(
            f"muh tune {ctx['algo']}{impl} on {gpus}; driver {m.driver}, CUDA {m.toolkit}; "
            f"machine fingerprint {m.fingerprint}; strategy {opts.strategy}, seed {opts.seed}; "
            f"database {opts.db}",
            markup=False,
        )

    def note(self, text: str) -> None:
        self.out.print(text, markup=False)

    def summary(self, rep: TypeReport) -> None:
        counts = ", ".join(f"{n} {s}" for s, n in sorted(rep.counts().items()))
        self.out.print(f"\n{rep.space.akey} {rep.space.name}: {counts or 'nothing measured'}", markup=False)
        for r in sorted((r for r in rep.rows.values() if r.status == "spills"), key=lambda r: r.label):
            self.out.print(f"  rejected (spills) {r.label}: {r.detail}", markup=False)  # the no-spill rule
        rows = rep.ok_rows()[: self.top]
        if rows:
            sizes = rows[0].score.speedups
            from rich.markup import escape

            t = Table(title=escape(f"top {len(rows)} of {rep.space.name} (speedup = base time / variant time)"))
            t.add_column("variant")
            for i, _ in enumerate(sizes):
                t.add_column(f"size {i}", justify="right")
            for c in ("score", "min", "mean", "max", "confirmed"):
                t.add_column(c, justify="right")
            conf = {c.label: c for c in rep.candidates}
            for r in rows:
                chosen = rep.decision is not None and rep.decision.winner == r.label
                c = conf.get(r.label)
                t.add_row(
                    ("★ " if chosen else "") + r.label,
                    *(f"{s:.3f}" for s in r.score.speedups),
                    f"{r.score.score:.4f}",
                    f"{r.score.min:.3f}",
                    f"{r.score.mean:.3f}",
                    f"{r.score.max:.3f}",
                    f"{c.score:.4f}" if c and c.rounds else "",
                )
            self.out.print(t)
        if rep.decision is not None:
            noise = f" (A/A noise ±{rep.decision.noise:.4f})" if rep.decision.noise is not None else ""
            self.out.print(f"decision: {rep.decision.why}{noise}", markup=False)
        ref = rep.reference
        if ref is not None:  # --implementation cub: what CUB ships for this GPU, against the same base
            what = "reference: CUB's shipped policy (CUB's public entry point, its own hub for this GPU)"
            if ref.score is None:
                self.out.print(f"{what}: {ref.status} {ref.detail[:200]}".rstrip(), markup=False)
            else:
                per = ", ".join(f"{x:.3f}" for x in ref.score.speedups)
                self.out.print(
                    f"{what}: base time / its time = {ref.score.score:.4f} (per size {per})"
                    + ("  (cached)" if ref.cached else ""),
                    markup=False,
                )


def plot_reports(plot: Path, ctx, reports: list[TypeReport]) -> list[Path]:
    from muh.tune.plot import draw

    out = []
    for rep in reports:
        dims = list(rep.space.dims)
        by = {v.label(tuple(dims)): v for v in rep.space.variants()}
        pts = [(by[lab].as_dict(), r.score.score if r.score else None) for lab, r in rep.rows.items() if lab in by]
        tag = rep.dtype + ("" if rep.space.bucket is None else f"-b{rep.space.bucket[0]}")
        path = plot if len(reports) == 1 else plot.with_name(f"{plot.stem}-{tag}{plot.suffix}")
        win = rep.winner.as_dict() if rep.winner else None
        title = f"{rep.space.akey} {rep.dtype}: score over {' × '.join(dims[:2])} (○ base, ★ winner)"
        out.append(draw(path, title, pts, dims, rep.space.base.as_dict(), win))
    return out
