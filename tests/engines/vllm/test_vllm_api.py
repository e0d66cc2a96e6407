"""The functional gate's request features, against the stock wheel's own request model.

``vllm/entrypoints/openai/protocol.py`` of the pinned wheel is executed as it is; only the modules it
imports for other purposes (torch, openai's TypedDicts, vLLM's sampling/pooling/utils) are replaced
by minimal stand-ins, so ``ChatCompletionRequest`` keeps its real fields, ``extra="forbid"`` and
validators. The generated ``compat.py`` (muh's plugin hook) then runs on request bodies the
platform's replay sent (the competition team's notes, https://github.com/dylanyunlon/project_6).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import types
from argparse import Namespace
from pathlib import Path
from typing import Any, Dict

import pytest
from pydantic import ValidationError

from muh.pipeline import load_file, render

ROOT = Path(__file__).resolve().parents[3]


def _stub(name: str, **attrs) -> types.ModuleType:
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


@pytest.fixture(scope="module")
def stock_request(stock_protocol):
    return stock_protocol.ChatCompletionRequest


@pytest.fixture(scope="module")
def stock_protocol(vllm_wheel):
    from muh.engines.vllm.wheel import read

    source = read(vllm_wheel, "vllm/entrypoints/openai/protocol.py")
    any_cls = type("Stub", (), {})
    stubs = {
        "torch": _stub(
            "torch",
            iinfo=lambda _t: Namespace(min=-9223372036854775808, max=9223372036854775807),
            long="long",
            Tensor=any_cls,
        ),
        "openai": _stub("openai"),
        "openai.types": _stub("openai.types"),
        "openai.types.chat": _stub("openai.types.chat", ChatCompletionContentPartParam=Dict[str, Any]),
        "vllm": _stub("vllm"),
        "vllm.entrypoints": _stub("vllm.entrypoints"),
        "vllm.entrypoints.chat_utils": _stub("vllm.entrypoints.chat_utils", ChatCompletionMessageParam=Dict[str, Any]),
        "vllm.pooling_params": _stub("vllm.pooling_params", PoolingParams=any_cls),
        "vllm.sampling_params": _stub(
            "vllm.sampling_params",
            BeamSearchParams=any_cls,
            GuidedDecodingParams=any_cls,
            RequestOutputKind=any_cls,
            SamplingParams=any_cls,
        ),
        "vllm.sequence": _stub("vllm.sequence", Logprob=Any),
        "vllm.utils": _stub("vllm.utils", random_uuid=lambda: "0"),
    }
    saved = {k: sys.modules.get(k) for k in stubs}
    sys.modules.update(stubs)
    try:
        mod = types.ModuleType("muh_test_stock_protocol")  # pydantic resolves annotations through sys.modules
        sys.modules[mod.__name__] = mod
        exec(compile(source, "vllm/entrypoints/openai/protocol.py", "exec"), mod.__dict__)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return mod


@pytest.fixture(scope="module")
def compat(tmp_path_factory):
    out = tmp_path_factory.mktemp("api")
    files = {f.path: f.content for f in render(load_file(ROOT / "specs" / "baseline.muh"))}
    p = out / "compat.py"
    p.write_text(files["vllm/plugin/muh_vllm_plugin/compat.py"])
    (out / "compat.json").write_text(files["vllm/plugin/muh_vllm_plugin/compat.json"])  # its data, beside it
    spec = importlib.util.spec_from_file_location("muh_compat_under_test", p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BASE = {"model": "llm", "messages": [{"role": "user", "content": "hi"}]}
TOOL_HISTORY = {
    "model": "llm",
    "messages": [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ],
}


@pytest.mark.vllm
@pytest.mark.parametrize("extra", [{"max_completion_tokens": 64}, {"reasoning_effort": "low"}])
def test_stock_rejects_the_replayed_fields_and_the_hook_makes_them_valid(stock_request, compat, extra):
    body = dict(BASE, **extra)
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        stock_request.model_validate(json.loads(json.dumps(body)))  # stock: a 400 for every such request
    new, err = compat.rewrite(json.loads(json.dumps(body)))
    assert err is None
    req = stock_request.model_validate(new)
    if "max_completion_tokens" in extra:
        assert req.max_tokens == 64


@pytest.mark.vllm
def test_max_tokens_wins_over_max_completion_tokens(stock_request, compat):
    new, _ = compat.rewrite(dict(BASE, max_tokens=10, max_completion_tokens=64))
    assert stock_request.model_validate(new).max_tokens == 10


@pytest.mark.vllm
def test_tool_call_history_with_null_content_keeps_its_message(stock_request, compat):
    new, err = compat.rewrite(json.loads(json.dumps(TOOL_HISTORY)))
    assert err is None and new["messages"][1]["content"] == "" and new["messages"][1]["tool_calls"]
    assert len(stock_request.model_validate(new).messages) == 3


@pytest.mark.vllm
@pytest.mark.parametrize("n,ok", [(1, True), (2, True), (3, False), (64, False)])
def test_n_above_max_num_seqs_is_a_400_never_a_dead_engine(stock_request, compat, n, ok):
    assert compat.MAX_N == 2  # baseline's max_num_seqs
    new, err = compat.rewrite(dict(BASE, n=n))
    if ok:
        assert err is None and stock_request.model_validate(new).n == n
    else:
        assert new is None and f"n={n} exceeds this server's limit of 2" in err


def _asgi(compat, body: bytes, path="/v1/chat/completions", stock_request=None):
    """Run the middleware in front of an app that validates like vLLM's route (ValidationError -> 400)."""
    seen = {}

    async def app(scope, receive, send):
        msg = await receive()
        seen["body"] = msg["body"]
        seen["headers"] = dict(scope["headers"])
        status = 200
        if stock_request is not None:
            try:
                stock_request.model_validate(json.loads(msg["body"]))
            except ValidationError:
                status = 400
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    sent = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(m):
        sent.append(m)

    scope = {"type": "http", "method": "POST", "path": path, "headers": [(b"content-length", str(len(body)).encode())]}
    asyncio.run(compat.RequestCompat(app)(scope, receive, send))
    return sent[0]["status"], seen, sent


