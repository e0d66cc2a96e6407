"""The `muh` command: arguments, the stages in order, diagnostics (``diagnostics.report``) and exit
codes. `muh tune` and `muh deploy` register their commands from tune/cli.py and deploy/cli.py.

Exit codes: 0 ok; 1 a check failed or an operation was refused; 2 bad input (spec error, bad option
value, an output folder muh may not replace); 64 a command line the option parser refuses (unknown
option, missing argument); 130 interrupted.
"""

from __future__ import annotations

import sys

try:  # Ctrl-C while the interpreter is still importing: one line, exit 130 (as later)
    import json
    from pathlib import Path
    from typing import List, Optional

    import typer

    import muh
    from muh.diagnostics import EXIT_FAIL, EXIT_INPUT, EXIT_OK, Diagnostic, MuhError, _err, number_option, report
except KeyboardInterrupt:  # pragma: no cover - timing-dependent; tests/cli/test_output.py sends it
    sys.stderr.write("interrupted\n")
    raise SystemExit(130) from None


def _usage_exit_code() -> None:
    """The option parser's errors exit EXIT_USAGE (its own 2 would read as `muh deploy`'s "changes")."""
    from muh.diagnostics import EXIT_USAGE

    try:
        from typer._click.exceptions import UsageError
    except ImportError:  # pragma: no cover - typer releases that use click itself
        from click.exceptions import UsageError
    UsageError.exit_code = EXIT_USAGE


_usage_exit_code()

