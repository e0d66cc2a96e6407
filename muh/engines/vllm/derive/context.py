"""What every step of a deploy block's resolution shares: the block with its spans, the diagnostics
found so far, and the checks of text that reaches YAML, shell, Dockerfile or Python. The tuned values
with their provenance are not shared: each step returns its entries, and build_plan.merge_tuned makes
the plan's ``tuned`` of them."""

from __future__ import annotations

import re
from decimal import Decimal

from muh.derive.model import Resolved
from muh.diagnostics import Diagnostic, Severity, Span
from muh.engines.vllm.derive.engine import EngineInfo
from muh.engines.vllm.derive.flags import Setting
from muh.schema.models import Deploy, Spec, text_problem

MAX_VALUE_LEN = 4096  # longer env/flag values are refused: almost surely a pasted file, and risky in YAML/shell
IMAGE_RE = re.compile(
    r"^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$"
)
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
IMPORT_PATH_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")
MODULE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class Context:
    def __init__(self, spec: Spec, deploy: Deploy, engine: EngineInfo):
        self.spec, self.d, self.engine = spec, deploy, engine
        self.base = ("deploys", deploy.name)
        self.diags: list[Diagnostic] = []

    def span(self, *path) -> Span | None:
        return self.spec.span_of(self.base + tuple(path))

    def key_span(self, *path) -> Span | None:
        return self.spec.span_of(self.base + tuple(path), key=True)

    def where(self, *path) -> str | None:
        return stable_where(self.span(*path))

    def error(self, code: str, msg: str, span: Span | None, hint: str | None = None, notes: tuple = ()) -> None:
        self.diags.append(Diagnostic(code, msg, span, hint, notes=notes))

    def warn(self, code: str, msg: str, span: Span | None, hint: str | None = None) -> None:
        self.diags.append(Diagnostic(code, msg, span, hint, Severity.warning))

    def from_spec(self, value, *path) -> Resolved:
        return Resolved(value=plain_value(value), origin="spec", rule="spec", where=self.where(*path))


def stable_where(span: Span | None) -> str | None:
    """``specs/x.muh:12:5`` however the spec was named on the command line (outputs must not depend on cwd)."""
    return span.stable() if span is not None else None


def plain_value(v):
    if isinstance(v, Decimal):
        return int(v) if v.adjusted() < 30 and v == v.to_integral_value() else float(v)
    return v


def value_problem(value: str) -> str | None:
    """Why a string from the spec must not reach YAML/shell/Dockerfile/Python, or None."""
    if len(value) > MAX_VALUE_LEN:
        return f"is {len(value)} characters long (limit {MAX_VALUE_LEN})"
    return text_problem(value)


def flatten(tree: dict, prefix: tuple = ()) -> list[tuple[tuple, object]]:
    out = []
    for k, v in tree.items():
        if isinstance(v, dict):
            out += flatten(v, prefix + (k,))
        else:
            out.append((prefix + (k,), v))
    return out


def int_of(s: Setting | None, default: int) -> int:
    if s is None or isinstance(s.value, bool) or not isinstance(s.value, (int, Decimal)):
        return default
    return int(s.value)