@pytest.mark.vllm
def test_the_middleware_end_to_end(stock_request, compat):
    status, seen, _ = _asgi(
        compat,
        json.dumps(dict(BASE, max_completion_tokens=5, reasoning_effort="high")).encode(),
        stock_request=stock_request,
    )
    assert status == 200 and json.loads(seen["body"])["max_tokens"] == 5
    assert seen["headers"][b"content-length"] == str(len(seen["body"])).encode()
    status, seen, sent = _asgi(compat, json.dumps(dict(BASE, n=3)).encode(), stock_request=stock_request)
    assert status == 400 and not seen and json.loads(sent[1]["body"])["code"] == 400
    status, seen, _ = _asgi(compat, b"not json", stock_request=None)
    assert status == 200 and seen["body"] == b"not json"  # passed on untouched
    status, seen, _ = _asgi(compat, json.dumps(dict(BASE, max_completion_tokens=5)).encode(), path="/v1/models")
    assert json.loads(seen["body"])["max_completion_tokens"] == 5  # other routes are not touched


def test_the_plugin_hooks_build_app_only_in_the_api_server(tmp_path):
    import subprocess
    import textwrap

    files = {f.path: f.content for f in render(load_file(ROOT / "specs" / "baseline.muh"))}
    for path, text in files.items():
        if path.startswith("vllm/plugin/muh_vllm_plugin/"):
            (tmp_path / "muh_vllm_plugin").mkdir(exist_ok=True)
            (tmp_path / "muh_vllm_plugin" / Path(path).name).write_text(text)
    (tmp_path / "vllm" / "entrypoints" / "openai").mkdir(parents=True)
    (tmp_path / "vllm" / "__init__.py").write_text("__version__ = '0.6.3.post1'\n")
    (tmp_path / "vllm" / "entrypoints" / "__init__.py").write_text("")
    (tmp_path / "vllm" / "entrypoints" / "openai" / "__init__.py").write_text("")
    (tmp_path / "vllm" / "entrypoints" / "openai" / "api_server.py").write_text(
        "class App:\n    def __init__(self):\n        self.mw = []\n"
        "    def add_middleware(self, m):\n        self.mw.append(m)\n"
        "def build_app(args):\n    return App()\n"
    )
    code = textwrap.dedent("""
        import sys
        if sys.argv[1] == "api":
            import vllm.entrypoints.openai.api_server as api
        import muh_vllm_plugin
        applied = muh_vllm_plugin.register()
        api = sys.modules.get("vllm.entrypoints.openai.api_server")
        print("api" in applied, api is not None and [m.__name__ for m in api.build_app(None).mw])
    """)

    def run(which):
        return subprocess.run(
            [sys.executable, "-S", "-c", code, which],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(tmp_path)},
            timeout=60,
        )

    api = run("api")
    assert api.returncode == 0, api.stderr
    assert api.stdout.split() == ["True", "['RequestCompat']"]
    worker = run("worker")  # engine/worker processes: the API module is not imported, nothing is hooked
    assert worker.returncode == 0 and worker.stdout.split() == ["False", "False"], worker.stderr
    # the real server: `python -m vllm.entrypoints.openai.api_server` (the module is __main__); plugins load
    # inside run_server (AsyncEngineArgs.__post_init__), then run_server looks build_app up
    server = tmp_path / "vllm" / "entrypoints" / "openai" / "api_server.py"
    server.write_text(
        server.read_text() + "\nif __name__ == '__main__':\n    import muh_vllm_plugin\n"
        "    muh_vllm_plugin.register()\n    print([m.__name__ for m in build_app(None).mw])\n"
    )
    main = subprocess.run(
        [sys.executable, "-S", "-m", "vllm.entrypoints.openai.api_server"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path)},
        timeout=60,
    )
    assert main.returncode == 0 and main.stdout.strip() == "['RequestCompat']", main.stderr


def test_the_plugin_does_nothing_in_the_model_registry_subprocess(tmp_path):
    import subprocess

    files = {f.path: f.content for f in render(load_file(ROOT / "specs" / "baseline.muh"))}
    for path, text in files.items():
        if path.startswith("vllm/plugin/muh_vllm_plugin/"):
            (tmp_path / "muh_vllm_plugin").mkdir(exist_ok=True)
            (tmp_path / "muh_vllm_plugin" / Path(path).name).write_text(text)
    reg = tmp_path / "vllm" / "model_executor" / "models"
    reg.mkdir(parents=True)
    for d in (tmp_path / "vllm", tmp_path / "vllm" / "model_executor", reg):
        (d / "__init__.py").write_text("__version__ = '0.6.3.post1'\n" if d.name == "vllm" else "")
    # what vLLM 0.6.3's registry.py does when run as `python -m vllm.model_executor.models.registry`
    (reg / "registry.py").write_text(
        "if __name__ == '__main__':\n    import muh_vllm_plugin\n    print(muh_vllm_plugin.register())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-S", "-m", "vllm.model_executor.models.registry"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path)},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "{'_skipped': 'model-registry subprocess'}"


# -- muh's qwen3_coder tool parser, registered through the wheel's own ToolParserManager ---------------

