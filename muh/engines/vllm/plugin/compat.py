"""Request compatibility for the OpenAI API server: an ASGI middleware on the chat/completions routes.

Shipped into the image as ``muh_vllm_plugin/compat.py`` (this file, byte for byte, after muh's header) with its
spec-dependent data beside it, ``compat.json`` (``features``, ``max_n``, ``max_tokens_cap``, ``reasoning_info``:
rendered from the deploy plan by muh/engines/vllm/codegen/emit.py). Without that file (imported from muh's
source) every feature is off until ``configure(data)`` is called.

Installed in the API server process only, by either hook (both may be live: it runs once per request):
``--middleware muh_vllm_plugin.compat.RequestCompat`` (vLLM 0.6.3's own option, passed by the run file
where the engine has it) and ``muh_vllm_plugin.register()``'s wrap of
``vllm.entrypoints.openai.api_server.build_app`` (looked up by ``run_server`` after plugins are
loaded). The image build fails when neither can be installed. Standard library only; each feature is
the spec's ``api { accept = [...] }`` (what each does: ``muh explain SPEC deploy.api``, docs/deploy.md).
A body that is not a JSON object is passed on untouched (vLLM answers it as before).
"""

import json
import logging
import os
import sys

PATHS = ("/v1/chat/completions", "/v1/completions")
CHAT = "/v1/chat/completions"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
GREEDY_EPS = 1e-5  # vLLM's _SAMPLING_EPS: a lower temperature is greedy sampling, which refuses n > 1
DATA_FILE = "compat.json"
FEATURES = ()
MAX_N = 0
MAX_TOKENS_CAP = None
REASONING_INFO = ("/opt/muh", "run/reasoning.json")  # written at start by vllm/chat_template.py (think_in_prompt)
logger = logging.getLogger("vllm.muh_plugin.api")
_said = set()
_fields = {}
_fit = []  # [True] once OpenAIServing._validate_input applies the cap (install_fit_context)


def configure(data):
    """Set the spec's features from ``data`` (the contents of compat.json)."""
    global FEATURES, MAX_N, MAX_TOKENS_CAP, REASONING_INFO
    FEATURES = tuple(data.get("features") or ())
    MAX_N = int(data.get("max_n") or 0)
    MAX_TOKENS_CAP = data.get("max_tokens_cap")
    REASONING_INFO = tuple(data.get("reasoning_info") or REASONING_INFO)


def _load():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), DATA_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return  # muh's source: nothing configured
    except (OSError, ValueError) as exc:
        logger.warning("muh-api: %s unreadable (%s: %s): request compatibility off", path, type(exc).__name__, exc)
        return
    configure(data)


_load()


def _once(key, msg, *args):
    if key not in _said:
        _said.add(key)
        logger.info("muh-api: " + msg, *args)


def known_fields(path):
    """The top-level fields the engine's request model takes (None: unknown, or it allows extras)."""
    if path not in _fields:
        try:
            from vllm.entrypoints.openai import protocol

            cls = protocol.ChatCompletionRequest if path == CHAT else protocol.CompletionRequest
            fields = getattr(cls, "model_fields", None) or getattr(cls, "__fields__", None) or {}
            names = set(fields)
            names.update(a for a in (getattr(f, "alias", None) for f in fields.values()) if a)
            extra = (getattr(cls, "model_config", None) or {}).get("extra")
            _fields[path] = None if extra == "allow" or not names else names
        except Exception as exc:  # noqa: BLE001 - nothing is dropped then
            _once("fields", "unknown-field filter off: %s: %s", type(exc).__name__, exc)
            _fields[path] = None
    return _fields[path]


def thinking(body):
    """Whether the chat template renders this request with thinking on (its default)."""
    kw = body.get("chat_template_kwargs")
    return not (isinstance(kw, dict) and kw.get("enable_thinking") is False)


THINKING = {"disabled": False, "enabled": True}


