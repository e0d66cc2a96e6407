"""The `muh deploy` command (registered by muh/cli.py when this module is present)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def deploy(
        spec: Path = typer.Argument(..., metavar="SPEC", help="The .muh spec with a deploy block."),
        repo: str = typer.Option(..., "--repo", metavar="PATH", help="The git repository to deploy into (its root)."),
        apply: bool = typer.Option(False, "--apply", help="Write the files and commit them."),
        force: bool = typer.Option(
            False, "--force", help="Deploy over a dirty tree, hand edits or files muh did not write."
        ),
        skip_checks: bool = typer.Option(
            False, "--skip-checks", help="Do not run `muh check` first (says so in the plan)."
        ),
    ) -> None:
        """Plan the deployment (exit 0 no change, 2 changes, 1 error/refusal); --apply writes and commits."""
        from muh import deploy as d
        from muh.diagnostics import report

        result = d.run(spec, repo, apply=apply, force=force, checks=not skip_checks)
        for line in result.lines:
            typer.echo(line)
        if result.diagnostics:
            report(result.diagnostics)
        sys.stdout.flush()
        raise typer.Exit(result.code)

    @app.command(
        "fetch-engine",
        help="Download what the engine's deploy check reads into muh's cache and verify it (vLLM and EngineX: "
        "the base release's wheel, which muh's flag table was read from, checked by its sha256).",
    )
    def fetch_engine(
        engine: str = typer.Argument("vllm", metavar="ENGINE", help="The engine, as a deploy block names it."),
        version: Optional[str] = typer.Option(
            None, "--version", metavar="VERSION", help="The variant (default: the engine's only one)."
        ),
    ) -> None:
        from muh import engines
        from muh.diagnostics import EXIT_FAIL, EXIT_INPUT, Diagnostic, MuhError, did_you_mean, report
        from muh.engines.base import FetchFailed

        plugin = engines.get(engine)
        if plugin is None:
            hint = did_you_mean(engine, engines.names())
            report(
                [
                    Diagnostic(
                        "E-DEPLOY-ENGINE",
                        f"fetch-engine {engine}: no such engine; engines: {', '.join(engines.names())}",
                        hint=hint,
                    )
                ]
            )
            raise typer.Exit(EXIT_INPUT)
        if plugin.fetch is None:
            typer.echo(f"{engine}: nothing to fetch (its deploy check reads nothing from a download)")
            return
        if version is None:
            known = sorted(plugin.variants())
            if len(known) != 1:
                report(
                    [
                        Diagnostic(
                            "E-DEPLOY-ENGINE",
                            f"fetch-engine {engine}: which variant? {', '.join(known)}",
                            hint=f"muh fetch-engine {engine} --version {known[0] if known else 'V'}",
                        )
                    ]
                )
                raise typer.Exit(EXIT_INPUT)
            version = known[0]
        variant = plugin.variant(version)
        if variant is None:
            report(
                [
                    Diagnostic(
                        "E-DEPLOY-ENGINE",
                        f"muh has no variant {engine} {version}; variants: {', '.join(sorted(plugin.variants()))}",
                    )
                ]
            )
            raise typer.Exit(EXIT_INPUT)
        try:
            typer.echo(plugin.fetch(variant))
        except FetchFailed as err:
            report(err.diagnostics)
            raise typer.Exit(EXIT_FAIL)
        except MuhError as err:
            report(err.diagnostics)
            raise typer.Exit(EXIT_INPUT)