CALL = (
    "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nBeijing\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]


@pytest.fixture(scope="module")
def parser_env(stock_protocol, vllm_wheel, tmp_path_factory):
    """The wheel's abstract_tool_parser.py and protocol.py as the vllm modules the provider imports."""
    from muh.engines.vllm.wheel import read

    names = [
        "vllm",
        "vllm.entrypoints",
        "vllm.entrypoints.openai",
        "vllm.entrypoints.openai.protocol",
        "vllm.entrypoints.openai.tool_parsers",
        "vllm.entrypoints.openai.tool_parsers.abstract_tool_parser",
        "vllm.logger",
        "vllm.transformers_utils",
        "vllm.transformers_utils.tokenizer",
        "vllm.utils",
    ]
    saved = {k: sys.modules.get(k) for k in names}
    import logging

    stubs = {n: _stub(n) for n in names}
    stubs["vllm.entrypoints.openai.protocol"] = stock_protocol
    stubs["vllm.logger"].init_logger = logging.getLogger
    stubs["vllm.transformers_utils.tokenizer"].AnyTokenizer = Any
    stubs["vllm.utils"].is_list_of = lambda v, t: isinstance(v, list) and all(isinstance(x, t) for x in v)
    sys.modules.update(stubs)
    atp = stubs["vllm.entrypoints.openai.tool_parsers.abstract_tool_parser"]
    exec(
        compile(
            read(vllm_wheel, "vllm/entrypoints/openai/tool_parsers/abstract_tool_parser.py"),
            "abstract_tool_parser.py",
            "exec",
        ),
        atp.__dict__,
    )
    files = {f.path: f.content for f in render(load_file(ROOT / "specs" / "baseline.muh"))}
    path = tmp_path_factory.mktemp("parser") / "muh_qwen3_coder.py"
    path.write_text(files["vllm/parsers/muh_qwen3_coder.py"])
    yield atp, path
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v


@pytest.mark.vllm
def test_the_parser_registers_through_the_wheels_extension_point_and_round_trips(parser_env, stock_protocol):
    atp, path = parser_env
    atp.ToolParserManager.tool_parsers.pop("qwen3_coder", None)
    atp.ToolParserManager.import_tool_parser(str(path))  # what api_server does with --tool-parser-plugin
    cls = atp.ToolParserManager.get_tool_parser("qwen3_coder")
    assert cls.__name__ == "MuhQwen3CoderToolParser"
    request = stock_protocol.ChatCompletionRequest.model_validate(dict(BASE, tools=TOOLS, tool_choice="auto"))
    info = cls(None).extract_tool_calls(CALL, request)
    assert isinstance(info, stock_protocol.ExtractedToolCallInformation)
    assert info.tools_called and info.content == "Let me check."
    (call,) = info.tool_calls
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Beijing", "days": 3}
    plain = cls(None).extract_tool_calls("no tools here", request)
    assert not plain.tools_called and plain.content == "no tools here"


@pytest.mark.vllm
def test_the_parser_streams_content_then_the_call(parser_env, stock_protocol):
    atp, path = parser_env
    atp.ToolParserManager.tool_parsers.pop("qwen3_coder", None)
    atp.ToolParserManager.import_tool_parser(str(path))
    parser = atp.ToolParserManager.get_tool_parser("qwen3_coder")(None)
    request = stock_protocol.ChatCompletionRequest.model_validate(dict(BASE, tools=TOOLS))
    content, calls, prev = "", [], ""
    for i in range(0, len(CALL), 5):  # 5-character deltas, "<tool_call>" split across them
        cur = CALL[: i + 5]
        d = parser.extract_tool_calls_streaming(prev, cur, cur[len(prev) :], [], [], [], request)
        prev = cur
        if d is not None:
            assert isinstance(d, stock_protocol.DeltaMessage)
            content += d.content or ""
            calls += d.tool_calls
    assert content == "Let me check.\n"
    assert {c.index for c in calls} == {0} and [c.function.name for c in calls if c.function.name] == ["get_weather"]
    assert json.loads("".join(c.function.arguments or "" for c in calls)) == {"city": "Beijing", "days": 3}
    # serving_chat's end-of-stream check: expected arguments (its json.dumps) == what was recorded as streamed
    assert json.dumps(parser.prev_tool_call_arr[0]["arguments"]) == parser.streamed_args_for_tool[0]


@pytest.mark.vllm
def test_the_parser_keeps_a_forks_own(parser_env):
    atp, path = parser_env

    class ForkParser(atp.ToolParser):
        pass

    atp.ToolParserManager.register_module("qwen3_coder", module=ForkParser)
    atp.ToolParserManager.import_tool_parser(str(path))
    assert atp.ToolParserManager.get_tool_parser("qwen3_coder") is ForkParser
    atp.ToolParserManager.tool_parsers.pop("qwen3_coder")


def test_the_parser_file_never_raises_without_vllm(tmp_path):
    import subprocess

    files = {f.path: f.content for f in render(load_file(ROOT / "specs" / "baseline.muh"))}
    p = tmp_path / "muh_qwen3_coder.py"
    p.write_text(files["vllm/parsers/muh_qwen3_coder.py"])
    proc = subprocess.run(
        [sys.executable, "-S", "-c", f"import runpy; print(runpy.run_path({str(p)!r})['REGISTERED'])"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "False"
    assert "muh-parser: qwen3_coder not registered: ModuleNotFoundError" in proc.stderr


PROVIDE = """
import logging, sys
logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
import muh_vllm_plugin
import ixformer.functions as F
applied = muh_vllm_plugin.register()
print("applied", "moe_topk_softmax" in applied)
print("call", F.vllm_moe_topk_softmax(1, 2, 3, 4))
try:
    F.vllm_moe_topk_softmax(1, 2, 3, 4, 5)
except AttributeError as e:  # the fork's own error for the absent name: its fallback runs (issue 37.3)
    print("refused", e)
except TypeError:  # the vendor's own function
    print("vendor refused")
"""
SELECT_ALL = '{"selected": ["topk_softmax", "gemma_rms_norm", "silu_and_mul", "rms_norm", "fused_add_rms_norm"]}'


@pytest.mark.parametrize("vendor_has_it", [False, True])
def test_the_missing_vendor_routing_op_is_provided_only_while_absent(tmp_path, vendor_has_it):
    import subprocess

    files = {f.path: f.content for f in render(load_file(ROOT / "specs" / "baseline.muh"))}
    for path, text in files.items():
        if path.startswith("vllm/plugin/muh_vllm_plugin/"):
            (tmp_path / "muh_vllm_plugin").mkdir(exist_ok=True)
            (tmp_path / "muh_vllm_plugin" / Path(path).name).write_text(text)
    tree = {
        "vllm/__init__.py": "__version__ = '0.6.3.post1'\n",
        "ixformer/__init__.py": "",
        "ixformer/functions.py": "def vllm_moe_topk_softmax(a, b, c, d):\n    return 'vendor'\n"
        if vendor_has_it
        else "",
        "muh_kernels/__init__.py": "",
        "muh_kernels/vllm_ops.py": "def topk_softmax(topk_weights, topk_ids, token_expert_indicies, gating_output):\n"
        "    return 'muh'\n",
    }
    for rel, text in tree.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "selftest.json").write_text(SELECT_ALL)  # the card's self-test selected it
    proc = subprocess.run(
        [sys.executable, "-S", "-c", PROVIDE],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "MUH_SELFTEST_RESULT": str(tmp_path / "selftest.json")},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    marker = next(line for line in proc.stderr.splitlines() if "muh-vllm-plugin: vllm" in line)
    if vendor_has_it:
        assert proc.stdout.split("\n")[:2] == ["applied False", "call vendor"]
        assert "moe_topk_softmax (ixformer.functions.vllm_moe_topk_softmax exists: the vendor's is kept)" in marker
    else:
        assert proc.stdout.split("\n")[:3] == [
            "applied True",
            "call muh",
            "refused module 'ixformer.functions' has no "
            "attribute 'vllm_moe_topk_softmax' (muh provides only the 4-argument call)",
        ]


GUARD = """
import logging
logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
import muh_vllm_plugin
from vllm.model_executor.layers.layernorm import GemmaRMSNorm
muh_vllm_plugin.register()
print(GemmaRMSNorm.forward_cuda(GemmaRMSNorm(), "x"))
"""


@pytest.mark.parametrize(
    "provider,rebound",
    [
        ("def gemma_rms_norm(self, x, residual=None):\n    return 'muh'\n", True),  # forward_cuda's shape
        ("def gemma_rms_norm(input, weight, epsilon):\n    return 'muh'\n", False),  # an op's shape: refused
    ],
)
def test_a_rebind_whose_provider_cannot_take_the_targets_arguments_is_refused(tmp_path, provider, rebound):
    """The signature guard of every rebind: a provider that could not take the stock function's
    arguments keeps vLLM's function and says why (here GemmaRMSNorm.forward_cuda, a method)."""
    import subprocess

    files = {f.path: f.content for f in render(load_file(ROOT / "specs" / "baseline.muh"))}
    for path, text in files.items():
        if path.startswith("vllm/plugin/muh_vllm_plugin/"):
            (tmp_path / "muh_vllm_plugin").mkdir(exist_ok=True)
            (tmp_path / "muh_vllm_plugin" / Path(path).name).write_text(text)
    tree = {
        "vllm/__init__.py": "__version__ = '0.6.3.post1'\n",
        "vllm/model_executor/__init__.py": "",
        "vllm/model_executor/layers/__init__.py": "",
        "vllm/model_executor/layers/layernorm.py": "class GemmaRMSNorm:\n"
        "    def forward_cuda(self, x, residual=None):\n"
        "        return 'stock'\n",
        "muh_kernels/__init__.py": "",
        "muh_kernels/vllm_ops.py": provider,
    }
    for rel, text in tree.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "selftest.json").write_text(SELECT_ALL)
    proc = subprocess.run(
        [sys.executable, "-S", "-c", GUARD],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "MUH_SELFTEST_RESULT": str(tmp_path / "selftest.json")},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ("muh" if rebound else "stock")
    marker = next(line for line in proc.stderr.splitlines() if "muh-vllm-plugin: vllm" in line)
    assert ("gemma_rms_norm (provider" in marker and "cannot take forward_cuda's" in marker) != rebound


# -- the run file's argv against the wheel's own argument parser ----------------------------------------
# `make_arg_parser` of vllm/entrypoints/openai/cli_args.py and `EngineArgs.add_cli_args` of
# vllm/engine/arg_utils.py are executed as they are, with the real FlexibleArgumentParser class of
# vllm/utils.py and the real ToolParserManager; only what they import for other purposes (torch,
# vllm.config's classes, …) is a stand-in that is a type, iterable (empty) and callable.


class _AnyMeta(type):
    def __iter__(cls):
        return iter(())

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _AnyMeta(name, (), {})

    def __call__(cls, *args, **kwargs):
        return cls


class _AnyModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _AnyMeta(name, (), {})


@pytest.fixture(scope="module")
def stock_arg_parser(parser_env, vllm_wheel):
    import argparse
    import ast

    from muh.engines.vllm.wheel import read

    atp, _ = parser_env
    utils_src = read(vllm_wheel, "vllm/utils.py")
    cls = next(
        n for n in ast.parse(utils_src).body if isinstance(n, ast.ClassDef) and n.name == "FlexibleArgumentParser"
    )
    ns = {"argparse": argparse, "sys": sys, "List": list, "Dict": dict, "Any": Any}
    exec(compile(ast.get_source_segment(utils_src, cls), "vllm/utils.py", "exec"), ns)
    names = [
        "torch",
        "vllm.envs",
        "vllm.config",
        "vllm.executor",
        "vllm.executor.executor_base",
        "vllm.model_executor",
        "vllm.model_executor.layers",
        "vllm.model_executor.layers.quantization",
        "vllm.transformers_utils.utils",
        "vllm.engine",
        "vllm.engine.arg_utils",
        "vllm.entrypoints.chat_utils",
        "vllm.entrypoints.openai.serving_engine",
        "vllm.entrypoints.openai.cli_args",
    ]
    saved = {k: sys.modules.get(k) for k in names + ["vllm.utils", "vllm.entrypoints.openai.tool_parsers"]}
    sys.modules.update({n: _AnyModule(n) for n in names})
    sys.modules["vllm.utils"].FlexibleArgumentParser = ns["FlexibleArgumentParser"]
    sys.modules["vllm.entrypoints.openai.tool_parsers"] = _stub(
        "vllm.entrypoints.openai.tool_parsers", ToolParserManager=atp.ToolParserManager
    )
    try:
        for name, path in (
            ("vllm.engine.arg_utils", "vllm/engine/arg_utils.py"),
            ("vllm.entrypoints.openai.cli_args", "vllm/entrypoints/openai/cli_args.py"),
        ):
            mod = types.ModuleType(name)
            sys.modules[name] = mod
            exec(compile(read(vllm_wheel, path), path, "exec"), mod.__dict__)
        cli = sys.modules["vllm.entrypoints.openai.cli_args"]
        yield cli, ns["FlexibleArgumentParser"], atp
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def _baseline_argv(parser_file: Path, with_reasoning: bool) -> list[str]:
    """The baseline's server argv as the run file execs it on an engine without `--reasoning-parser`
    (its conditional group dropped), muh's parser file at a path that exists here."""
    from muh.derive.deploy import resolve_deploy

    spec = load_file(ROOT / "specs" / "baseline.muh").spec
    plan, _ = resolve_deploy(spec, next(iter(spec.deploys.values())))
    drop = (
        set()
        if with_reasoning
        else {
            i for g in plan.cond_flags if g.id == "reasoning_parser" or "reasoning_parser" in g.requires for i in g.at
        }
    )
    argv = [a for i, a in enumerate(plan.command) if i not in drop][3:]
    return [str(parser_file) if a.endswith("/muh_qwen3_coder.py") else a for a in argv]


@pytest.mark.vllm
def test_the_run_files_argv_parses_with_the_wheels_parser_and_the_provider_registers(stock_arg_parser, parser_env):
    cli, parser_cls, atp = stock_arg_parser
    _, parser_file = parser_env
    argv = _baseline_argv(parser_file, with_reasoning=False)
    assert "--reasoning-parser" not in argv and "--tool-parser-plugin" in argv
    args = cli.make_arg_parser(parser_cls(description="stock")).parse_args(argv)
    cli.validate_parsed_serve_args(args)
    assert (args.tool_call_parser, args.enable_auto_tool_choice, args.max_model_len) == ("qwen3_coder", True, 80000)
    assert args.middleware == ["muh_vllm_plugin.compat.RequestCompat"]  # the request hook, vLLM's own option
    # what api_server.run_server does before it serves (vllm/entrypoints/openai/api_server.py:531-537)
    atp.ToolParserManager.tool_parsers.pop("qwen3_coder", None)
    if args.tool_parser_plugin and len(args.tool_parser_plugin) > 3:
        atp.ToolParserManager.import_tool_parser(args.tool_parser_plugin)
    assert args.tool_call_parser in atp.ToolParserManager.tool_parsers.keys()


@pytest.mark.vllm
def test_the_wheels_parser_rejects_reasoning_parser_which_is_why_muh_cannot_provide_it(
    stock_arg_parser, parser_env, capsys
):
    cli, parser_cls, _ = stock_arg_parser
    _, parser_file = parser_env
    argv = _baseline_argv(parser_file, with_reasoning=True)
    assert argv[argv.index("--reasoning-parser") + 1] == "qwen3"
    with pytest.raises(SystemExit) as err:
        cli.make_arg_parser(parser_cls(description="stock")).parse_args(argv)
    assert err.value.code == 2 and "unrecognized arguments: --reasoning-parser qwen3" in capsys.readouterr().err


# -- issue 27: unknown fields, tools without thinking, the max_tokens cap, greedy n fan-out, reasoning split ----


@pytest.fixture
def with_protocol(stock_protocol, compat, monkeypatch):
    """The engine's request model where the hook looks for it (vllm.entrypoints.openai.protocol)."""
    monkeypatch.setitem(sys.modules, "vllm.entrypoints.openai.protocol", stock_protocol)
    monkeypatch.setitem(
        sys.modules, "vllm.entrypoints.openai", _stub("vllm.entrypoints.openai", protocol=stock_protocol)
    )
    compat._fields.clear()
    yield
    compat._fields.clear()


@pytest.mark.vllm
def test_unknown_top_level_fields_are_accepted_and_dropped(stock_request, compat, with_protocol):
    body = dict(
        BASE, stream=True, stream_options={"include_usage": True}, metadata={"a": 1}, store=False, max_tokens=10
    )
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        stock_request.model_validate(json.loads(json.dumps(body)))
    new, err = compat.rewrite(json.loads(json.dumps(body)))
    assert err is None and "metadata" not in new and "store" not in new
    req = stock_request.model_validate(new)
    assert req.stream_options.include_usage and req.max_tokens == 10  # known fields are kept


@pytest.mark.vllm
def test_requests_with_tools_are_rendered_without_thinking(stock_request, compat):
    new, _ = compat.rewrite(dict(BASE, tools=TOOLS))
    assert stock_request.model_validate(new).chat_template_kwargs == {"enable_thinking": False}
    new, _ = compat.rewrite(dict(BASE, tools=TOOLS, chat_template_kwargs={"enable_thinking": True}))
    assert new["chat_template_kwargs"] == {"enable_thinking": True}  # the request's own choice wins
    new, _ = compat.rewrite(dict(BASE, tools=TOOLS, tool_choice="none"))
    assert "chat_template_kwargs" not in new
    new, _ = compat.rewrite(dict(BASE))
    assert "chat_template_kwargs" not in new


@pytest.mark.vllm
@pytest.mark.parametrize("given,served", [(None, 8192), (64, 64), (8192, 8192), (100000, 100000), (-1, -1)])
def test_max_tokens_is_capped_only_when_absent(stock_request, compat, given, served, monkeypatch):
    """Issue 37.4: an explicit value (t3_max_tokens_over included) keeps the engine's own answer."""
    assert compat.MAX_TOKENS_CAP == 8192  # the baseline's api.max_tokens_cap
    monkeypatch.setattr(compat, "_fit", [])  # an engine whose _validate_input muh cannot wrap: the cap alone
    body = dict(BASE) if given is None else dict(BASE, max_completion_tokens=given)
    new, _ = compat.rewrite(body)
    assert new["max_tokens"] == served  # -1: left for vLLM to refuse (t3_max_tokens_neg1)


@pytest.mark.vllm
@pytest.mark.parametrize(
    "extra,want",
    [
        ({"enable_thinking": False}, False),
        ({"thinking": {"type": "disabled"}}, False),
        ({"thinking": {"type": "enabled"}}, True),
        ({"enable_thinking": True, "chat_template_kwargs": {"enable_thinking": False}}, False),
    ],
)
def test_thinking_sent_at_the_top_level_is_honoured(stock_request, compat, with_protocol, extra, want):
    """Issue 37.4: d10-style requests turn thinking off at the top level; before, the fields were dropped."""
    body = json.loads(json.dumps(dict(BASE, **extra)))
    new, err = compat.rewrite(body)
    assert err is None and "enable_thinking" not in new and "thinking" not in new
    assert stock_request.model_validate(new).chat_template_kwargs == {"enable_thinking": want}


@pytest.mark.vllm
def test_a_tool_result_with_null_content_is_valid(stock_request, compat):
    body = json.loads(json.dumps(TOOL_HISTORY))
    body["messages"][2]["content"] = None
    new, _ = compat.rewrite(body)
    assert new["messages"][2]["content"] == "" and new["messages"][1]["content"] == ""
    stock_request.model_validate(new)


CONTEXT = 80_000  # the stand-in server's max_model_len


@pytest.fixture
def serving(stock_protocol, vllm_wheel, monkeypatch):
    """The wheel's own ``OpenAIServing._validate_input`` (executed from its source) on a stand-in
    ``OpenAIServing`` with ``max_model_len = CONTEXT``, where the hook looks for it."""
    import ast
    from typing import List, TypedDict

    from muh.engines.vllm.wheel import read

    tree = ast.parse(read(vllm_wheel, "vllm/entrypoints/openai/serving_engine.py"))
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    validate = next(
        n for n in classes["OpenAIServing"].body if isinstance(n, ast.FunctionDef) and n.name == "_validate_input"
    )
    ns = {
        n: getattr(stock_protocol, n)
        for n in ("EmbeddingRequest", "TokenizeCompletionRequest", "TokenizeChatRequest", "DetokenizeRequest")
    }
    ns.update(List=List, TypedDict=TypedDict, AnyRequest=Any)
    exec(compile(ast.Module([classes["TextTokensPrompt"], validate], []), "serving_engine.py", "exec"), ns)
    cls = type("OpenAIServing", (), {"_validate_input": ns["_validate_input"], "max_model_len": CONTEXT})
    monkeypatch.setitem(
        sys.modules,
        "vllm.entrypoints.openai.serving_engine",
        _stub("vllm.entrypoints.openai.serving_engine", OpenAIServing=cls),
    )
    return cls


def _validated(serving, stock_request, body, prompt_tokens):
    request = stock_request.model_validate(body)
    serving()._validate_input(request, list(range(prompt_tokens)), "prompt")
    return request.max_tokens


@pytest.mark.vllm
def test_the_cap_never_refuses_a_prompt_the_stock_server_serves(serving, stock_request, compat, monkeypatch):
    monkeypatch.setattr(compat, "_fit", [])
    long_prompt = CONTEXT - compat.MAX_TOKENS_CAP + 1000
    assert _validated(serving, stock_request, dict(BASE), long_prompt) is None  # stock without the cap serves it

    assert compat.install_fit_context() and compat.install_fit_context()
    absent, _ = compat.rewrite(dict(BASE))  # the wrapped validation applies the cap
    assert absent.get("max_tokens") is None
    assert _validated(serving, stock_request, absent, long_prompt) == CONTEXT - long_prompt
    assert _validated(serving, stock_request, absent, CONTEXT - 1) == 1
    assert _validated(serving, stock_request, absent, 1000) == compat.MAX_TOKENS_CAP
    assert _validated(serving, stock_request, dict(BASE, max_tokens=100), long_prompt) == 100  # fits: unchanged
    with pytest.raises(ValueError, match="maximum context length"):  # an explicit value over the context: the
        _validated(serving, stock_request, dict(BASE, max_tokens=8192), long_prompt)  # engine's own answer (37.4)
    with pytest.raises(ValueError, match="maximum context length"):  # a prompt that fills the context
        _validated(serving, stock_request, absent, CONTEXT)
    with pytest.raises(ValueError, match="maximum context length"):
        _validated(serving, stock_request, absent, CONTEXT + 5)


@pytest.mark.vllm
def test_the_context_fit_is_installed_once_by_either_hook_and_only_with_the_cap(serving, compat, monkeypatch):
    stock = serving.__dict__["_validate_input"]
    compat.RequestCompat(lambda *a: None)  # --middleware's hook
    wrapped = serving.__dict__["_validate_input"]
    assert wrapped is not stock and wrapped.__muh_rebind__ == "fit_context"
    app = types.SimpleNamespace(user_middleware=[], add_middleware=lambda cls: None)
    compat.wrap_build_app(lambda: app)()  # build_app's hook: already there, not wrapped twice
    assert serving.__dict__["_validate_input"] is wrapped

    monkeypatch.setattr(serving, "_validate_input", stock)
    monkeypatch.setattr(compat, "MAX_TOKENS_CAP", None)
    assert not compat.install_fit_context() and serving.__dict__["_validate_input"] is stock
    monkeypatch.setattr(compat, "MAX_TOKENS_CAP", 8192)
    monkeypatch.delattr(serving, "_validate_input")  # a fork without the method: the cap alone, no error
    assert not compat.install_fit_context()


def _vllm_like(calls, stream=False, text="hello"):
    """A stand-in route: vLLM 0.6.3's greedy rule (n > 1 at temperature < 1e-5: 400), else one answer per choice."""

    async def app(scope, receive, send):
        body = json.loads((await receive())["body"])
        calls.append(body)
        n = body.get("n") or 1
        if n > 1 and (body.get("temperature") if body.get("temperature") is not None else 0.7) < 1e-5:
            payload = json.dumps(
                {"object": "error", "message": f"n must be 1 when using greedy sampling, got {n}.", "code": 400}
            ).encode()
            await send(
                {"type": "http.response.start", "status": 400, "headers": [(b"content-type", b"application/json")]}
            )
            await send({"type": "http.response.body", "body": payload})
            return
        if stream:
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
            )
            for i in range(n):
                for piece in (text[:2], text[2:]):
                    chunk = {"choices": [{"index": i, "delta": {"content": piece}, "finish_reason": None}]}
                    await send(
                        {
                            "type": "http.response.body",
                            "body": b"data: " + json.dumps(chunk).encode() + b"\n\n",
                            "more_body": True,
                        }
                    )
                chunk = {"choices": [{"index": i, "delta": {}, "finish_reason": "stop"}]}
                await send(
                    {
                        "type": "http.response.body",
                        "body": b"data: " + json.dumps(chunk).encode() + b"\n\n",
                        "more_body": True,
                    }
                )
            await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})
            return
        payload = json.dumps(
            {
                "object": "chat.completion",
                "choices": [
                    {"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                    for i in range(n)
                ],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3 * n, "total_tokens": 5 + 3 * n},
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    return app


def _through(compat, app, body: dict):
    sent = []
    raw = json.dumps(body).encode()

    async def receive():
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(m):
        sent.append(m)

    scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions", "headers": []}
    asyncio.run(compat.RequestCompat(app)(scope, receive, send))
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def _events(raw: bytes):
    return [json.loads(e[6:]) for e in raw.split(b"\n\n") if e.startswith(b"data: {")]


def test_n_2_with_greedy_sampling_is_fanned_out_not_a_400(compat, monkeypatch):
    monkeypatch.setenv("MUH_REASONING_SPLIT", "0")
    calls = []
    status, raw = _through(compat, _vllm_like(calls), dict(BASE, n=2, temperature=0))
    assert status == 200, raw
    out = json.loads(raw)
    assert [c["index"] for c in out["choices"]] == [0, 1] and [c["n"] for c in calls] == [1, 1]
    assert out["usage"] == {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}
    calls.clear()
    status, raw = _through(compat, _vllm_like(calls, stream=True), dict(BASE, n=2, temperature=0, stream=True))
    assert status == 200 and len(calls) == 2
    ev = _events(raw)
    assert [(c["index"], c["finish_reason"]) for e in ev for c in e["choices"] if c["finish_reason"]] == [
        (0, "stop"),
        (1, "stop"),
    ]
    assert raw.count(b"data: [DONE]") == 1 and raw.endswith(b"data: [DONE]\n\n")
    calls.clear()
    status, _ = _through(compat, _vllm_like(calls), dict(BASE, n=2, temperature=0.8))  # sampling: vLLM's own n
    assert status == 200 and [c["n"] for c in calls] == [2]


THOUGHT = "<think>\nLet me think: 2+2.\n</think>\n\nIt is 4."


@pytest.mark.parametrize("text", [THOUGHT, THOUGHT[len("<think>") :]])  # the model's <think>, or the template's
def test_thinking_moves_to_reasoning_content_in_json_answers(compat, monkeypatch, text):
    monkeypatch.setattr(sys, "argv", ["api_server.py", "--model", "/model"])  # no --reasoning-parser
    monkeypatch.delenv("MUH_REASONING_SPLIT", raising=False)
    status, raw = _through(compat, _vllm_like([], text=text), dict(BASE))
    msg = json.loads(raw)["choices"][0]["message"]
    assert status == 200 and msg["reasoning_content"] == "Let me think: 2+2." and msg["content"] == "It is 4."
    monkeypatch.setattr(sys, "argv", ["api_server.py", "--reasoning-parser", "qwen3"])  # the engine's parser does it
    _, raw = _through(compat, _vllm_like([], text=text), dict(BASE))
    assert json.loads(raw)["choices"][0]["message"]["content"] == text


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 8, 64])
def test_thinking_moves_to_reasoning_content_in_streams_tags_split_across_chunks(compat, size):
    s = compat.StreamSplitter(reasoning_first=False)
    out = b""
    for i in range(0, len(THOUGHT), size):
        chunk = {"choices": [{"index": 0, "delta": {"content": THOUGHT[i : i + size]}, "finish_reason": None}]}
        data = b"data: " + json.dumps(chunk).encode() + b"\n\n"
        for j in range(0, len(data), 11):  # the SSE bytes themselves arrive in pieces too
            out += s.feed(data[j : j + 11])
    out += s.feed(
        b"data: "
        + json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).encode()
        + b"\n\ndata: [DONE]\n\n",
        final=True,
    )
    deltas = [c["delta"] for e in _events(out) for c in e["choices"]]
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "\nLet me think: 2+2.\n"
    assert "".join(d.get("content", "") for d in deltas) == "It is 4."
    assert not any("<think>" in d.get("content", "") + d.get("reasoning_content", "") for d in deltas)
    assert out.endswith(b"data: [DONE]\n\n")


