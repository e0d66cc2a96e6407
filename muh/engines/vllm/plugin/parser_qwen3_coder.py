"""muh's `qwen3_coder` tool-call parser for vLLM 0.6.3 (``--tool-parser-plugin <this file>``).

Registered through vLLM's own extension point (``ToolParserManager.register_module``) and only
when the engine has no parser of that name (a fork's own is kept). Importing this file never
raises: vLLM's ``import_tool_parser`` would let the exception stop the server.

The format (Qwen3-Coder's chat template): text, then one or more blocks
    <tool_call>
    <function=NAME>
    <parameter=KEY>
    VALUE
    </parameter>
    </function>
    </tool_call>
A VALUE is JSON when the tool's schema gives the parameter a non-string type and it parses; text
otherwise (one leading and one trailing line break are part of the block, not the value).
"""

import json
import logging
import re
import uuid

NAME = "qwen3_coder"
logger = logging.getLogger("vllm.muh_plugin.parser")
_BLOCK = re.compile(r"<tool_call>\s*<function=([^>\n]+)>(.*?)</function>\s*</tool_call>", re.S)
_PARAM = re.compile(r"<parameter=([^>\n]+)>(.*?)</parameter>", re.S)
_START = "<tool_call>"


def _schema_types(request, function):
    for tool in getattr(request, "tools", None) or []:
        fn = getattr(tool, "function", None)
        if fn is not None and getattr(fn, "name", None) == function:
            props = (getattr(fn, "parameters", None) or {}).get("properties", {})
            return {k: (v or {}).get("type") for k, v in props.items() if isinstance(v, dict)}
    return {}


def _value(text, kind):
    if text.startswith("\n"):
        text = text[1:]
    if text.endswith("\n"):
        text = text[:-1]
    if kind not in (None, "string"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def _partial(text):
    """Length of a suffix of ``text`` that could be the start of "<tool_call>" (held back while streaming)."""
    return next((k for k in range(len(_START) - 1, 0, -1) if text.endswith(_START[:k])), 0)


def parse(text, request=None):
    """(content before the first call or None, [(name, arguments dict)]) for a complete model output."""
    calls = []
    for m in _BLOCK.finditer(text):
        name = m.group(1).strip()
        kinds = _schema_types(request, name)
        args = {}
        for p in _PARAM.finditer(m.group(2)):
            key = p.group(1).strip()
            args[key] = _value(p.group(2), kinds.get(key))
        calls.append((name, args))
    if not calls:
        return text, []
    content = text[: text.index(_START)].strip() or None
    return content, calls


def _register():
    from vllm.entrypoints.openai.protocol import (
        DeltaFunctionCall,
        DeltaMessage,
        DeltaToolCall,
        ExtractedToolCallInformation,
        FunctionCall,
        ToolCall,
    )
    from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager

    if NAME in ToolParserManager.tool_parsers:
        logger.info("muh-parser: %s: the engine has its own; kept", NAME)
        return False

    class MuhQwen3CoderToolParser(ToolParser):
        def extract_tool_calls(self, model_output, request):
            content, calls = parse(model_output, request)
            if not calls:
                return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
            return ExtractedToolCallInformation(
                tools_called=True,
                content=content,
                tool_calls=[
                    ToolCall(
                        type="function", function=FunctionCall(name=n, arguments=json.dumps(a, ensure_ascii=False))
                    )
                    for n, a in calls
                ],
            )

        def extract_tool_calls_streaming(
            self,
            previous_text,
            current_text,
            delta_text,
            previous_token_ids,
            current_token_ids,
            delta_token_ids,
            request,
        ):
            """Never None: vLLM 0.6.3's stream loop skips a step whose delta is None, and on the last step
            (``<|im_end|>`` -> "") that would drop the finish chunk. A finished call is sent as two entries of
            its index: the name (arguments unset) and then the arguments, so the loop's finish-step rewrite of
            a call's arguments (it tests the first entry's arguments) never replaces it and the name stays; what
            the loop compares is recorded in its own json.dumps form (ensure_ascii), so nothing is re-sent."""
            sent = getattr(self, "_muh_sent", 0)
            start = current_text.find(_START)
            held = 0 if delta_text == "" else _partial(current_text)  # "" : a control token, the last step
            limit = start if start >= 0 else len(current_text) - held
            content = current_text[sent:limit] if limit > sent else ""
            self._muh_sent = max(sent, limit)
            deltas = []
            if start >= 0:
                _, calls = parse(current_text[start:], request)
                for i in range(len(self.prev_tool_call_arr), len(calls)):
                    name, args = calls[i]
                    self.prev_tool_call_arr.append({"name": name, "arguments": args})
                    self.streamed_args_for_tool.append(json.dumps(args))  # serving_chat's own form at the end
                    self.current_tool_id = i
                    deltas.append(
                        DeltaToolCall(
                            index=i,
                            id="chatcmpl-tool-" + uuid.uuid4().hex,
                            type="function",
                            function=DeltaFunctionCall(name=name),
                        )
                    )
                    deltas.append(
                        DeltaToolCall(
                            index=i, function=DeltaFunctionCall(arguments=json.dumps(args, ensure_ascii=False))
                        )
                    )
            out = {}
            if content:
                out["content"] = content
            if deltas:
                out["tool_calls"] = deltas
            return DeltaMessage(**out)

    ToolParserManager.register_module(NAME, module=MuhQwen3CoderToolParser)
    logger.info("muh-parser: %s registered (muh's provider)", NAME)
    return True


try:
    REGISTERED = _register()
except Exception as exc:  # noqa: BLE001 - never stop the server from here
    REGISTERED = False
    logger.warning("muh-parser: %s not registered: %s: %s", NAME, type(exc).__name__, exc)
