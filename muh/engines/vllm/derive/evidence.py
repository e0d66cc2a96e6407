"""What the variant's record of real runs says about this deploy's values (worked, failed, untested)."""

from __future__ import annotations

from decimal import Decimal

from muh.derive.model import Resolved
from muh.diagnostics import did_you_mean
from muh.engines.variant import Variant
from muh.engines.vllm.derive.context import Context, flatten, plain_value, stable_where
from muh.engines.vllm.derive.flags import Setting, format_value


def _as_run_text(v) -> str:
    return str(v).lower() if isinstance(v, bool) else format_value(plain_value(v))


def _same_value(a: str, b: str) -> bool:
    try:
        return Decimal(a) == Decimal(b)
    except ArithmeticError:
        return a == b


def check_evidence(
    c: Context,
    variant: Variant,
    paths,
    given: dict[str, Setting],
    env: dict[str, str],
    serve_recorded: dict[str, Resolved],
) -> dict[str, Resolved]:
    """Each deploy value the variant has run records for: on a reported run (cited), or not — then a warning
    unless the spec's ``untested { <key> = "reason" }`` keeps it knowingly. The verdict is the value's rule:
    returned as the value's entry (``serve.*``, ``env.*``, ``api.*``), in place of the one recorded before; a
    given flag without run records gets its entry from ``serve_recorded`` (the serve block's) with a rule saying so."""
    recorded: dict[str, Resolved] = {}
    reasons = {".".join(k): v for k, v in flatten(c.d.untested)}
    for key, why in reasons.items():
        if not isinstance(why, str) or not why.strip():
            c.error(
                "E-DEPLOY-UNTESTED",
                f"untested `{key}` needs a reason (a string)",
                c.span("untested", *key.split(".")),
                hint=f'write `{key} = "why this value is kept without a reported run"`',
            )
    runs = paths.runs if paths is not None else {}
    known = (
        {f"serve.{n}" for n in given}
        | {f"env.{n}" for n in env}
        | {f"api.{n}" for n in c.d.api.accept}
        | {k for k in runs if k.startswith("serve.")}
    )
    for key in reasons:
        if key not in known:  # keeps nothing: a typo, or a value since removed
            kind = key.partition(".")[0]
            c.error(
                "E-DEPLOY-UNTESTED",
                f"untested `{key}` names no value of this deploy block",
                c.key_span("untested", *key.split(".")),
                hint=did_you_mean(key, sorted(known))
                or (
                    f"remove it, or set `{key.partition('.')[2]}` in `{kind} {{ }}`"
                    if kind in ("serve", "env")
                    else f"remove it, or add `{key.partition('.')[2]}` to `api {{ accept }}`"
                    if kind == "api"
                    else "an untested entry names a `serve.<flag>`, `env.<NAME>` or `api.<feature>` the block sets"
                ),
            )
    for name, s in given.items():
        if f"serve.{name}" not in runs and name != "model":
            always = variant.expected_flags.get("--" + name.replace("_", "-"))  # a flag every good run had
            rule = (
                f"spec; in every reported run of {variant.label}: {always}"
                if always is not None
                else f"spec; no run record for this flag in {variant.label}'s facts"
            )
            recorded[f"serve.{name}"] = serve_recorded[f"serve.{name}"].model_copy(update={"rule": rule})
    for key, ev in sorted(runs.items()):
        kind, _, name = key.partition(".")
        if kind == "serve":
            s = given.get(name)
            text = _as_run_text(s.value) if s is not None else ev.default
            where, span = (stable_where(s.span), s.span) if s is not None else (None, c.span("serve"))
        elif kind == "env":
            s, text = None, env.get(name)
            where, span = c.where("env", name), c.span("env", name)
        elif kind == "api":  # a request feature: on when `api { accept }` lists it
            s, text = None, ("on" if name in c.d.api.accept else None)
            where, span = c.where("api", "accept"), c.span("api", "accept")
        else:
            continue
        if text is None:
            if ev.opt_in:
                recorded[key] = Resolved(
                    value="off" if kind == "api" else "(not set)",
                    origin="default",
                    rule=f"not measured, opt-in: {ev.opt_in}",
                    inputs={"reported": ", ".join(sorted(ev.worked)) or "none"},
                )
            continue
        worked = next((why for v, why in ev.worked.items() if _same_value(v, text)), None)
        failed = next((why for v, why in ev.failed.items() if _same_value(v, text)), None)
        tried = ", ".join(sorted(ev.worked)) or "none"
        if worked is not None:
            verdict = f"reported run on {variant.label}: {worked}"
        elif failed is not None:
            verdict = f"NOT a reported run: failed on {variant.label}: {failed}"
        else:
            verdict = f"NOT a reported run on {variant.label} (reported to serve: {tried})" + (
                f"; {ev.note}" if ev.note else ""
            )
        reason = reasons.get(key)
        if worked is None and isinstance(reason, str) and reason.strip():
            verdict += f"; kept knowingly: {reason}"
        elif worked is None:
            c.warn(
                "W-DEPLOY-UNTESTED",
                f"`{key} = {text}` rests on no reported run of {variant.label}"
                + (f": it failed ({failed})" if failed else f" (reported to serve: {tried})"),
                span,
                hint=f'use a reported value ({tried}), or say why in `untested {{ {key} = "…" }}`',
            )
        if worked is None and ev.opt_in:
            verdict += f"; not measured, opt-in: {ev.opt_in}"
        spec_given = s is not None or kind in ("env", "api")
        recorded[key] = Resolved(
            value=plain_value(s.value) if kind == "serve" and s is not None else text,
            origin="spec" if spec_given else "default",
            rule=("spec; " if spec_given else "not set: the engine's default; ") + verdict,
            where=where,
            inputs={"reported": tried},
        )
    return recorded
