"""`muh tune SPEC ALGO`: measure a policy space on this machine's GPUs (registered by muh.cli)."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Optional

import typer

from muh.diagnostics import Diagnostic, MuhError, number_option
from muh.families import registry

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def parse_duration(text: str) -> float:
    """``90s``, ``10m``, ``1h``, ``1h30m`` or plain seconds → seconds."""
    t = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", t):
        return float(t)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", t)
    if not parts or "".join(a + b for a, b in parts) != t:
        raise MuhError(
            [Diagnostic("E-FLAG", f"--time {text!r} is not a duration", None, hint="write e.g. 90s, 10m or 1h30m")]
        )
    return sum(float(a) * {"h": 3600, "m": 60, "s": 1}[b] for a, b in parts)


def _cub_families() -> tuple[str, ...]:
    from muh.tune.cub_harness import FAMILIES

    return FAMILIES


def register(app: typer.Typer) -> None:
    app.command(name="tune")(tune)


def tune(
    spec: Path = typer.Argument(..., metavar="SPEC", help="The .muh spec."),
    algo: str = typer.Argument(
        ...,
        metavar="ALGO",
        help="Algorithm family to tune: "
        + ", ".join(r.name for r in registry.tunable())
        + "; with --implementation cub: "
        + ", ".join(_cub_families())
        + ".",
    ),
    implementation: str = typer.Option(
        "muh",
        "--implementation",
        metavar="IMPL",
        help="Whose kernels are measured: muh (muh's own, the default) or cub (CUB's dispatch and kernels, "
        "each candidate a policy hub generated from the candidate spec).",
    ),
    types: Optional[str] = typer.Option(
        None, "--types", metavar="TYPES", help="Element types, comma-separated (default: float32)."
    ),
    budget: Optional[int] = typer.Option(
        None,
        "--budget",
        metavar="N",
        parser=number_option(lo=1),
        help="Measure at most N variants per type (cached ones count).",
    ),
    time_limit: Optional[str] = typer.Option(
        None, "--time", metavar="DURATION", help="Stop proposing variants after this long, e.g. 10m."
    ),
    strategy: str = typer.Option(
        "random", "--strategy", metavar="STRATEGY", help="Search strategy: exhaustive, random or model."
    ),
    apply: bool = typer.Option(
        False,
        "--apply",
        help="Write winners back into SPEC with @measured(…) evidence "
        "(a kept incumbent gets @measured(…, kept = true)).",
    ),
    plot: Optional[Path] = typer.Option(
        None, "--plot", metavar="FILE.png", help="Draw a heat map of the scores into FILE.png (needs matplotlib)."
    ),
    ray: bool = typer.Option(
        False,
        "--ray",
        help="Compile on Ray and measure with one Ray actor per GPU (a local cluster unless --ray-address).",
    ),
    ray_address: Optional[str] = typer.Option(
        None,
        "--ray-address",
        metavar="ADDRESS",
        help="Use the existing Ray cluster at this address (its GPUs measure).",
    ),
    topk_shape: Optional[str] = typer.Option(
        None,
        "--topk-shape",
        metavar="ROWLENxK",
        help="For topk only: row length and k, e.g. 152064x50 (default 65536x64); sizes count elements, "
        "rows = size / row length. With --buckets k:…, one k per bucket: 152064x50,1024.",
    ),
    gpus: Optional[int] = typer.Option(
        None,
        "--gpus",
        metavar="N",
        parser=number_option(lo=1),
        help="Measure on at most N GPUs (default: every visible GPU, or every GPU of the Ray cluster).",
    ),
    db: Path = typer.Option(Path(".muh-cache/tune.sqlite"), "--db", metavar="FILE", help="Results database (SQLite)."),
    seed: int = typer.Option(
        0,
        "--seed",
        metavar="N",
        parser=number_option(),
        help="Seed of the random and model strategies (same seed = same order).",
    ),
    batch: int = typer.Option(
        8, "--batch", metavar="N", parser=number_option(lo=1, hi=64), help="Variants per translation unit."
    ),
    jobs: Optional[int] = typer.Option(
        None, "--jobs", metavar="N", parser=number_option(lo=1), help="Parallel compile jobs (default: CPU count)."
    ),
    runs: int = typer.Option(
        15, "--runs", metavar="N", parser=number_option(lo=3), help="Timed runs per size in the search (median taken)."
    ),
    confirm_top: int = typer.Option(
        3,
        "--confirm-top",
        metavar="N",
        parser=number_option(lo=1),
        help="Candidates re-measured before a winner is chosen.",
    ),
    confirm_rounds: int = typer.Option(
        3,
        "--confirm-rounds",
        metavar="N",
        parser=number_option(lo=2),
        help="Confirmation rounds (each with an A/A test of the base).",
    ),
    confirm_runs: int = typer.Option(
        25,
        "--confirm-runs",
        metavar="N",
        parser=number_option(lo=3),
        help="Timed runs per size in each confirmation round.",
    ),
    sizes: Optional[str] = typer.Option(
        None, "--sizes", metavar="SIZES", help="Problem sizes (default CCCL's 2^16,2^20,2^24,2^28), e.g. 2^16,2^20."
    ),
    buckets: Optional[str] = typer.Option(
        None,
        "--buckets",
        metavar="BOUNDS",
        help="Search per size bucket split at these element counts, e.g. 2^24 (two buckets) or 2^20,2^24, "
        "or at values of another size the family's buckets test, e.g. k:256 (topk); each bucket is measured "
        "at the --sizes (or the --topk-shape k) in it and --apply writes `when` blocks. "
        "Default: the buckets of the spec's policy, if any.",
    ),
    top: int = typer.Option(10, "--top", metavar="N", parser=number_option(lo=1), help="Rows in the final table."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Only enumerate and statically filter the space (no GPU, no compiler)."
    ),
    compile_only: bool = typer.Option(
        False, "--compile-only", help="Compile the variants but do not measure (no GPU needed)."
    ),
    variant_timeout: float = typer.Option(
        120.0,
        "--variant-timeout",
        metavar="SECONDS",
        parser=number_option(lo=1, kind=float),
        help="Seconds without a result before a variant counts as hung.",
    ),
    against: Optional[Path] = typer.Option(
        None,
        "--against",
        metavar="OLD.muh",
        help="No search: time this spec's policy against OLD.muh's (correctness-gated).",
    ),
) -> None:
    """Measure a policy space on this machine's GPU(s); store every trial; print CCCL annotations."""
    from muh.diagnostics import EXIT_INPUT, report

    def fail_input(err: MuhError) -> typer.Exit:
        report(err.diagnostics)
        return typer.Exit(EXIT_INPUT)

    try:
        _check_db(db)
        shape = _topk_shape(topk_shape, algo)
        ctx = _prepare(
            spec,
            algo,
            types,
            strategy,
            plot,
            ray,
            ray_address,
            time_limit,
            sizes,
            dry_run,
            compile_only,
            buckets,
            shape,
            against,
            implementation,
        )
        ctx["topk"] = None if shape is None else tuple(part[0] for part in shape)
    except MuhError as err:
        raise fail_input(err)
    if dry_run:
        _dry_run(ctx)
        raise typer.Exit(EXIT_OK)
    from muh.tune.runner import Options, Runner
    from muh.tune.view import Console

    opts = Options(
        family=algo,
        types=ctx["types"],
        budget=budget,
        time_limit=ctx["time"],
        strategy=strategy,
        seed=seed,
        batch=batch,
        jobs=jobs,
        runs=runs,
        confirm_top=confirm_top,
        confirm_rounds=confirm_rounds,
        confirm_runs=confirm_runs,
        sizes=ctx["sizes"],
        db=db,
        ray=ray,
        ray_address=ray_address,
        gpus=gpus,
        topk=ctx["topk"],
        compile_only=compile_only,
        variant_timeout=variant_timeout,
        implementation=ctx["implementation"],
    )
    view = Console(top)
    runner = Runner(ctx["loaded"].spec, ctx["machine"], opts, view.events())
    if against is not None:
        raise typer.Exit(_against(runner, view, ctx, against))
    reports, interrupted = _search(runner, view, ctx, opts)
    for rep in reports:
        view.summary(rep)
    if interrupted:
        view.note(f"interrupted: every finished trial is kept in {db}; run the same command again to resume")
        raise typer.Exit(EXIT_INTERRUPTED)
    _outputs(view, ctx, reports, spec, plot, apply and not compile_only)
    raise typer.Exit(EXIT_OK)


