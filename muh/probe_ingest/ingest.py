"""`muh probe --ingest RESULT.json SPEC`: compare measured facts with the spec's hardware block.

Agreement → ``@measured(device, date, toolkit, method, samples)`` after the value; contradiction →
an error at the value with both numbers (exit 1, nothing written); ``--apply`` writes the measured
value instead (the text of the value only, like ``muh tune --apply``; comments kept, `fmt`-clean
files stay clean) and adds facts the spec does not state yet. The new text must load and derive
before it atomically replaces the file, so the spec is never half-written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Callable, Optional

from pydantic import ValidationError

from muh.codegen.probe.result import SCHEMA, SCHEMA_VERSION, Result
from muh.diagnostics import Diagnostic, MuhError, Severity
from muh.grammar import ast
from muh.grammar.edit import SpecText
from muh.grammar.edit import string_literal as _q
from muh.grammar.parser import parse
from muh.schema.models import Hardware

MAX_RESULT_BYTES = 4 << 20


@dataclass(frozen=True)
class Measurement:
    value: object  # in the spec model's unit (bytes, B/s, ns, lanes …)
    text: str  # as written into the spec (with its unit)
    method: str
    samples: int
    shown: str  # for messages


@dataclass(frozen=True)
class Rule:
    """How one hardware field of the spec is checked against the probe."""

    field: str
    measure: Callable[[Result], Optional[Measurement]]
    tolerance: float = 0.0  # relative; 0 = must be equal
    add: bool = False  # --apply adds it when the spec does not state it


def _int(name: str, unit_text: Callable[[int], str] = str):
    def measure(r: Result) -> Optional[Measurement]:
        f = getattr(r.hardware, name)
        if f.value is None:
            return None
        return Measurement(f.value, unit_text(f.value), f.method, f.samples, unit_text(f.value))

    return measure


def _bytes_text(n: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def _device_name(r: Result) -> Optional[Measurement]:
    f = r.hardware.device_name
    if not f.value:
        return None
    method = f.method
    nv = r.hardware.device_name_nvml.value
    method += f"; NVML: {nv!r}" if nv else f"; NVML: none ({r.hardware.device_name_nvml.method})"
    return Measurement(f.value, _q(f.value), method, 1, repr(f.value))


def _sm_count(r: Result) -> Optional[Measurement]:
    h = r.hardware
    if h.sm_count_attribute.value is None:
        return None
    others = []
    if h.sm_count_kernel.value is not None:
        others.append(f"distinct %smid {h.sm_count_kernel.value}")
    if h.sm_count_residency.value is not None:
        others.append(f"residency {h.sm_count_residency.value}")
    v = h.sm_count_attribute.value
    return Measurement(
        v, str(v), "; ".join([h.sm_count_attribute.method] + others), h.sm_count_kernel.samples or 1, str(v)
    )


def _warp(r: Result) -> Optional[Measurement]:
    h = r.hardware
    v = h.warp_size_attribute.value
    if v is None:
        return None
    wl = h.warp_layer
    method = (
        f"{h.warp_size_attribute.method}; warpSize in a kernel {h.warp_size_kernel.value}; "
        f"{wl.lanes_exchanging.value} of {wl.logical} lanes exchange through muh's {wl.mode} warp layer"
    )
    return Measurement(v, str(v), method, wl.lanes_exchanging.samples, str(v))


def _bandwidth(r: Result) -> Optional[Measurement]:
    b = r.hardware.bandwidth_copy
    gbps = round(b.plateau_gbps, 1)
    text = f"{gbps:g} GB/s"
    sizes = f"{len(b.sweep)} sizes {_bytes_text(b.sweep[0].bytes)}…{_bytes_text(b.sweep[-1].bytes)}"
    return Measurement(
        int(Decimal(str(gbps)) * 10**9),
        text,
        f"copy-kernel plateau, sweep of {sizes} (method in the JSON)",
        sum(p.samples for p in b.sweep),
        text,
    )


def _latency(r: Result) -> Optional[Measurement]:
    f = r.hardware.launch_latency_us
    if f.value is None:
        return None
    us = round(f.value, 1)
    return Measurement(Decimal(str(us)) * 1000, f"{us:g} us", f.method, f.samples, f"{us:g} us")


RULES: tuple[Rule, ...] = (
    Rule("device_name", _device_name, add=True),
    Rule("compute_capability", _int("compute_capability")),
    Rule("sm_count", _sm_count),
    Rule("warp_size", _warp),
    Rule("smem_per_block", _int("smem_per_block", _bytes_text)),
    Rule("smem_per_block_optin", _int("smem_per_block_optin", _bytes_text), add=True),
    Rule("max_threads_per_block", _int("max_threads_per_block")),
    Rule("l2_cache", _int("l2_cache", _bytes_text), add=True),
    Rule("mem_bandwidth", _bandwidth, tolerance=0.05, add=True),
    Rule("launch_latency", _latency, tolerance=0.25, add=True),
)
"""Every spec fact the probe measures. Tolerances: bandwidth ±5 % (the anchors' own run-to-run spread is
~1 %), launch latency ±25 % (host-side timing); the rest must be equal."""


@dataclass
class Outcome:
    field: str
    status: str  # agree | contradict | add | skip
    spec_value: object = None
    measured: Optional[Measurement] = None
    why: str = ""
    spec_shown: str = ""


@dataclass
class Ingest:
    spec_file: str
    hardware: str
    device: str
    outcomes: list[Outcome] = field(default_factory=list)
    notes: list[Diagnostic] = field(default_factory=list)
    new_text: Optional[str] = None


def hardware_only(text: str, file: str):
    """The spec's hardware blocks alone, as a ``Spec`` with spans, when the whole spec does not load
    (e.g. threads that are not a multiple of a wrong ``warp_size``): the measured facts decide first.
    Raises MuhError when a hardware block itself does not validate."""
    from muh.schema.lower import lower
    from muh.schema.models import Spec

    low = lower(parse(text, file))
    hws = {}
    for name, raw in low.raw["hardware"].items():
        try:
            Hardware.model_validate(raw)
        except ValidationError:
            raise MuhError(
                [
                    Diagnostic(
                        "E-PROBE",
                        f"`hardware {name}` does not validate; fix it first (muh build {file})",
                        low.key_spans.get(("hardware", name)),
                    )
                ]
            ) from None
        hws[name] = raw
    spec = Spec.model_validate({"hardware": hws, "file": file})
    spec._spans.update(low.key_spans)
    spec._spans.update(low.value_spans)
    spec._key_spans.update(low.key_spans)
    return spec


def read_result(path: str | Path) -> Result:
    """The result document, validated; a clear E-PROBE-RESULT for anything else."""
    path = Path(path)

    def bad(msg: str, hint: str | None = None) -> MuhError:
        return MuhError([Diagnostic("E-PROBE-RESULT", f"{path}: {msg}", None, hint=hint)])

    try:
        from muh.grammar.parser import read_bounded

        data = read_bounded(path, MAX_RESULT_BYTES)
        if data is None:
            raise bad(f"more than {MAX_RESULT_BYTES} bytes is not a probe result (limit {MAX_RESULT_BYTES})")
        raw = data.decode("utf-8")
    except FileNotFoundError:
        raise bad("no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise bad(f"cannot read it: {getattr(e, 'strerror', None) or e}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise bad(
            f"not JSON ({e.msg} at line {e.lineno} column {e.colno}) — truncated or not written by probe/run.sh",
            hint="run the bundle again; run.sh writes the file only when the probe finished",
        ) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise bad(f'not a muh probe result (no "schema": "{SCHEMA}")')
    if data.get("schema_version") != SCHEMA_VERSION:
        raise bad(
            f"schema version {data.get('schema_version')!r}; this muh reads version {SCHEMA_VERSION}",
            hint="regenerate the bundle with this muh (`muh probe SPEC -o DIR`) and run it again",
        )
    try:
        return Result.model_validate(data)
    except ValidationError as e:
        first = e.errors()[:4]
        msgs = "; ".join(
            f"{'.'.join(map(str, x['loc'])) or '(document)'}: {x['msg'].removeprefix('Value error, ')}" for x in first
        )
        more = f" (+{len(e.errors()) - 4} more)" if len(e.errors()) > 4 else ""
        raise bad(f"invalid probe result: {msgs}{more}") from None


def _spec_value(hw: Hardware, name: str):
    return getattr(hw, name) if name in hw.model_fields_set else None


def _agrees(rule: Rule, spec_value, m: Measurement) -> bool:
    if rule.tolerance:
        s, v = float(spec_value), float(m.value)
        return s > 0 and abs(v - s) <= rule.tolerance * s
    if isinstance(spec_value, Decimal) or isinstance(m.value, Decimal):
        return Decimal(str(spec_value)) == Decimal(str(m.value))
    return spec_value == m.value


def _shown_spec(rule: Rule, v) -> str:
    if rule.field in ("smem_per_block", "smem_per_block_optin", "l2_cache"):
        return _bytes_text(int(v))
    if rule.field == "mem_bandwidth":
        return f"{Decimal(v) / 10**9:g} GB/s"
    if rule.field == "launch_latency":
        return f"{Decimal(v) / 1000:g} us"
    return repr(v) if isinstance(v, str) else str(v)


def annotation(r: Result, m: Measurement) -> str:
    return (
        f"@measured(device = {_q(r.hardware.device_name.value)}, date = {_q(r.date[:10])}, "
        f"toolkit = {_q(r.toolkit.text())}, method = {_q('probe: ' + m.method)}, samples = {int(m.samples)})"
    )


def ingest(
    result: Result,
    result_file: str,
    text: str,
    file: str,
    spec,
    *,
    apply: bool = False,
    accept_device_name: bool = False,
) -> Ingest:
    """Compare; raise MuhError for a refused document or contradictions (unless ``apply``)."""
    from muh.codegen.probe import hardware_of

    hw = hardware_of(spec)
    device = result.hardware.device_name.value or "?"
    refuse = _refusals(result, result_file, file, spec, hw, device, accept_device_name)
    if refuse:
        raise MuhError(refuse)
    out = Ingest(file, hw.name, device)
    out.notes.extend(_probe_notes(result, spec, hw, device))
    out.outcomes, errors = _compare(result, result_file, file, spec, hw, device)
    hard = [d for d in out.notes if d.is_error]
    if hard or (errors and not apply):
        raise MuhError(hard + errors + [d for d in out.notes if not d.is_error])
    out.new_text = rewrite(text, file, hw.name, result, out.outcomes, apply)
    return out


def _refusals(
    result: Result, result_file: str, file: str, spec, hw: Hardware, device: str, accept_device_name: bool
) -> list[Diagnostic]:
    """Why the result is not this card's facts: an emulation run, another hardware block's bundle, or
    another device by name (unless the spec's name was a guess: ``accept_device_name``)."""
    o = result.origin
    hw_span = spec.span_of(("hardware", hw.name), key=True)
    if o.emulated_warp:
        return [
            Diagnostic(
                "E-PROBE-FOREIGN",
                f"{result_file} is a warp-{o.emulated_warp} emulation run on {device}: "
                "it shows the warp layer's logic, not the facts of a card",
                hw_span,
                hint="run the bundle built without --emulate-warp on the card itself",
            )
        ]
    if o.hardware != hw.name:
        return [
            Diagnostic(
                "E-PROBE-FOREIGN",
                f"{result_file} was measured with the bundle of `hardware {o.hardware}` "
                f"({o.spec}); this spec describes `hardware {hw.name}`",
                hw_span,
                hint=f"generate the bundle from this spec: muh probe {file} -o DIR",
            )
        ]
    if hw.device_name and result.hardware.device_name.value != hw.device_name and not accept_device_name:
        return [
            Diagnostic(
                "E-PROBE-FOREIGN",
                f"{result_file} comes from another device: it reports {device!r}, the spec's device_name "
                f"is {hw.device_name!r}",
                spec.span_of(("hardware", hw.name, "device_name")),
                hint="measure on the card this spec describes; if the spec's name was never measured and this IS that "
                "card, "
                "re-run with --accept-device-name (the name is then a contradiction to fix with --apply)",
            )
        ]
    return []


def _probe_notes(result: Result, spec, hw: Hardware, device: str) -> list[Diagnostic]:
    """What the probe says about itself: a wrong warp layer (an error), and its own measurements
    disagreeing with the device attributes or __syncwarp not ordering shared memory (warnings)."""
    notes = []
    hw_span = spec.span_of(("hardware", hw.name), key=True)
    wl = result.hardware.warp_layer
    layer_bad = [k for k in ("shuffle_ok", "reduce_ok") if getattr(wl, k).value is False]
    if wl.lanes_exchanging.value != wl.logical or layer_bad:
        notes.append(
            Diagnostic(
                "E-PROBE-WARP",
                f"muh's warp layer for warp_size = {wl.logical} ({wl.mode}) is wrong on {device}: "
                f"{wl.lanes_exchanging.value} of {wl.logical} lanes exchange"
                + (f"; failed: {', '.join(layer_bad)}" if layer_bad else ""),
                spec.span_of(("hardware", hw.name, "warp_size")),
                hint=f"the card's warp is {result.hardware.warp_size_attribute.value} lanes (attribute), "
                f"{result.hardware.warp_size_kernel.value} (warpSize)",
            )
        )
    h = result.hardware
    for what, a, b in (
        ("warpSize in a kernel", h.warp_size_kernel.value, h.warp_size_attribute.value),
        ("distinct %smid", h.sm_count_kernel.value, h.sm_count_attribute.value),
        ("SMs by residency", h.sm_count_residency.value, h.sm_count_attribute.value),
        ("largest dynamic shared memory without opt-in", h.smem_dynamic_max_default.value, h.smem_per_block.value),
    ):
        if a is not None and b is not None and a != b:
            notes.append(
                Diagnostic(
                    "W-PROBE",
                    f"the probe's {what} ({a}) differs from the attribute ({b})",
                    hw_span,
                    severity=Severity.warning,
                )
            )
    if (
        wl.mode == "native"
        and not layer_bad
        and wl.lanes_exchanging.value == wl.logical
        and wl.syncwarp_orders_smem.value is False
    ):
        notes.append(
            Diagnostic(
                "W-PROBE",
                f"__syncwarp does not order shared memory on {device} "
                f"({wl.syncwarp_orders_smem.note}); muh's warp collectives use shuffles only",
                hw_span,
                severity=Severity.warning,
            )
        )
    return notes


def _compare(
    result: Result, result_file: str, file: str, spec, hw: Hardware, device: str
) -> tuple[list[Outcome], list[Diagnostic]]:
    """(each rule's outcome, an E-PROBE-CONTRADICTS at the spec's value for each contradiction)."""
    outcomes, errors = [], []
    for rule in RULES:
        m = rule.measure(result)
        sv = _spec_value(hw, rule.field)
        if m is None:
            outcomes.append(Outcome(rule.field, "skip", sv, None, "not measured"))
            continue
        if sv is None:
            outcomes.append(
                Outcome(
                    rule.field,
                    "add" if rule.add else "skip",
                    None,
                    m,
                    "not in the spec" + ("" if rule.add else " (informational)"),
                )
            )
            continue
        if _agrees(rule, sv, m):
            outcomes.append(Outcome(rule.field, "agree", sv, m))
            continue
        outcomes.append(Outcome(rule.field, "contradict", sv, m, spec_shown=_shown_spec(rule, sv)))
        tol = f" (tolerance ±{rule.tolerance:.0%})" if rule.tolerance else ""
        errors.append(
            Diagnostic(
                "E-PROBE-CONTRADICTS",
                f"{rule.field} = {_shown_spec(rule, sv)} in the spec, but the probe measured {m.shown} "
                f"on {device}{tol} [{m.method}]",
                spec.span_of(("hardware", hw.name, rule.field)),
                hint=f"muh probe --ingest {result_file} {file} --apply writes the measured value",
            )
        )
    return outcomes, errors


def rewrite(text: str, file: str, hw_name: str, result: Result, outcomes: list[Outcome], apply: bool) -> str:
    """The spec text with provenance on agreeing facts and, with ``apply``, measured values written."""
    doc = SpecText(text, file)
    block = next(
        (m for m in doc.module.members if isinstance(m, ast.Block) and m.kind == "hardware" and m.label == hw_name),
        None,
    )
    if block is None:  # pragma: no cover - the spec loaded with this block
        raise MuhError([Diagnostic("E-PROBE", f"no `hardware {hw_name}` block in {file}", None)])
    assigns = {a.name: a for a in block.assigns()}
    added = []
    for o in outcomes:
        if o.measured is None or o.status == "skip":
            continue
        if o.status in ("contradict", "add") and not apply:
            continue
        note = annotation(result, o.measured)
        a = assigns.get(o.field)
        if a is None:
            added.append(f"{o.field} = {o.measured.text} {note}")
            continue
        start, value_end, end = doc.value_span(a)
        value = text[start:value_end] if o.status == "agree" else o.measured.text
        doc.replace(start, end, f"{value} {note}")
    if added:
        last = list(block.assigns())[-1]
        indent = doc.indent_of(last.key_span.line)
        pos = doc.after_line_of(last.value.span.end_line, last.value.span.end_col)
        doc.insert(pos, "".join(f"{indent}{line}\n" for line in added))
    return doc.result()


def write_spec(path: Path, text: str, shown: str) -> None:
    """Check the new text loads and derives, then replace the file atomically."""
    from muh.derive import derive
    from muh.schema import load

    derive(load(text, shown))
    from muh.output import replace_file

    try:
        replace_file(path, text)  # O_EXCL|O_NOFOLLOW temporary, mode kept, a link's target rewritten
    except OSError as e:
        raise MuhError([Diagnostic("E-IO", f"cannot write {path}: {e.strerror or e}", None)]) from None