def test_without_thinking_a_plain_answer_stays_content(compat):
    sp = compat.Splitter(reasoning_first=False)
    assert sp.feed("It is 4.", final=True) == ("", "It is 4.")
    sp = compat.Splitter(reasoning_first=True)  # the template opened the think block: unterminated = reasoning
    assert sp.feed("still thinking", final=True) == ("still thinking", "")
    assert compat.thinking(compat.rewrite(dict(BASE, tools=TOOLS))[0]) is False


def test_both_request_hooks_run_it_once(compat):
    seen = []

    async def app(scope, receive, send):
        seen.append(json.loads((await receive())["body"]))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b"{}"})

    raw = json.dumps(dict(BASE, max_completion_tokens=5)).encode()

    async def receive():
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(m):
        pass

    scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions", "headers": []}
    asyncio.run(compat.RequestCompat(compat.RequestCompat(app))(scope, receive, send))  # --middleware + build_app wrap
    assert len(seen) == 1 and seen[0]["max_tokens"] == 5

    class App:
        def __init__(self):
            self.user_middleware = [types.SimpleNamespace(cls=compat.RequestCompat)]  # added by --middleware

        def add_middleware(self, m):
            self.user_middleware.append(types.SimpleNamespace(cls=m))

    app_ = compat.wrap_build_app(lambda args: App())(None)
    assert [m.cls for m in app_.user_middleware] == [compat.RequestCompat]