def _search(runner, view, ctx, opts) -> tuple[list, bool]:
    """Search every space of ``ctx`` in turn (the runner closed after): (reports, interrupted). A bad
    input is its diagnostics and a measurement failure a message (exit codes 2 and 1), never a traceback."""
    from muh.diagnostics import EXIT_INPUT, report

    reports = []
    interrupted = False
    view.header(ctx, opts)
    for name, flag in ctx.get("unsearched", ()):
        view.note(f"{name}: not searched (no value of {flag} in it): it keeps its values")
    try:
        with view.live():
            for space in ctx["spaces"].values():
                rep = runner.run_space(space)
                reports.append(rep)
                if rep.interrupted:
                    interrupted = True
                    break
    except KeyboardInterrupt:
        runner.interrupt()
        interrupted = True
    except MuhError as err:
        runner.close()
        report(err.diagnostics)
        raise typer.Exit(EXIT_INPUT)
    except Exception as err:  # noqa: BLE001 - a measurement failure is a message, never a traceback
        runner.close()
        sys.stderr.write(f"error: tuning stopped: {type(err).__name__}: {err} [E-TUNE]\n")
        raise typer.Exit(EXIT_FAIL)
    runner.close()
    return reports, interrupted


def _outputs(view, ctx, reports, spec: Path, plot: Path | None, apply: bool) -> None:
    """What a finished search writes: the heat maps (--plot) and the winners, into SPEC (--apply)."""
    from muh.diagnostics import EXIT_INPUT, report

    if plot is not None:
        from muh.tune.view import plot_reports

        for path in plot_reports(plot, ctx, reports):
            view.note(f"wrote {path}")
    if apply:
        try:
            changed = _apply(ctx, reports)
        except MuhError as err:
            report(err.diagnostics)
            raise typer.Exit(EXIT_INPUT)
        view.note(
            f"applied winners to {spec}: {changed}"
            if changed
            else f"--apply: nothing to change in {spec} (no winner beat the base beyond noise)"
        )


