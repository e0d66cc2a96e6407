"""`muh tune --plot FILE.png`: a heat map of score over two dimensions (best over the others).

matplotlib is an optional extra (``pip install 'muh[tune]'``); ``require()`` says so up front,
before any measurement starts.
"""

from __future__ import annotations

from pathlib import Path

from muh.diagnostics import Diagnostic, MuhError


def require() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MuhError(
            [
                Diagnostic(
                    "E-PLOT",
                    "--plot needs matplotlib, which is not installed",
                    None,
                    hint="pip install 'muh[tune]' (or pip install matplotlib), or drop --plot",
                )
            ]
        ) from None


def axes_for(dims: list[str]) -> tuple[str, str | None]:
    prefer = [d for d in ("items", "threads") if d in dims] + [d for d in dims if d not in ("items", "threads")]
    return prefer[0], (prefer[1] if len(prefer) > 1 else None)


def grid(points: list[tuple[dict, float | None]], x: str, y: str | None):
    """(xs, ys, z[y][x]) with the best score per cell (None where nothing ran)."""
    xs = sorted({p[x] for p, _ in points})
    ys = sorted({p[y] for p, _ in points}) if y else [0]
    z = [[None for _ in xs] for _ in ys]
    for p, s in points:
        if s is None:
            continue
        i, j = ys.index(p[y]) if y else 0, xs.index(p[x])
        if z[i][j] is None or s > z[i][j]:
            z[i][j] = s
    return xs, ys, z


def draw(
    path: Path, title: str, points: list[tuple[dict, float | None]], dims: list[str], base: dict, winner: dict | None
) -> Path:
    require()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x, y = axes_for(dims)
    xs, ys, z = grid(points, x, y)
    data = [[float("nan") if v is None else v for v in row] for row in z]
    fig, ax = plt.subplots(figsize=(max(6.5, 1.5 + 0.55 * len(xs)), max(3.0, 1.5 + 0.4 * len(ys))))
    finite = [v for row in z for v in row if v is not None] or [1.0]
    spread = max(abs(max(finite) - 1.0), abs(min(finite) - 1.0), 0.01)
    im = ax.imshow(data, cmap="RdYlGn", vmin=1.0 - spread, vmax=1.0 + spread, origin="lower", aspect="auto")
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys] if y else [""])
    ax.set_xlabel(x)
    ax.set_ylabel(y or "")
    fig.colorbar(im, ax=ax, label="score (speedup over base, CCCL weights)")
    for who, marker, color in ((base, "o", "black"), (winner, "*", "blue")):
        if who and who.get(x) in xs and (not y or who.get(y) in ys):
            ax.plot(
                xs.index(who[x]),
                ys.index(who[y]) if y else 0,
                marker=marker,
                color=color,
                markersize=12,
                markerfacecolor="none" if marker == "o" else color,
            )
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    import io

    from muh.output import replace_file

    buf = io.BytesIO()
    fig.savefig(buf, dpi=120, format="png")
    plt.close(fig)
    replace_file(path, buf.getvalue())  # whole or not at all; a link keeps pointing at the new image
    return path
