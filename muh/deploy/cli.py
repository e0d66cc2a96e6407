"""The `muh deploy` command (registered by muh/cli.py when this module is present)."""
from __future__ import annotations

import sys
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def deploy(
        spec: Path = typer.Argument(..., metavar="SPEC", help="The .muh spec with a deploy block."),
        repo: str = typer.Option(..., "--repo", metavar="PATH", help="The git repository to deploy into (its root)."),
        apply: bool = typer.Option(False, "--apply", help="Write the files and commit them."),
        force: bool = typer.Option(False, "--force", help="Deploy over a dirty tree, hand edits or files muh did not write."),
        skip_checks: bool = typer.Option(False, "--skip-checks", help="Do not run `muh check` first (says so in the plan)."),
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