def _prepare(
    spec,
    algo,
    types,
    strategy,
    plot,
    ray,
    ray_address,
    time_limit,
    sizes,
    dry_run,
    compile_only,
    buckets=None,
    shape=None,
    against=None,
    implementation="muh",
) -> dict:
    """Everything a tune run needs before it measures, each flag checked in turn (a bad one is a
    MuhError), --dry-run included: the loaded spec, its types, the spaces to search, where --plot draws,
    the --against spec and, unless --dry-run, the machine."""
    from muh.pipeline import load_file
    from muh.tune.cub_harness import check_implementation

    check_implementation(implementation)
    _check_strategy(strategy)
    loaded = load_file(spec)
    type_list = _types(loaded.spec, algo, types, implementation)
    size_list = _sizes(sizes)
    spaces, unsearched, all_buckets = _spaces(
        loaded.spec, algo, type_list, size_list, sizes, buckets, shape, implementation
    )
    _check_shape_per_bucket(algo, shape, spaces)
    _check_plot(plot)
    _check_optional_tools(plot, ray, ray_address)
    old = _against_spec(against) if against is not None else None
    if not spaces:
        what = "--topk-shape" if shape is not None else "--sizes"
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    "no bucket to search: " + ", ".join(n for n, _ in unsearched) + f" hold no value of {what}",
                    None,
                    hint="give one k per bucket, e.g. --topk-shape 152064x50,1024"
                    if shape is not None
                    else "add a size in a bucket to --sizes",
                )
            ]
        )
    ctx = {
        "loaded": loaded,
        "types": type_list,
        "spaces": spaces,
        "sizes": tuple(size_list),
        "algo": algo,
        "unsearched": unsearched,
        "buckets": all_buckets,
        "time": parse_duration(time_limit) if time_limit else None,
        "spec_path": spec,
        "against": old,
        "implementation": implementation,
    }
    if dry_run:
        return ctx
    ctx["machine"] = _machine(compile_only, ray_address)
    return ctx