app = typer.Typer(
    name="muh",
    help="One spec for hardware, CUB-style algorithm policies and LLM-serving deployment.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def fail_input(err: MuhError) -> "typer.Exit":
    report(err.diagnostics)
    return typer.Exit(EXIT_INPUT)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"muh {muh.__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """muh: build, check, explain, format, tune and deploy .muh specs."""


@app.command()
def build(
    spec: Path = typer.Argument(..., metavar="SPEC", help="The .muh spec."),
    out: Optional[Path] = typer.Option(
        None, "-o", "--out", metavar="DIR", help="Output folder (default generated/<spec name>/)."
    ),
    emulate_warp: Optional[int] = typer.Option(
        None,
        "--emulate-warp",
        metavar="N",
        parser=number_option(),
        help="Also emit kernels that emulate this logical warp width on the build GPU.",
    ),
) -> None:
    """Parse → validate → derive → generate into a folder; atomic and byte-identical for the same spec."""
    from muh.pipeline import build as run_build

    options = {"emulate_warp": emulate_warp} if emulate_warp is not None else {}
    warnings: list[Diagnostic] = []
    try:
        target, files = run_build(spec, out, options, warnings)
    except MuhError as err:
        raise fail_input(err)
    if warnings:
        report(warnings)
    typer.echo(f"wrote {len(files)} files to {target}/")


@app.command()
def fmt(
    specs: List[Path] = typer.Argument(..., metavar="SPEC", help="Spec files to format in place."),
    check: bool = typer.Option(False, "--check", help="Only report files that are not formatted; exit 1 if any."),
) -> None:
    """Format specs in place in the canonical layout (comments kept)."""
    from muh.grammar.format import format_module
    from muh.grammar.parser import parse, read_spec, with_ending

    unformatted = []
    for path in specs:
        try:
            text, shown, ending = read_spec(path)
            new = format_module(parse(text, shown))
        except MuhError as err:
            raise fail_input(err)
        if new != text:
            new = with_ending(new, ending)  # the file keeps its own line endings (CRLF, CR or LF)
            unformatted.append(shown)
            if not check:
                from muh.output import replace_file

                try:
                    replace_file(path, new)  # the file a link points to is formatted; the link stays
                except OSError as err:
                    _err(f"error: {shown}: cannot write: {err.strerror or err} [E-IO]")
                    raise typer.Exit(EXIT_FAIL)
                typer.echo(f"formatted {shown}")
    if check and unformatted:
        for name in unformatted:
            _err(f"error: {name} is not formatted (run `muh fmt {name}`)")
        raise typer.Exit(EXIT_FAIL)


@app.command()
def schema() -> None:
    """Print the JSON Schema of a spec's structure (keys, types, values, docs) for editors and language servers."""
    from muh.schema.jsonschema import spec_json_schema

    typer.echo(json.dumps(spec_json_schema(), indent=2, sort_keys=True))


@app.command()
def explain(
    spec: Path = typer.Argument(..., metavar="SPEC", help="The .muh spec."),
    what: str = typer.Argument(
        ...,
        metavar="WHAT",
        help="An algorithm (reduce, scan@bi100), optionally with .<type>[.<op>][.<dimension>]; "
        "ops[.<type>[.<value>]]; or deploy[.<key>].",
    ),
) -> None:
    """Show resolved policies and how each number came to be (rule, inputs, measurement)."""
    from muh.explain import explain as run_explain
    from muh.pipeline import load_file

    try:
        loaded = load_file(spec)
        lines = run_explain(loaded.derived, what, loaded.spec)
    except MuhError as err:
        raise fail_input(err)
    typer.echo("\n".join(lines))


@app.command()
def check(
    specs: List[Path] = typer.Argument(None, metavar="SPEC", help="Specs to check (default: specs/*.muh)."),
    only: Optional[List[str]] = typer.Option(None, "--only", metavar="CHECK", help="Run only this check (repeatable)."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Print every case of every check."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Recompile CUB ground truth and headers; trust no cache."),
    strict: bool = typer.Option(False, "--strict", help="Every skipped check is a failure (what CI runs)."),
) -> None:
    """Run every check that applies; a table of name, status, time and detail."""
    from muh.check import available, known, run_checks
    from muh.codegen.base import BuildContext
    from muh.pipeline import load_file

    paths = list(specs or sorted(Path("specs").glob("*.muh")))
    if not paths:
        _err("error: no specs given and none found in specs/ [E-IO]\n  hint: muh check SPEC…")
        raise typer.Exit(EXIT_INPUT)
    names = available()
    for name in only or []:
        if not known(name):
            from muh.diagnostics import did_you_mean

            _err(
                f"error: --only {name}: unknown check; checks: {', '.join(names)} [E-OPTION]"
                + (f"\n  hint: {did_you_mean(name, names)}" if did_you_mean(name, names) else "")
            )
            raise typer.Exit(EXIT_INPUT)
    failed = False
    for path in paths:
        try:
            loaded = load_file(path)
        except MuhError as err:
            raise fail_input(err)
        flags = {"verbose": verbose, "no_cache": no_cache}
        results = run_checks(BuildContext(loaded.spec, loaded.derived, flags=flags), only)
        typer.echo(f"{path}:")
        width = max([len(r.name) for r in results] + [5])
        for r in results:
            typer.echo(f"  {r.name:<{width}}  {r.status:<4}  {r.seconds:6.2f}s  {r.detail}")
            if verbose or r.status == "fail":  # cases: with -v, or when they explain a failure
                for line in r.cases:
                    typer.echo(f"      {line}")
        failed |= any(r.status == "fail" or strict and r.status == "skip" for r in results)
        if strict and any(r.status == "skip" for r in results):
            typer.echo(f"  --strict: skipped is a failure: {', '.join(r.name for r in results if r.status == 'skip')}")
    raise typer.Exit(EXIT_FAIL if failed else EXIT_OK)


@app.command()
def lsp() -> None:
    """Language server over stdio for editors: diagnostics, hover, definition, completion, formatting."""
    try:
        from muh.lsp.server import main as serve
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs"):
            raise
        _err(f"error: muh lsp needs {err.name}: pip install 'muh[lsp]'")
        raise typer.Exit(EXIT_FAIL)
    serve()


_CORE = ("build", "fmt", "schema", "explain", "check", "lsp")


def _register_optional_commands(argv: list[str] | None = None) -> None:
    """Commands owned by later stages (deploy, tune) register themselves when present; a run of a
    core command (``argv`` names one) does not import them."""
    import importlib

    if argv is not None:
        words = [a for a in argv if not a.startswith("-")]
        if words and words[0] in _CORE and "--help" not in argv:
            return
    for module in ("muh.deploy.cli", "muh.tune.cli", "muh.probe_ingest.cli"):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name and module.startswith(err.name):
                continue
            raise
        mod.register(app)


def _interrupted(exc: BaseException) -> bool:
    """typer turns Ctrl-C into a silent exit 130: find the KeyboardInterrupt behind a SystemExit."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _stdout_broken(err: OSError) -> bool:
    """Whether ``err`` is standard output refusing what a command printed: an error of writing to a
    descriptor (no file name), and standard output fails a write of its own now too (where it works,
    the error came from elsewhere and is not hidden)."""
    if getattr(err, "filename", None) is not None:
        return False
    try:
        sys.stdout.write("\n")
        sys.stdout.flush()
    except OSError:
        return True
    except ValueError:  # closed
        return True
    return False


def _quit_on_stdout(err: OSError) -> None:
    """Standard output cannot take what a command prints (``muh schema > /dev/full``, a reader that went
    away): one line on stderr, exit 1, and no second complaint when the interpreter flushes at exit."""
    import errno
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    if err.errno != errno.EPIPE:  # a closed pipe (`muh schema | head`) is the reader's choice: quiet
        code = "E-STDOUT"
        _err(f"error: cannot write to standard output: {err.strerror or err} [{code}]")
    sys.exit(EXIT_FAIL)


def main() -> None:
    try:
        _register_optional_commands(sys.argv[1:])
        app()
    except SystemExit as exit_:
        if exit_.code == 130 and _interrupted(exit_):
            _err("interrupted")
        try:
            sys.stdout.flush()  # what is still buffered must reach stdout, or the exit says it did not
        except OSError as err:
            _quit_on_stdout(err)
        except ValueError:  # closed by the command (the language server's stream)
            pass
        raise
    except OSError as err:
        if not _stdout_broken(err):
            raise
        _quit_on_stdout(err)
    except MuhError as err:  # a stage raised outside a command's own handling
        report(err.diagnostics)
        sys.exit(EXIT_INPUT)
    except KeyboardInterrupt:
        _err("interrupted")
        sys.exit(130)
    except RecursionError:
        _err("error: the input nests too deeply [E-DEPTH]")
        sys.exit(EXIT_INPUT)


if __name__ == "__main__":  # pragma: no cover
    main()
