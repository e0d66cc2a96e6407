"""`muh probe`: write the probe bundle for a spec, or ingest what it measured.

    muh probe SPEC -o DIR [--emulate-warp N]                     the bundle (atomic, like build)
    muh probe --ingest RESULT.json SPEC [--apply] [--accept-device-name]

Exit codes: 0 ok (bundle written; facts agree, provenance written; or --apply wrote them); 1 a
contradiction, or the result comes from another device (nothing written); 2 bad input (spec, flag,
or a result file that is truncated, of another schema version, or holds impossible values).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from muh.diagnostics import number_option


def fail_input(err) -> typer.Exit:
    """Print the diagnostics of a bad input; the exit for it (2)."""
    from muh.diagnostics import EXIT_INPUT, report

    report(err.diagnostics)
    return typer.Exit(EXIT_INPUT)


def register(app: typer.Typer) -> None:
    app.command(name="probe")(probe)


def probe(
    spec: Path = typer.Argument(..., help="The .muh spec (one hardware block)."),
    out: Optional[Path] = typer.Option(
        None, "-o", "--out", help="Bundle folder (default probe-<spec name>/); the bundle is DIR/probe/."
    ),
    emulate_warp: Optional[int] = typer.Option(
        None,
        "--emulate-warp",
        parser=number_option(),
        help="Build the warp layer emulating this warp width on a 32-lane GPU (lab test of warp-N logic).",
    ),
    ingest: Optional[Path] = typer.Option(
        None, "--ingest", help="A result written by probe/run.sh: compare it with SPEC."
    ),
    apply: bool = typer.Option(
        False, "--apply", help="With --ingest: write measured values over contradicting ones and add missing facts."
    ),
    accept_device_name: bool = typer.Option(
        False,
        "--accept-device-name",
        help="With --ingest: the spec's device_name was a guess; treat a different reported name as a contradiction, "
        "not as another device.",
    ),
) -> None:
    """Measure the target's facts (bundle) and write them back into the spec (--ingest)."""
    _check_flags(out, emulate_warp, ingest, apply, accept_device_name)
    if ingest is None:
        _bundle(spec, out, emulate_warp)
        return
    _ingest(spec, ingest, apply, accept_device_name)


_REFUSED = ("E-PROBE-CONTRADICTS", "E-PROBE-FOREIGN", "E-PROBE-WARP")
"""The ingest errors that are a verdict on the spec (exit 1), not a bad input (exit 2)."""


def _check_flags(out, emulate_warp, ingest, apply: bool, accept_device_name: bool) -> None:
    """The flags of one mode only: a bundle (-o, --emulate-warp) or an ingest (--apply, --accept-device-name)."""
    from muh.diagnostics import EXIT_INPUT, _err

    if ingest is None and (apply or accept_device_name):
        _err("error: --apply and --accept-device-name need --ingest RESULT.json [E-FLAG]")
        raise typer.Exit(EXIT_INPUT)
    if ingest is not None and (out is not None or emulate_warp):
        _err(
            "error: --ingest compares a result with the spec; -o and --emulate-warp belong to writing a bundle [E-FLAG]"
        )
        raise typer.Exit(EXIT_INPUT)
    if emulate_warp is not None and (emulate_warp < 1 or emulate_warp & (emulate_warp - 1)):
        _err(f"error: --emulate-warp {emulate_warp}: a warp width is a power of two [E-FLAG]")
        raise typer.Exit(EXIT_INPUT)