def _check_strategy(strategy: str) -> None:
    from muh.tune.strategy import STRATEGIES

    if strategy not in STRATEGIES:
        from muh.diagnostics import did_you_mean

        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"unknown strategy `{strategy}`",
                    None,
                    hint=did_you_mean(strategy, STRATEGIES) or f"strategies: {', '.join(STRATEGIES)}",
                )
            ]
        )


def _types(spec, algo: str, types: str | None, implementation: str = "muh") -> list[str]:
    """--types as a list (default float32; CUB's kernels: int32): each with a space in the spec and a
    generated kernel (a CUB harness)."""
    from muh import families
    from muh.tune.space import build_space

    default = "int32" if implementation == "cub" else "float32"
    type_list = [t.strip() for t in (types or default).split(",") if t.strip()]
    for t in type_list:
        build_space(spec, algo, t, implementation=implementation)  # its own diagnostics first (family, type, space)
    if implementation == "cub":
        from muh.tune import cub_harness

        cub_harness.check_types(algo, type_list)
        return type_list
    generated = rec.dtypes if (rec := families.find(algo)) else ()
    for t in type_list:
        if t not in generated:
            raise MuhError(
                [
                    Diagnostic(
                        "E-TUNE",
                        f"muh's {algo} kernels are not generated for {t}",
                        None,
                        hint=f"{algo} types: {', '.join(generated)}",
                    )
                ]
            )
    return type_list


def _sizes(sizes: str | None) -> list[int]:
    """--sizes as element counts (default CCCL's)."""
    from muh.tune import stats

    if sizes is None:
        return list(stats.SIZES)
    try:
        out = [int(eval_pow(s)) for s in sizes.split(",") if s.strip()]
    except ValueError:
        out = []
    if not out:  # `--sizes ''` measured nothing (the default was taken silently)
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--sizes {sizes!r}: write sizes like 2^16,2^20 or 65536 (each 1 … 2^40 elements)",
                    None,
                    hint="leave --sizes out for CCCL's sizes, "
                    + ",".join(f"2^{n.bit_length() - 1}" for n in stats.SIZES),
                )
            ]
        )
    return out


def _spaces(
    spec,
    algo: str,
    type_list: list[str],
    size_list: list[int],
    sizes: str | None,
    buckets: str | None,
    shape,
    implementation: str = "muh",
) -> tuple[dict, list, dict]:
    """(the spaces to search by name, the buckets left unsearched with the flag they hold no value of,
    each type's buckets): one space per type and bucket."""
    from muh.schema.models import Bucket
    from muh.tune.space import build_space

    spaces, unsearched, all_buckets = {}, [], {}
    for t in type_list:
        key, bounds = _buckets_of(spec, algo, t, buckets)
        all_buckets[t] = [b for b in bounds if b is not None]
        for b in bounds:
            at = _bucket_shape(algo, key, b, shape)
            if at is _UNMEASURED:  # no value of the shape part it tests: it keeps its values
                unsearched.append((f"{algo} {t} [{Bucket(size=key, lo=b[0], hi=b[1]).label}]", "--topk-shape"))
                continue
            sp = build_space(spec, algo, t, b, key, at, implementation)
            if key == "elements" and not sp.sizes(size_list):
                if sizes and not buckets and len(bounds) > 1:
                    # --sizes chose where to measure among the spec's buckets: one none of them falls in
                    # keeps its values (as a k bucket without a k of --topk-shape does); a bucket named by
                    # --buckets or one the default sizes miss is a mistake
                    unsearched.append((f"{algo} {t} [{sp.bucket_label}]", "--sizes"))
                    continue
                raise MuhError(
                    [
                        Diagnostic(
                            "E-FLAG",
                            f"no size of --sizes ({', '.join(map(str, size_list))}) falls in the "
                            f"bucket `{sp.bucket_label}` of {algo} {t}",
                            None,
                            hint="add a size in it to --sizes, or choose other --buckets",
                        )
                    ]
                )
            spaces[sp.name] = sp
    return spaces, unsearched, all_buckets