# -- the parser inside the wheel's own stream loop (OpenAIServingChat.chat_completion_stream_generator) ---------


@pytest.fixture(scope="module")
def serving_chat(parser_env, stock_protocol, vllm_wheel):
    """The wheel's serving_chat.py executed as it is; what it imports for other purposes is a stand-in."""
    from muh.engines.vllm.wheel import read

    atp, path = parser_env
    names = [
        "fastapi",
        "vllm.config",
        "vllm.engine",
        "vllm.engine.protocol",
        "vllm.entrypoints.chat_utils",
        "vllm.entrypoints.logger",
        "vllm.entrypoints.openai.serving_engine",
        "vllm.inputs",
        "vllm.outputs",
        "vllm.sampling_params",
        "vllm.sequence",
        "vllm.tracing",
        "vllm.transformers_utils.tokenizer",
        "vllm.utils",
    ]
    saved = {
        k: sys.modules.get(k)
        for k in names + ["vllm.entrypoints.openai.tool_parsers", "vllm.logger", "vllm.entrypoints.openai.protocol"]
    }
    sys.modules.update({n: _AnyModule(n) for n in names})
    sys.modules["vllm.entrypoints.openai.protocol"] = stock_protocol
    sys.modules["vllm.entrypoints.openai.tool_parsers"] = _stub(
        "vllm.entrypoints.openai.tool_parsers", ToolParser=atp.ToolParser, ToolParserManager=atp.ToolParserManager
    )
    import logging

    sys.modules["vllm.logger"] = _stub("vllm.logger", init_logger=logging.getLogger)
    try:
        mod = types.ModuleType("muh_test_serving_chat")
        exec(
            compile(read(vllm_wheel, "vllm/entrypoints/openai/serving_chat.py"), "serving_chat.py", "exec"),
            mod.__dict__,
        )
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    atp.ToolParserManager.tool_parsers.pop("qwen3_coder", None)
    atp.ToolParserManager.import_tool_parser(str(path))
    return mod, atp.ToolParserManager.get_tool_parser("qwen3_coder")