def thinking_fields(body):
    """``enable_thinking`` and ``thinking: {type: enabled|disabled}`` sent at the top level become
    ``chat_template_kwargs.enable_thinking`` (the request's own chat_template_kwargs win); the fields go.
    Where the engine's request model has no ``chat_template_kwargs`` nothing can carry them (said once)."""
    want = None
    if "enable_thinking" in body:
        v = body.pop("enable_thinking")
        want = v if isinstance(v, bool) else None
    if "thinking" in body:
        v = body.pop("thinking")
        kind = v.get("type") if isinstance(v, dict) else v
        want = THINKING.get(kind, want) if isinstance(kind, str) else want
    if want is None:
        return
    names = known_fields(CHAT)
    if names is not None and "chat_template_kwargs" not in names:
        _once(
            "think-off", "enable_thinking/thinking cannot be honoured: the engine's request has no chat_template_kwargs"
        )
        return
    kw = body.get("chat_template_kwargs")
    if kw is None:
        kw = body["chat_template_kwargs"] = {}
    if isinstance(kw, dict):
        kw.setdefault("enable_thinking", want)
        _once("think", "top-level enable_thinking/thinking honoured as chat_template_kwargs.enable_thinking")


def rewrite(body, path=CHAT):
    """(new body, None) or (None, error message for a 400). ``body`` is the decoded JSON object."""
    if "n_within_max_num_seqs" in FEATURES and MAX_N:
        for key in ("n", "best_of"):
            v = body.get(key)
            if isinstance(v, int) and not isinstance(v, bool) and v > MAX_N:
                return None, "%s=%d exceeds this server's limit of %d parallel sequences (max_num_seqs)" % (
                    key,
                    v,
                    MAX_N,
                )
    if "max_completion_tokens" in FEATURES and "max_completion_tokens" in body:
        v = body.pop("max_completion_tokens")
        if body.get("max_tokens") is None and v is not None:
            body["max_tokens"] = v
        _once("mct", "max_completion_tokens accepted as max_tokens")
    if "reasoning_effort" in FEATURES and "reasoning_effort" in body:
        body.pop("reasoning_effort")
        _once("re", "reasoning_effort accepted and ignored")
    if "tool_calls_null_content" in FEATURES and isinstance(body.get("messages"), list):
        for m in body["messages"]:
            if (
                not isinstance(m, dict)
                or m.get("content") is not None
                or "content" not in m
                and m.get("role") != "tool"
            ):
                continue
            if m.get("role") == "assistant" and m.get("tool_calls") or m.get("role") == "tool":
                m["content"] = ""  # a tool result with content null: an empty result, as the gate means it
    if path == CHAT and "unknown_fields" in FEATURES:
        thinking_fields(body)
    if (
        "tools_without_thinking" in FEATURES
        and path == CHAT
        and body.get("tools")
        and body.get("tool_choice") != "none"
    ):
        kw = body.get("chat_template_kwargs")
        if kw is None:
            kw = body["chat_template_kwargs"] = {}
        if isinstance(kw, dict) and "enable_thinking" not in kw:
            kw["enable_thinking"] = False
            _once("twt", "requests with tools are rendered with thinking off")
    if MAX_TOKENS_CAP and body.get("max_tokens") is None and not _fit:
        body["max_tokens"] = MAX_TOKENS_CAP  # the engine cannot fit it to the context: the cap alone
        _once("cap", "max_tokens absent: %d", MAX_TOKENS_CAP)
    if "unknown_fields" in FEATURES:
        names = known_fields(path)
        if names is not None:
            for key in [k for k in body if k not in names]:
                body.pop(key)
                _once("field:" + key, "unknown request field %r accepted and dropped", key)
    return body, None


def fan_out(body):
    """How many greedy one-choice requests stand for this one (n > 1 at temperature 0 is refused by vLLM), or 0."""
    if "n_greedy_fan_out" not in FEATURES:
        return 0
    n, t = body.get("n"), body.get("temperature")
    if not (isinstance(n, int) and not isinstance(n, bool) and n > 1):
        return 0
    if isinstance(t, (int, float)) and not isinstance(t, bool) and t < GREEDY_EPS:
        return n
    return 0


# -- reasoning: <think>…</think> into reasoning_content when the engine has no reasoning parser -------------


def split_reasoning_on():
    """On when the feature is listed and the server was started without --reasoning-parser
    (MUH_REASONING_SPLIT=0/1 overrides)."""
    forced = os.environ.get("MUH_REASONING_SPLIT")
    if forced in ("0", "1"):
        return forced == "1"
    return "reasoning_split" in FEATURES and not any(
        a == "--reasoning-parser" or a.startswith("--reasoning-parser=") for a in sys.argv
    )