def _check_shape_per_bucket(algo: str, shape, spaces: dict) -> None:
    """Several values of one --topk-shape part are measured one per bucket: only with buckets."""
    several = [
        f"{name} ({', '.join(map(str, vals))})" for name, vals in zip(_shape_keys(algo), shape or ()) if len(vals) > 1
    ]
    if several and not all(sp.shape for sp in spaces.values()):
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--topk-shape lists several values of {', '.join(several)}, measured one per bucket",
                    None,
                    hint=f"search per bucket, e.g. --buckets {several[0].split()[0]}:256, or give one value",
                )
            ]
        )


def _check_plot(plot: Path | None) -> None:
    """--plot FILE.png: a file in a folder that exists (found out before the search, not after it)."""
    if plot is None:
        return
    folder = plot.parent
    if plot.is_dir():
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--plot {plot}: is a folder; --plot takes the image's file name",
                    None,
                    hint=f"write e.g. --plot {plot / 'heatmap.png'}",
                )
            ]
        )
    if not folder.is_dir():
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--plot {plot}: the folder {folder} does not exist",
                    None,
                    hint=f"create it (mkdir -p {folder}) or draw elsewhere",
                )
            ]
        )


def _against_spec(path: Path):
    """--against OLD.muh, loaded before anything is measured (a missing or broken spec is a bad flag)."""
    from muh.pipeline import load_file

    try:
        return load_file(path).spec
    except MuhError as err:
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--against {path}: the spec to time against does not load",
                    None,
                    hint="name a .muh spec that `muh build` accepts",
                )
            ]
            + err.diagnostics
        ) from None


def _check_optional_tools(plot, ray: bool, ray_address) -> None:
    """--plot needs matplotlib, --ray/--ray-address Ray."""
    from muh.tune.compile import ray_available

    if plot is not None:
        from muh.tune.plot import require

        require()
    if (ray or ray_address) and not ray_available():
        raise MuhError(
            [
                Diagnostic(
                    "E-RAY",
                    "--ray/--ray-address need Ray, which is not installed",
                    None,
                    hint="pip install 'muh[tune]' (or pip install ray), or compile locally without --ray",
                )
            ]
        )


def _machine(compile_only: bool, ray_address):
    """This machine (GPUs, driver, nvcc): nvcc always, a visible GPU unless it only compiles or a Ray
    cluster's GPUs measure."""
    from muh.tune.machine import detect

    machine = detect()
    if not machine.nvcc:
        raise MuhError(
            [
                Diagnostic(
                    "E-NVCC",
                    "muh tune needs the CUDA compiler (nvcc), which is not on PATH",
                    None,
                    hint="install the CUDA toolkit or add its bin/ folder to PATH",
                )
            ]
        )
    if not machine.gpus and not compile_only and not ray_address:  # with a cluster, its nodes' GPUs measure
        raise MuhError(
            [
                Diagnostic(
                    "E-NOGPU",
                    "muh tune measures on a GPU, and this machine has none visible",
                    None,
                    hint="run it on a machine with an NVIDIA GPU "
                    "(nvidia-smi must list it; check CUDA_VISIBLE_DEVICES); "
                    "`--dry-run` shows the space and `--compile-only` compiles it without a GPU",
                )
            ]
        )
    return machine