def _stream(serving_chat, stock_protocol, steps):
    """Run the wheel's stream generator over (delta text, finish reason) steps; the parsed SSE events."""
    mod, parser = serving_chat
    server = object.__new__(mod.OpenAIServingChat)
    server.base_model_paths = [types.SimpleNamespace(name="llm")]
    server.response_role, server.enable_auto_tools, server.tool_parser = "assistant", True, parser
    request = stock_protocol.ChatCompletionRequest.model_validate(dict(BASE, tools=TOOLS, stream=True))

    async def results():
        for text, finish in steps:
            out = types.SimpleNamespace(
                index=0, text=text, token_ids=[7], finish_reason=finish, stop_reason=None, logprobs=None
            )
            yield types.SimpleNamespace(prompt_token_ids=[1, 2], encoder_prompt_token_ids=None, outputs=[out])

    async def collect():
        meta = types.SimpleNamespace(final_usage_info=None)
        return [x async for x in server.chat_completion_stream_generator(request, results(), "r", [], None, meta)]

    events = asyncio.run(collect())
    assert events[-1] == "data: [DONE]\n\n"
    return [json.loads(e[6:]) for e in events[:-1]]


def _tool_calls(events):
    calls: dict = {}
    for e in events:
        for c in e["choices"]:
            for t in c["delta"].get("tool_calls") or []:
                got = calls.setdefault(t["index"], {"name": None, "arguments": ""})
                f = t.get("function") or {}
                got["name"] = got["name"] or f.get("name")
                got["arguments"] += f.get("arguments") or ""
    return calls