def think_in_prompt():
    """Whether the chat template opens the think block in the prompt (then the output starts inside it)."""
    try:
        with open(
            os.path.join(os.environ.get("MUH_ROOT", REASONING_INFO[0]), REASONING_INFO[1]), encoding="utf-8"
        ) as f:
            v = json.load(f).get("think_in_prompt")
        return True if v is None else bool(v)
    except (OSError, ValueError, AttributeError):
        return True  # Qwen3.5/3.6 templates do; a stray leading <think> is handled either way


def _partial(text, tag):
    """Length of the longest suffix of ``text`` that starts ``tag`` (held back while streaming)."""
    return next((k for k in range(min(len(tag) - 1, len(text)), 0, -1) if text.endswith(tag[:k])), 0)


class Splitter:
    """Splits one choice's text into (reasoning, content) as it arrives; tags split across chunks are held."""

    def __init__(self, reasoning_first):
        self.mode = "start"
        self.buf = ""
        self.reasoning_first = reasoning_first

    def feed(self, text, final=False):
        self.buf += text or ""
        r, c = [], []
        while True:
            if self.mode == "start":
                s = self.buf.lstrip()
                if s.startswith(THINK_OPEN):
                    self.buf, self.mode = s[len(THINK_OPEN) :], "reasoning"
                    continue
                if not final and THINK_OPEN.startswith(s):
                    break  # could still become <think>
                self.mode = "reasoning" if self.reasoning_first else "content"
                continue
            if self.mode == "reasoning":
                i = self.buf.find(THINK_CLOSE)
                if i >= 0:
                    r.append(self.buf[:i])
                    self.buf, self.mode = self.buf[i + len(THINK_CLOSE) :], "after"
                    continue
                keep = 0 if final else _partial(self.buf, THINK_CLOSE)
                r.append(self.buf[: len(self.buf) - keep])
                self.buf = self.buf[len(self.buf) - keep :]
                break
            if self.mode == "after":
                self.buf = self.buf.lstrip()
                if not self.buf:
                    break
                self.mode = "content"
                continue
            c.append(self.buf)
            self.buf = ""
            break
        return "".join(r), "".join(c)


def split_message(message, reasoning_first):
    text = message.get("content")
    if not isinstance(text, str) or message.get("reasoning_content"):
        return
    r, c = Splitter(reasoning_first).feed(text, final=True)
    message["reasoning_content"] = r.strip() or None
    message["content"] = c or (None if r else text)


def split_json(payload, reasoning_first):
    for choice in payload.get("choices") or []:
        if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
            split_message(choice["message"], reasoning_first)
    return payload


class StreamSplitter:
    """Rewrites SSE ``data:`` events of a chat completion stream: each choice's delta content is split."""

    def __init__(self, reasoning_first):
        self.reasoning_first = reasoning_first
        self.pending = b""
        self.choices = {}

    def _choice(self, choice):
        idx = choice.get("index", 0)
        sp = self.choices.setdefault(idx, Splitter(self.reasoning_first))
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        text = delta.get("content")
        final = choice.get("finish_reason") is not None
        if not isinstance(text, str) and not final:
            return
        if delta.get("reasoning_content"):
            return
        r, c = sp.feed(text if isinstance(text, str) else "", final=final)
        if r:
            delta["reasoning_content"] = r
        if c:
            delta["content"] = c
        elif "content" in delta:
            del delta["content"]

    def _event(self, event):
        lines = event.split(b"\n")
        out = []
        for line in lines:
            if line.startswith(b"data: ") and line[6:].strip() != b"[DONE]":
                try:
                    payload = json.loads(line[6:])
                except ValueError:
                    out.append(line)
                    continue
                for choice in payload.get("choices") or [] if isinstance(payload, dict) else []:
                    if isinstance(choice, dict):
                        self._choice(choice)
                line = b"data: " + json.dumps(payload, ensure_ascii=False).encode()
            out.append(line)
        return b"\n".join(out)

    def feed(self, chunk, final=False):
        self.pending += chunk
        events = self.pending.split(b"\n\n")
        self.pending = b"" if final else events.pop()
        done = [self._event(e) for e in events if e]
        return b"".join(e + b"\n\n" for e in done) + (self.pending if final else b"")


def _header(headers, name):
    return next((v for k, v in headers if k.lower() == name), b"")


def _error(message):
    return json.dumps(
        {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}
    ).encode()


