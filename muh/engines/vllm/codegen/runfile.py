"""The run file's start command: ``bash -c '<pre-steps>; exec python3 -m <server> <argv>'``.

muh does all the quoting: every word from the spec goes through ``shlex.quote`` exactly once, so a
spec string can never end a word, start a command or expand anything (tests/codegen/
test_vllm_runfile.py feeds it adversarial strings and runs the script). The script is one line of
``;``-separated parts, in this order:

1. the spec's pre-steps: tolerated ``<cmd> 2>&1 || echo '<msg>'`` or required
   ``<cmd> 2>&1 || { echo '[muh] required pre-step … failed'; exit 1; }``;
2. muh's probe summary (when the image carries the probe bundle), tolerated, ``timeout 60``;
3. one bash array per conditional flag group: filled when the image build found the flag in the
   installed engine (marker file), else a logged line saying the flags were dropped;
4. ``exec`` of the server, the arrays in the places of their flags.
"""
from __future__ import annotations

import shlex

from muh.engines.vllm.derive.plan import IMAGE_ROOT, CondFlag, PreStep, VllmPlan

ROOT_VAR = '"${MUH_ROOT:-%s}"' % IMAGE_ROOT  # the same default as image/steps.sh; tests point it elsewhere
ACCEPT_DIR = f"{ROOT_VAR}/run/accept"
PROBE_RUN = f"{ROOT_VAR}/probe/run.sh"
PROBE_RESULT = "/workspace/muh-probe.json"
PROBE_LOG = "/workspace/muh-probe.log"
PROBE_TIMEOUT_S = 60
PROBE_BUILD_DIR = "probe/build"  # under the image's muh folder: where image/steps.sh's "probe build" puts the binary
PROBE_BUILT = f"{ROOT_VAR}/{PROBE_BUILD_DIR}"
PROBE_OPT_IN = "MUH_PROBE_AT_START"


def q(word: str) -> str:
    return shlex.quote(word)


def _pre(step: PreStep) -> str:
    cmd = " ".join(q(w) for w in step.argv)
    if step.timeout_s:
        cmd = f"timeout {int(step.timeout_s)} {cmd}"
    if step.stderr_to_stdout:
        cmd += " 2>&1"
    if step.required:
        return f"{cmd} || {{ echo {q(f'[muh] required pre-step {step.name} failed: not starting the server')}; exit 1; }}"
    return f"{cmd} || echo {q(step.on_failure if step.on_failure is not None else '')}"


# One line from the probe's JSON (schema: muh/codegen/probe/result.py); an error prints its last line instead.
PROBE_SUMMARY = ("import json, sys; p = sys.argv[1]; h = json.load(open(p)).get('hardware', {}); "
                 "v = lambda k: (h.get(k) or {}).get('value'); "
                 "print('device=%s cc=%s sm=%s (%s)' % (v('device_name'), v('compute_capability'), v('sm_count_kernel'), p))")


def probe_step() -> str:
    """Opt-in (``MUH_PROBE_AT_START=1``), tolerated: the probe the image build compiled runs (never a compiler
    at start), writes its JSON under /workspace, and one summary line reaches the log. Off: one line."""
    summary = f"$(python3 -c {q(PROBE_SUMMARY)} {PROBE_RESULT} 2>&1 | tail -n 1)"
    return (f"if [ \"${{{PROBE_OPT_IN}:-0}}\" != 1 ]; then echo '[muh] probe off (set {PROBE_OPT_IN}=1 to run the "
            f"prebuilt probe at start)'; "
            f"elif [ -f {PROBE_RUN} ] && [ -x {PROBE_BUILT}/probe ]; then timeout {PROBE_TIMEOUT_S} bash {PROBE_RUN} "
            f"{PROBE_RESULT} --prebuilt {PROBE_BUILT} > {PROBE_LOG} 2>&1 "
            f"&& echo \"[muh] probe: {summary}\" "
            f"|| echo \"[muh] probe skipped: exit $? within {PROBE_TIMEOUT_S} s (log {PROBE_LOG})\"; "
            f"else echo '[muh] probe skipped: the image build did not build it'; fi")


CHAT_TEMPLATE_ARRAY = "muh_chat_template"


def chat_template_step(plan: VllmPlan) -> str:
    """At start: muh's script writes the fixed template under the image's muh folder (never into the model);
    ``--chat-template`` is passed only when it did (its one line says what happened either way)."""
    from muh.engines.vllm.derive.run import CHAT_TEMPLATE_OUT, CHAT_TEMPLATE_SCRIPT, REASONING_INFO_OUT

    script = f"python3 {ROOT_VAR}/{CHAT_TEMPLATE_SCRIPT} {q(plan.model)}"
    info = f"{ROOT_VAR}/{REASONING_INFO_OUT}"
    if plan.chat_template == "-":  # only what the request hook needs to know about the template
        return f"{script} - {info} 2>&1 || true"
    out = f"{ROOT_VAR}/{CHAT_TEMPLATE_OUT}"
    return (f"{CHAT_TEMPLATE_ARRAY}=(); if {script} {out} {info} 2>&1; "
            f"then {CHAT_TEMPLATE_ARRAY}=(--chat-template {out}); fi")


def array_name(g: CondFlag) -> str:
    return "muh_" + "".join(ch if ch.isalnum() else "_" for ch in g.id)


def _cond(g: CondFlag) -> str:
    name = array_name(g)
    words = " ".join(q(w) for w in g.argv)
    dropped = q(f"[muh] dropped {' '.join(g.argv)}: the image build did not find it in this engine ({g.id})")
    return f"{name}=(); if [ -e {ACCEPT_DIR}/{g.id} ]; then {name}=({words}); else echo {dropped}; fi"


def server_words(plan: VllmPlan) -> list[str]:
    """The exec'd argv, quoted, with each conditional group's array in place of its first word."""
    first = {g.at[0]: g for g in plan.cond_flags}
    inside = {i for g in plan.cond_flags for i in g.at}
    out: list[str] = []
    for i, a in enumerate(plan.command):
        if i in first:
            out.append(f'"${{{array_name(first[i])}[@]}}"')
        elif i not in inside:
            out.append(q(a))
    return out


def script(plan: VllmPlan, probe: bool) -> str:
    parts = [_pre(s) for s in plan.pre]
    if probe:
        parts.append(probe_step())
    if plan.chat_template:
        parts.append(chat_template_step(plan))
    parts += [_cond(g) for g in plan.cond_flags]
    words = server_words(plan)
    if plan.chat_template and plan.chat_template != "-":
        words.append(f'"${{{CHAT_TEMPLATE_ARRAY}[@]}}"')
    parts.append("exec " + " ".join(words))
    return "; ".join(parts)


def command(plan: VllmPlan, probe: bool) -> list[str]:
    """The run file's ``command`` list."""
    if plan.run_form == "argv":
        return list(plan.command)
    return ["bash", "-c", script(plan, probe)]