CALL_ZH = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\n北京\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
)


@pytest.mark.vllm
@pytest.mark.parametrize("last", ["im_end", "call"], ids=["im_end-step", "call-on-last-step"])
def test_streamed_tool_calls_end_with_tool_calls_keep_their_name_and_send_arguments_once(
    serving_chat, stock_protocol, last
):
    """Issue 27.4, in vLLM 0.6.3's own loop: the last step (<|im_end|> -> "") still sends the finish chunk; a call
    completed on the last step keeps its name; non-ASCII arguments are not sent twice."""
    pieces = ["Let me check.\n", CALL_ZH[:20], CALL_ZH[20:60], CALL_ZH[60:]]
    steps = (
        [(p, None) for p in pieces] + [("", "stop")]
        if last == "im_end"
        else [(p, None) for p in pieces[:-1]] + [(pieces[-1], "stop")]
    )
    events = _stream(serving_chat, stock_protocol, steps)
    finishes = [c["finish_reason"] for e in events for c in e["choices"] if c.get("finish_reason")]
    assert finishes == ["tool_calls"]
    calls = _tool_calls(events)
    assert list(calls) == [0] and calls[0]["name"] == "get_weather"
    assert json.loads(calls[0]["arguments"]) == {"city": "北京", "days": 3}
    content = "".join(c["delta"].get("content") or "" for e in events for c in e["choices"])
    assert content == "Let me check.\n"