async def _respond(send, status, payload, content_type=b"application/json"):
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type), (b"content-length", str(len(payload)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class RequestCompat:
    """ASGI middleware: rewrites (or refuses) request bodies of ``PATHS`` and, on the chat route, splits
    reasoning out of responses; everything else passes through."""

    def __init__(self, app):
        self.app = app
        install_fit_context()  # installed by --middleware: wrap_build_app may not run

    async def __call__(self, scope, receive, send):
        if (
            scope.get("type") != "http"
            or scope.get("method") != "POST"
            or scope.get("path") not in PATHS
            or scope.get("muh_compat")
        ):
            return await self.app(scope, receive, send)
        scope = dict(scope, muh_compat=True)  # the other hook, if also installed, passes it through
        chunks = []
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return await self.app(scope, receive, send)
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        raw = b"".join(chunks)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return await self._call(scope, raw, receive, send)
        new, err = rewrite(body, scope["path"])
        if err is not None:
            return await _respond(send, 400, _error(err))
        split = scope["path"] == CHAT and "reasoning_split" in FEATURES and split_reasoning_on()
        first = (thinking(new) and think_in_prompt()) if split else False
        n = fan_out(new)
        if n:
            return await self._fan_out(scope, new, n, receive, send, split, first)
        return await self._call(scope, json.dumps(new).encode(), receive, send, split=split, first=first)

    async def _call(self, scope, raw, receive, send, split=False, first=False):
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(raw)).encode()))
        return await self.app(dict(scope, headers=headers), replay, _Rewriter(send, first) if split else send)

    async def _fan_out(self, scope, body, n, receive, send, split, first):
        """n greedy choices as n one-choice requests, one after the other, merged into one answer."""
        _once("fan", "n=%d with greedy sampling served as %d one-choice requests", n, n)
        one = dict(body, n=1)
        one.pop("best_of", None)
        stream = bool(body.get("stream"))
        merged = None
        started = False
        for i in range(n):
            cap = _Capture()
            await self._call(scope, json.dumps(one).encode(), receive, cap, split=split, first=first)
            if cap.status != 200:
                return await cap.replay(send)
            if stream:
                if not started:
                    await send(
                        dict(
                            cap.start,
                            headers=[(k, v) for k, v in cap.start.get("headers", []) if k.lower() != b"content-length"],
                        )
                    )
                    started = True
                await send(
                    {
                        "type": "http.response.body",
                        "body": _reindex_stream(cap.body, i, last=i == n - 1),
                        "more_body": i < n - 1,
                    }
                )
                continue
            payload = json.loads(cap.body)
            for choice in payload.get("choices") or []:
                choice["index"] = i
            if merged is None:
                merged = payload
            else:
                merged["choices"] += payload.get("choices") or []
                u, v = merged.get("usage") or {}, payload.get("usage") or {}
                if u and v:
                    u["completion_tokens"] = u.get("completion_tokens", 0) + v.get("completion_tokens", 0)
                    u["total_tokens"] = u.get("prompt_tokens", 0) + u["completion_tokens"]
        if not stream:
            await _respond(send, 200, json.dumps(merged, ensure_ascii=False).encode())


def _reindex_stream(body, index, last):
    out = []
    for event in body.split(b"\n\n"):
        if not event:
            continue
        data = event[6:] if event.startswith(b"data: ") else None
        if data is not None and data.strip() == b"[DONE]":
            if last:
                out.append(event)
            continue
        try:
            payload = json.loads(data) if data is not None else None
        except ValueError:
            payload = None
        if isinstance(payload, dict):
            if not payload.get("choices") and not last:
                continue  # one usage chunk, the last request's
            for choice in payload.get("choices") or []:
                choice["index"] = index
            event = b"data: " + json.dumps(payload, ensure_ascii=False).encode()
        out.append(event)
    return b"".join(e + b"\n\n" for e in out)


class _Capture:
    """An ASGI ``send`` that keeps the whole response."""

    def __init__(self):
        self.start, self.parts = None, []

    async def __call__(self, message):
        if message["type"] == "http.response.start":
            self.start = message
        elif message["type"] == "http.response.body":
            self.parts.append(message.get("body", b""))

    @property
    def status(self):
        return (self.start or {}).get("status", 500)

    @property
    def body(self):
        return b"".join(self.parts)

    async def replay(self, send):
        await send(self.start)
        await send({"type": "http.response.body", "body": self.body})