def _buckets_of(spec, algo: str, dtype: str, bounds: str | None) -> tuple[str, list]:
    """(the size the buckets test, the buckets to search for ``dtype``): split at --buckets (``2^24``,
    ``2^20,2^24``: element counts; ``k:256``: values of another size the family's buckets test), else
    the spec's own, else [None] (one search over every size)."""
    from muh import families
    from muh.schema.models import Bucket
    from muh.tune.space import spec_bucket_key, spec_buckets

    have, have_key = spec_buckets(spec, algo, dtype), spec_bucket_key(spec, algo, dtype)
    if bounds is None:
        return have_key or "elements", have or [None]
    key, _, cuts_text = bounds.rpartition(":")
    key = key.strip() or "elements"
    accepted = rec.buckets_by if (rec := families.find(algo)) else ()
    if not accepted:  # `--apply` would write `when` blocks its build refuses
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--buckets {bounds}: the {algo} kernels do not dispatch by size, so "
                    f"its policies cannot hold size buckets",
                    None,
                    hint="leave --buckets out: one search over every size",
                )
            ]
        )
    if key not in accepted:
        from muh.diagnostics import did_you_mean

        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--buckets {bounds!r}: {algo}'s buckets cannot test `{key}`",
                    None,
                    hint=did_you_mean(key, accepted) or f"{algo}'s buckets test: {', '.join(accepted)}",
                )
            ]
        )
    try:
        cuts = sorted({int(eval_pow(b)) for b in cuts_text.split(",") if b.strip()})
    except ValueError:
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--buckets {bounds!r}: write element counts like 2^24 or 2^20,2^24 (or KEY:bounds, e.g. k:256)",
                    None,
                )
            ]
        ) from None
    if not cuts or cuts[0] <= 0:
        raise MuhError([Diagnostic("E-FLAG", f"--buckets {bounds!r}: the bounds must be positive counts", None)])
    want = list(zip([0] + cuts, cuts + [None]))
    if have and (have != want or have_key != key):
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--buckets {bounds} differs from the buckets of the spec's {algo} {dtype} policy "
                    f"({', '.join(Bucket(size=have_key, lo=lo, hi=hi).label for lo, hi in have)})",
                    None,
                    hint="leave --buckets out to search the spec's buckets, or change them in the spec first",
                )
            ]
        )
    return key, want


def _shape_keys(algo: str) -> tuple[str, ...]:
    from muh import families

    h = rec.harness if (rec := families.find(algo)) else None
    return h.shape_keys if h else ()


_UNMEASURED = object()  # a bucket that holds no value of the shape part it tests: not searched


def _bucket_shape(algo: str, key: str, bucket, shape) -> tuple | None:
    """The problem shape a bucket that tests a part of the family's shape (topk: `k`) is measured at:
    the one value of that part (--topk-shape's list) in the bucket; None for other buckets;
    ``_UNMEASURED`` when --topk-shape gives none in it (the bucket is not searched and keeps its values)."""
    from muh import families
    from muh.schema.models import Bucket

    names = _shape_keys(algo)
    if bucket is None or key not in names:
        return None
    parts = shape or tuple((x,) for x in families.get(algo).harness.shape)
    i = names.index(key)
    lo, hi = bucket
    inside = [x for x in parts[i] if x >= lo and (hi is None or x < hi)]
    label = Bucket(size=key, lo=lo, hi=hi).label
    if not inside and shape is not None:
        return _UNMEASURED
    if len(inside) != 1:
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"{'no' if not inside else 'more than one'} {key} of --topk-shape "
                    f"({', '.join(map(str, parts[i]))}) falls in the bucket `{label}`",
                    None,
                    hint=f"give one {key} per bucket, e.g. --topk-shape 152064x50,1024 for --buckets {key}:256",
                )
            ]
        )
    return tuple(inside[0] if j == i else part[0] for j, part in enumerate(parts))


def _topk_shape(text: str | None, algo: str) -> tuple[tuple[int, ...], ...] | None:
    """--topk-shape ROWLENxK[,K…]: each part's values (several k: one per k bucket)."""
    if text is None:
        return None
    if algo != "topk":
        raise MuhError([Diagnostic("E-FLAG", f"--topk-shape applies to topk, not {algo}", None)])
    try:
        cols, ks = (tuple(int(eval_pow(x)) for x in t.split(",") if x.strip()) for t in text.lower().split("x"))
    except ValueError:
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--topk-shape {text!r}: write ROWLENxK, e.g. 152064x50 (one k per k bucket: 152064x50,1024)",
                    None,
                )
            ]
        ) from None
    if len(cols) != 1 or not ks or not all(1 <= k <= cols[0] for k in ks):
        raise MuhError(
            [Diagnostic("E-FLAG", f"--topk-shape {text!r}: one row length, and each k between 1 and it", None)]
        )
    return cols, ks