@pytest.mark.vllm
def test_a_plain_streamed_answer_ends_with_stop(serving_chat, stock_protocol):
    events = _stream(serving_chat, stock_protocol, [("Hello", None), (" <tool", None), ("", "stop")])
    assert [c["finish_reason"] for e in events for c in e["choices"] if c.get("finish_reason")] == ["stop"]
    assert "".join(c["delta"].get("content") or "" for e in events for c in e["choices"]) == "Hello <tool"


def test_the_request_hook_is_a_module_shipped_as_it_is_with_its_data_beside_it(monkeypatch):
    """Issue 38 (code in templates becomes code): compat.py is muh/engines/vllm/plugin/compat.py byte for byte;
    what the spec decides is compat.json; the module imported from muh's source has every feature off."""
    import importlib

    files = {f.path: f.content for f in render(load_file(ROOT / "specs" / "baseline.muh"))}
    source = (ROOT / "muh" / "engines" / "vllm" / "plugin" / "compat.py").read_text(encoding="utf-8")
    shipped = files["vllm/plugin/muh_vllm_plugin/compat.py"]
    assert shipped.startswith("# @generated by muh ") and shipped.endswith("byte for byte\n" + source)
    data = json.loads(files["vllm/plugin/muh_vllm_plugin/compat.json"])
    accept = load_file(ROOT / "specs" / "baseline.muh").spec.deploys["competition"].api
    assert data["features"] == sorted(accept.accept) and data["max_tokens_cap"] == accept.max_tokens_cap
    compat = importlib.reload(importlib.import_module("muh.engines.vllm.plugin.compat"))
    assert compat.FEATURES == () and compat.MAX_TOKENS_CAP is None
    assert compat.rewrite(dict(BASE, reasoning_effort="low")) == (dict(BASE, reasoning_effort="low"), None)
    for name in ("FEATURES", "MAX_N", "MAX_TOKENS_CAP", "REASONING_INFO", "_fit"):  # restored after the test
        monkeypatch.setattr(compat, name, getattr(compat, name))
    compat.configure(data)
    assert compat.rewrite(dict(BASE, reasoning_effort="low"))[0] == dict(BASE, max_tokens=8192)
