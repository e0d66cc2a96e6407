"""What a platform starts for a vLLM plan (``DeployPlan.launch``): the server's argv with every flag visible,
its environment, and the steps before it — the spec's pre-steps and muh's self-test of its ops (``plan.pre``,
derive/selftest.py), the chat
template written at start — in no platform's terms (every platform renders them with muh/codegen/start.py)."""

from __future__ import annotations

from muh.derive.model import FlagGroup, InRoot, Launch, StartStep
from muh.engines.vllm.derive.plan import IMAGE_ROOT, PreStep, VllmPlan
from muh.engines.vllm.derive.run import CHAT_TEMPLATE_OUT, CHAT_TEMPLATE_SCRIPT, REASONING_INFO_OUT

ACCEPT_DIR = "run/accept"
"""Where the image build's steps (image/steps.sh) leave one marker file per conditional flag group it accepted."""
IMAGE_STEPS = "image/steps.sh"
"""The engine's build-time steps (emitted by muh/engines/vllm/codegen)."""
HEALTH = "/health"
"""vLLM's OpenAI server answers GET /health with 200 once the engine runs (vllm/entrypoints/openai/api_server.py)."""


def _step(p: PreStep) -> StartStep:
    return StartStep(
        name=p.name,
        argv=p.argv,
        required=p.required,
        on_failure=p.on_failure,
        timeout_s=p.timeout_s,
        stderr_to_stdout=p.stderr_to_stdout,
    )


def chat_template_step(plan: VllmPlan) -> StartStep | None:
    """muh's script writes the fixed template under the image's muh folder (never into the model);
    ``--chat-template`` is passed only when it did. ``-``: only the reasoning info the request hook reads."""
    if not plan.chat_template:
        return None
    script = ("python3", InRoot(path=CHAT_TEMPLATE_SCRIPT), plan.model)
    info = InRoot(path=REASONING_INFO_OUT)
    if plan.chat_template == "-":
        return StartStep(name="reasoning info", argv=(*script, "-", info))
    out = InRoot(path=CHAT_TEMPLATE_OUT)
    return StartStep(name="chat template", argv=(*script, out, info), adds=("--chat-template", out))


def launch(plan: VllmPlan, port: int, gpus: int) -> Launch:
    steps = [_step(p) for p in plan.pre]
    template = chat_template_step(plan)
    steps += [template] if template else []
    groups = tuple(FlagGroup(id=g.id, at=g.at, marker=f"{ACCEPT_DIR}/{g.id}") for g in plan.cond_flags)
    return Launch(
        argv=plan.command,
        env=plan.env,
        steps=tuple(steps),
        groups=groups,
        script=plan.run_form != "argv",
        root=IMAGE_ROOT,
        image_steps=(IMAGE_STEPS,),
        base_image=plan.base_image,
        folder=plan.folder,
        model=plan.model,
        port=port,
        health=HEALTH,
        concurrency=plan.concurrency,
        gpus=gpus,
    )