def _check_db(db: Path) -> None:
    """--db names a file SQLite can open (a folder, a device or a missing parent folder is an option error)."""
    if db.exists() and not db.is_file():
        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--db {db}: not a file (a folder or a device); the results database is one SQLite file",
                    None,
                    hint=f"e.g. --db {db / 'tune.sqlite'}" if db.is_dir() else None,
                )
            ]
        )
    parent = db.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise MuhError([Diagnostic("E-FLAG", f"--db {db}: {parent} is not a folder", None)])


MAX_SIZE = 2**40  # elements of one measured problem: far beyond any GPU's memory


def eval_pow(s: str) -> int:
    """``2^16`` or ``65536``: a positive element count up to 2^40 (ValueError otherwise, before computing)."""
    s = s.strip()
    if "^" in s:
        a, b = (int(x) for x in s.split("^", 1))
        if a < 0 or b < 0 or (a > 1 and b * (a.bit_length() - 1) > MAX_SIZE.bit_length()):
            raise ValueError(s)
        n = a**b
    else:
        n = int(s)
    if not 1 <= n <= MAX_SIZE:
        raise ValueError(s)
    return n


def _dry_run(ctx) -> None:
    from muh.tune.space import static_filter
    from muh.tune.unit import emitter_reasons

    for name, flag in ctx.get("unsearched", ()):
        typer.echo(f"{name}: not searched (no value of {flag} in it): it keeps its values")

    spec = ctx["loaded"].spec
    for t, space in ctx["spaces"].items():
        hw = spec.hardware[spec.algorithms[space.akey].on]
        keep, rejected = static_filter(space, extra=lambda e: emitter_reasons(e, hw))
        dims = tuple(space.dims)
        where = f"`policy {space.policy_key}`" + (f", bucket `{space.bucket_label}`" if space.bucket else "")
        at = (
            ""
            if space.shape is None
            else "; measured at " + ", ".join(f"{n} = {v}" for n, v in zip(_shape_keys(space.family), space.shape))
        )
        impl = " (CUB's kernels)" if space.implementation == "cub" else ""
        typer.echo(
            f"{space.akey}{impl} {t}: {space.size} variants in the space, {len(keep)} pass the static filter, "
            f"{len(rejected)} rejected; base {space.base.label(dims)}; winners go to {where}{at}"
        )
        reasons: dict[str, int] = {}
        for r in rejected:
            for why in r.reasons:
                k = re.sub(r"\b\d+\b", "N", why)
                reasons[k] = reasons.get(k, 0) + 1
        for why, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
            typer.echo(f"  rejected {n:>5} × {why}")


