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

    @app.command("fetch-engine")
    def fetch_engine(
        version: str = typer.Option("0.6.3.post1", "--version", metavar="VERSION", help="The pinned vLLM release."),
    ) -> None:
        """Download the pinned vLLM wheel into muh's cache (what `muh check`'s deploy check reads the edits
        against) and check that muh's flag table was read from exactly that wheel."""
        import hashlib

        from muh.engines.vllm.wheel import cache_dir, fetch
        from muh.engines.vllm.derive.engine import available_versions, load_engine
        from muh.diagnostics import EXIT_FAIL, EXIT_INPUT, _err

        if version not in available_versions():
            _err(f"error: --version {version}: muh has no flag table for vllm {version}; tables: "
                 f"{', '.join(available_versions())} [E-DEPLOY-ENGINE]")
            raise typer.Exit(EXIT_INPUT)
        try:
            wheel = fetch(version)
        except Exception as err:  # noqa: BLE001 - pip's failure is a message, never a traceback
            detail = (getattr(err, "stderr", b"") or b"").decode(errors="replace").strip().splitlines()[-1:] or [str(err)]
            _err(f"error: cannot download vllm {version} into {cache_dir()}: {detail[0]} [E-IO]\n"
                 f"  hint: pip needs the package index; or put the wheel into {cache_dir()} yourself")
            raise typer.Exit(EXIT_FAIL)
        table = load_engine(version)
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if digest != table.wheel_sha256:
            _err(f"error: {wheel} has sha256 {digest[:12]}…, muh's flag table was read from {table.wheel} "
                 f"({table.wheel_sha256[:12]}…) [E-DEPLOY-ENGINE]")
            raise typer.Exit(EXIT_FAIL)
        typer.echo(f"{wheel}: the flag table's wheel ({len(table.options)} options of vllm {version})")