class _Rewriter:
    """An ASGI ``send`` that splits reasoning out of a chat completion: a JSON answer whole (its length
    changes), a stream event by event."""

    def __init__(self, send, first):
        self.send, self.first = send, first
        self.start, self.kind, self.parts, self.stream = None, None, [], None

    async def __call__(self, message):
        if message["type"] == "http.response.start":
            ctype = _header(message.get("headers", []), b"content-type")
            if message.get("status") != 200:
                self.kind = "pass"
            elif ctype.startswith(b"text/event-stream"):
                self.kind, self.stream = "sse", StreamSplitter(self.first)
            elif ctype.startswith(b"application/json"):
                self.kind = "json"
            else:
                self.kind = "pass"
            if self.kind == "json":
                self.start = message
                return None
            return await self.send(message)
        if message["type"] != "http.response.body" or self.kind == "pass":
            return await self.send(message)
        more = message.get("more_body", False)
        if self.kind == "sse":
            return await self.send(dict(message, body=self.stream.feed(message.get("body", b""), final=not more)))
        self.parts.append(message.get("body", b""))
        if more:
            return None
        raw = b"".join(self.parts)
        try:
            raw = json.dumps(split_json(json.loads(raw), self.first), ensure_ascii=False).encode()
        except (ValueError, AttributeError):
            pass
        headers = [(k, v) for k, v in self.start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(raw)).encode()))
        await self.send(dict(self.start, headers=headers))
        return await self.send({"type": "http.response.body", "body": raw})


# -- max_tokens that the prompt leaves no room for ------------------------------------------------------------


def fit_context(validate):
    """``OpenAIServing._validate_input`` where a request without ``max_tokens`` gets the cap, or what the prompt
    leaves of the context (max_model_len − prompt tokens) when that is less: the stock server serves such a
    prompt, so the cap never refuses one. An explicit ``max_tokens`` is the engine's to judge (its own 400
    above the context); a prompt that fills the context is still refused by ``validate``."""

    def muh_validate_input(self, request, input_ids, *args, **kwargs):
        try:
            room = int(self.max_model_len) - len(input_ids)
            if getattr(request, "max_tokens", 0) is None and room >= 1 and MAX_TOKENS_CAP:
                request.max_tokens = min(int(MAX_TOKENS_CAP), room)
                _once(
                    "fit",
                    "max_tokens absent: the cap %d, or the context the prompt leaves (max_model_len %d)",
                    MAX_TOKENS_CAP,
                    self.max_model_len,
                )
        except Exception as exc:  # noqa: BLE001 - the engine's own check decides then
            _once("fit-off", "max_tokens context fit skipped: %s: %s", type(exc).__name__, exc)
        return validate(self, request, input_ids, *args, **kwargs)

    muh_validate_input.__muh_rebind__ = "fit_context"
    return muh_validate_input


def install_fit_context():
    """With the cap on, fit ``max_tokens`` to the context (API server process; once; never raises)."""
    if not MAX_TOKENS_CAP:
        return False
    try:
        from vllm.entrypoints.openai.serving_engine import OpenAIServing

        validate = OpenAIServing.__dict__.get("_validate_input")
        if validate is None:
            _once("fit-off", "max_tokens context fit off: this engine's OpenAIServing has no _validate_input")
            return False
        if getattr(validate, "__muh_rebind__", None) != "fit_context":
            OpenAIServing._validate_input = fit_context(validate)
            _once("fit-on", "max_tokens absent: the cap, fitted to the context the prompt leaves")
        if not _fit:
            _fit.append(True)
        return True
    except Exception as exc:  # noqa: BLE001 - the cap alone stays on
        _once("fit-off", "max_tokens context fit off: %s: %s", type(exc).__name__, exc)
        return False


def wrap_build_app(build_app):
    def muh_build_app(*args, **kwargs):
        app = build_app(*args, **kwargs)
        install_fit_context()
        if any(getattr(m, "cls", None) is RequestCompat for m in getattr(app, "user_middleware", [])):
            logger.info("muh-api: request compatibility installed by --middleware")  # vLLM's own option did it
        else:
            app.add_middleware(RequestCompat)
            logger.info("muh-api: request compatibility on %s: %s", ", ".join(PATHS), ", ".join(FEATURES))
        return app

    muh_build_app.__muh_rebind__ = "api"
    return muh_build_app