def _apply(ctx, reports) -> str:
    from muh.derive import hardware_fingerprint
    from muh.grammar.parser import read_spec, with_ending
    from muh.schema import load
    from muh.tune.rewrite import Evidence, apply_winner

    spec = ctx["loaded"].spec
    machine = ctx["machine"]
    text, shown, ending = read_spec(ctx["spec_path"])
    changed = []
    from muh.tune.space import spec_buckets

    for rep in reports:
        if not rep.decision or rep.interrupted:
            continue
        space = rep.space
        if (
            space.bucket is not None
            and not spec_buckets(spec, space.family, space.dtype)
            and not any(r.winner for r in reports if r.space.dtype == space.dtype and r.space.bucket is not None)
        ):
            continue  # no bucket has a winner: the policy stays one for every size (CCCL keeps the incumbent)
        hw_name = spec.algorithms[space.akey].on
        hw = spec.hardware[hw_name]
        base = space.base.as_dict()
        stamp = dict(
            device=machine.gpu_name,
            date=time.strftime("%Y-%m-%d", time.gmtime()),
            toolkit=f"CUDA {machine.toolkit}, driver {machine.driver}",
            fingerprint=hardware_fingerprint(hw),
        )
        if rep.winner and rep.decision.winner:
            new = rep.winner.as_dict()
            changes = {d: new[d] for d in space.dims if new.get(d) != base.get(d)}
            if not changes:
                continue
            cand = next(c for c in rep.candidates if c.label == rep.decision.winner)
            sp = cand.size_speedups()
            ev = Evidence(
                samples=rep.samples,
                variant=rep.decision.winner,
                score=cand.score,
                min=min(sp),
                mean=sum(sp) / len(sp),
                max=max(sp),
                **stamp,
            )
            what = ", ".join(f"{d} = {v}" for d, v in sorted(changes.items()))
        else:
            # measured and kept: the incumbent's values get evidence too (best challenger, its score),
            # so `muh explain` says "measured, kept" instead of "spec"
            # (a candidate whose every confirmation round failed has no score)
            best = max((c for c in rep.candidates if c.rounds), key=lambda c: c.score, default=None)
            # the best *other* kernel: a label that compiles to the base's own kernel (vec capped, threads
            # scaled down) only measures the base against itself
            ranked = [
                r
                for r in rep.ok_rows()
                if r.label != space.base.label(tuple(space.dims)) and r.kernel != rep.base_kernel
            ]
            if best is not None:
                sp = best.size_speedups()
                label, score = best.label, best.score
            elif ranked:
                sp, label, score = list(ranked[0].score.speedups), ranked[0].label, ranked[0].score.score
            else:
                continue  # nothing was measured: no evidence to write
            changes = {d: base[d] for d in space.dims if d in base}
            ev = Evidence(
                samples=rep.samples,
                variant=label,
                score=score,
                min=min(sp),
                mean=sum(sp) / len(sp),
                max=max(sp),
                kept=True,
                **stamp,
            )
            what = "kept " + ", ".join(f"{d} = {v}" for d, v in sorted(changes.items()))
        # every bucket of the type (one not searched gets an empty `when` block: it keeps the policy's values)
        bounds = ctx.get("buckets", {}).get(space.dtype) or [
            r.space.bucket for r in reports if r.space.bucket is not None and r.space.dtype == space.dtype
        ]
        text = apply_winner(
            text,
            shown,
            space.family,
            hw_name,
            space.policy_key,
            changes,
            ev,
            bucket=space.bucket,
            buckets=bounds or None,
            size=space.bucket_key,
        )
        changed.append(f"{space.policy_key}" + (f" [{space.bucket_label}]" if space.bucket else "") + f": {what}")
    if not changed:
        return ""
    load(text, shown)  # the rewritten spec must still be valid before it replaces the old one
    from muh.pipeline import derive

    derive(load(text, shown))
    from muh.output import replace_file

    replace_file(Path(ctx["spec_path"]), with_ending(text, ending))  # atomic, keeps the mode and line endings
    return "; ".join(changed)


def _against(runner, view, ctx, old_path: Path) -> int:
    """`--against OLD.muh`: this spec's policy timed against OLD's, speedup = old time / new time."""
    from muh.diagnostics import report
    from muh.pipeline import load_file
    from muh.tune import stats

    view.header(ctx, runner.opts)
    try:
        old = ctx["against"] if ctx.get("against") is not None else load_file(old_path).spec
        for dtype in ctx["types"]:
            rounds, aa, old_label, new_label = runner.compare(old, dtype)
            cand = stats.Candidate(new_label, rounds)
            sp = cand.size_speedups()
            noise = stats.noise_of(aa, runner.opts.sizes)
            view.note(
                f"{ctx['algo']} {dtype}: {new_label} (this spec) against {old_label} ({old_path}), "
                f"{len(rounds)} rounds × {runner.opts.confirm_runs} runs per size, correctness-gated"
            )
            view.note("  speedup per size (old time / new time): " + ", ".join(f"{x:.4f}" for x in sp))
            view.note(
                "  "
                + stats.Score(cand.score, min(sp), sum(sp) / len(sp), max(sp), tuple(sp)).line(new_label)
                + f"   (A/A noise ±{noise:.4f})"
            )
    except MuhError as err:
        runner.close()
        report(err.diagnostics)
        return EXIT_INPUT
    except KeyboardInterrupt:
        runner.interrupt()
        runner.close()
        return EXIT_INTERRUPTED
    runner.close()
    return EXIT_OK