def _ingest(spec: Path, ingest: Path, apply: bool, accept_device_name: bool) -> None:
    """--ingest: compare the result with the spec, print each fact's outcome, write the spec back."""
    from muh.diagnostics import EXIT_FAIL, EXIT_INPUT, MuhError, _err, report
    from muh.grammar.parser import read_spec
    from muh.probe_ingest.ingest import ingest as run_ingest
    from muh.probe_ingest.ingest import read_result

    try:
        text, shown, ending = read_spec(spec)
        result = read_result(ingest)
    except MuhError as err:
        raise fail_input(err)
    model, spec_errors = _spec_model(spec, text, shown)
    try:
        done = run_ingest(result, str(ingest), text, shown, model, apply=apply, accept_device_name=accept_device_name)
    except MuhError as err:
        report(err.diagnostics)
        if spec_errors:
            _err(
                f"note: {shown} does not load as a whole ({sum(d.is_error for d in spec_errors)} errors, "
                f"`muh build {shown}` lists them); the probe's facts were checked against its hardware block"
            )
        raise typer.Exit(EXIT_FAIL if any(d.code.startswith(_REFUSED) for d in err.diagnostics) else EXIT_INPUT)
    if done.notes:
        report(done.notes)
    _print_outcomes(done.outcomes, apply)
    if spec_errors and not apply:  # agreement, but the spec itself is broken: nothing to write into
        raise fail_input(MuhError(spec_errors))
    _write_back(spec, text, shown, ending, done, result, apply)


def _spec_model(spec: Path, text: str, shown: str) -> tuple:
    """(the spec's model, its errors): the whole spec, or, where it does not load, its hardware only
    (the measured facts are checked against that); a spec whose hardware does not load either is a bad input."""
    from muh.diagnostics import MuhError
    from muh.pipeline import load_file
    from muh.probe_ingest.ingest import hardware_only

    try:
        return load_file(spec).spec, []
    except MuhError as err:
        spec_errors = err.diagnostics
        try:
            return hardware_only(text, shown), spec_errors
        except MuhError as err2:
            raise fail_input(MuhError(spec_errors + err2.diagnostics))


def _print_outcomes(outcomes, apply: bool) -> None:
    """One line per fact: agreed, differing (written with --apply) or not stated (added with --apply)."""
    for o in outcomes:
        m = o.measured
        if o.status == "agree":
            typer.echo(f"  agree       {o.field} = {m.shown}  [{m.method}]")
        elif o.status == "contradict":
            typer.echo(f"  {'written' if apply else 'differs':<11} {o.field} = {m.shown}  (spec had {o.spec_shown})")
        elif o.status == "add":
            typer.echo(
                f"  {'added' if apply else 'not stated':<11} {o.field} = {m.shown}"
                + ("" if apply else "  (--apply adds it)")
            )


def _write_back(spec: Path, text: str, shown: str, ending: str, done, result, apply: bool) -> None:
    """With --apply, the spec with the measured values and their provenance written, if that changes it;
    without, the compare is read-only (as `muh deploy` without --apply): it says what --apply would write."""
    from muh.diagnostics import EXIT_FAIL, Diagnostic, MuhError, _err, report
    from muh.grammar.parser import with_ending
    from muh.probe_ingest.ingest import write_spec

    try:
        if done.new_text is None or done.new_text == text:
            typer.echo(f"{shown}: nothing to change")
        elif not apply:
            typer.echo(
                f"{shown}: unchanged (a compare is read-only); `--apply` writes the provenance"
                + (" and the measured values" if any(o.status != "agree" for o in done.outcomes) else "")
            )
        else:
            write_spec(Path(spec), with_ending(done.new_text, ending), shown)
            typer.echo(
                f"{shown}: measured on {done.device} ({result.date[:10]}): provenance written, measured values applied"
            )
    except MuhError as err:
        report([Diagnostic(d.code, d.message, d.span, d.hint) for d in err.diagnostics])
        _err("note: the spec was left unchanged")
        raise typer.Exit(EXIT_FAIL)


def _bundle(spec: Path, out: Optional[Path], emulate_warp: Optional[int]) -> None:
    from muh.codegen.base import BuildContext
    from muh.codegen.probe import emit_probe_bundle
    from muh.diagnostics import MuhError
    from muh.pipeline import _manifest, load_file, write_atomic

    try:
        loaded = load_file(spec)
        ctx = BuildContext(loaded.spec, loaded.derived, options={"emulate_warp": emulate_warp} if emulate_warp else {})
        files = emit_probe_bundle(ctx)
        target = out if out is not None else Path(f"probe-{loaded.spec.name}")
        write_atomic(files + [_manifest(ctx, files)], target)
    except MuhError as err:
        raise fail_input(err)
    typer.echo(f"wrote {len(files)} files to {target}/probe/ (run: bash {target}/probe/run.sh RESULT.json)")
