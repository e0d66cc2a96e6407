"""The card decides which muh ops run: a bounded self-test before the server starts.

    timeout 40 python3 -m muh_kernels.selftest --out /opt/muh/run/selftest.json

Runs every op the vLLM plugin would rebind or provide (the cases file, written by muh from the deploy
plan: ``selftest_cases.json`` beside this module) on the real device, at the served shapes and dtypes:

* correctness against a float64 torch reference (``max error`` ≤ the dtype's tolerance);
* speed against the engine's own function there (``engine`` of the case: ``module:attr`` of the
  stock op, or ``torch``: the PyTorch path the engine runs instead), median of ``--calls`` timed calls
  of each, in the same process, the device synchronised around every call.

An op is **selected** when every case of it is correct and muh's median is below the engine's at every
shape. The result file (JSON, written atomically) lists ``selected`` and every row; the plugin rebinds
or provides only selected ops (a missing or unreadable file selects nothing).

Isolation: this process never touches the device. Each batch of cases runs in a child process that
reports one JSON line per case; when the child dies (a device fault, ``abort``, a segfault) the case
it was running is ``fault`` and a new child goes on with the next one, so a faulting kernel
disqualifies only its own op. The whole run keeps within ``--budget`` seconds (default 30): what did
not run by then is ``not run`` (never selected). The table goes to stdout (the server's log).

Standard library at the top; torch is imported by the child only. ``--impl MODULE`` replaces muh's
kernels by another module with the same functions (tests: a kernel that returns wrong numbers, one
that aborts), ``--device cpu`` runs on the CPU.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time

DEFAULT_OUT = "/opt/muh/run/selftest.json"
ENV_RESULT = "MUH_SELFTEST_RESULT"
"""The plugin reads the result from this path (default ``DEFAULT_OUT``)."""
CASES_FILE = "selftest_cases.json"
BUDGET_S = 30.0
CALLS = 200
TOLERANCE = {"float16": 1e-2, "bfloat16": 6e-2, "float32": 1e-4}
"""Max error allowed, relative to max(1, largest reference magnitude) (``topk_softmax``: absolute, on
probabilities)."""
VERSION = 1


# ---- the ops: inputs, float64 reference, muh's call, the engine's call --------------------------------


def _inputs(torch, op, shape, dtype, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)

    def rnd(*s, scale=1.0, dt=dtype):
        return (torch.randn(*s, generator=g, dtype=torch.float64) * scale).to(dt).to(device)

    if op in ("rms_norm", "fused_add_rms_norm", "gemma_rms_norm"):
        hidden = shape[-1]
        return {
            "x": rnd(*shape),
            "residual": rnd(*shape),
            "weight": rnd(hidden, scale=0.1) + (0 if op == "gemma_rms_norm" else 1),
            "eps": 1e-6,
        }
    if op == "silu_and_mul":
        return {"x": rnd(*shape)}
    if op == "topk_softmax":
        tokens, experts, k = shape
        return {"gating": rnd(tokens, experts, scale=2.0), "k": k}
    raise KeyError(op)


def _reference(torch, op, a):
    f = torch.float64
    if op in ("rms_norm", "fused_add_rms_norm", "gemma_rms_norm"):
        x = a["x"].to(f)
        if op == "fused_add_rms_norm":
            x = x + a["residual"].to(f)
        w = a["weight"].to(f) + (1 if op == "gemma_rms_norm" else 0)
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + a["eps"]) * w
        return (y, x) if op == "fused_add_rms_norm" else y
    if op == "silu_and_mul":
        x = a["x"].to(f)
        d = x.shape[-1] // 2
        return torch.nn.functional.silu(x[..., :d]) * x[..., d:]
    if op == "topk_softmax":
        return torch.softmax(a["gating"].to(f), dim=-1)
    raise KeyError(op)


def _call_muh(torch, impl, op, a):
    """muh's op on fresh outputs (in-place ops on copies); returns what is compared."""
    if op == "rms_norm":
        out = torch.empty_like(a["x"])
        impl.rms_norm(out, a["x"], a["weight"], a["eps"])
        return out
    if op == "fused_add_rms_norm":
        x, r = a["x"].clone(), a["residual"].clone()
        impl.fused_add_rms_norm(x, r, a["weight"], a["eps"])
        return x, r
    if op == "gemma_rms_norm":
        return impl.gemma_rms_norm(a["x"], a["weight"], a["eps"])
    if op == "silu_and_mul":
        x = a["x"]
        out = torch.empty(*x.shape[:-1], x.shape[-1] // 2, dtype=x.dtype, device=x.device)
        impl.silu_and_mul(out, x)
        return out
    if op == "topk_softmax":
        tokens, k = a["gating"].shape[0], a["k"]
        w = torch.empty(tokens, k, dtype=torch.float32, device=a["gating"].device)
        ids = torch.empty(tokens, k, dtype=torch.int32, device=w.device)
        src = torch.empty(tokens, k, dtype=torch.int32, device=w.device)
        impl.topk_softmax(w, ids, src, a["gating"])
        return w, ids
    raise KeyError(op)


def _torch_path(torch, op, a):
    """The PyTorch formula an engine runs where it has no kernel (vLLM's forward_native / fused_topk)."""
    if op in ("rms_norm", "fused_add_rms_norm", "gemma_rms_norm"):
        x = a["x"].float() + (a["residual"].float() if op == "fused_add_rms_norm" else 0)
        w = a["weight"].float() + (1 if op == "gemma_rms_norm" else 0)
        return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + a["eps"]) * w).to(a["x"].dtype)
    if op == "silu_and_mul":
        d = a["x"].shape[-1] // 2
        return torch.nn.functional.silu(a["x"][..., :d]) * a["x"][..., d:]
    if op == "topk_softmax":
        return torch.softmax(a["gating"], dim=-1, dtype=torch.float32).topk(a["k"], dim=-1)
    raise KeyError(op)


def _engine_call(torch, case, a):
    """A zero-argument callable running the engine's own function for this case."""
    engine, op = case.get("engine", "torch"), case["op"]
    if engine == "torch":
        return lambda: _torch_path(torch, op, a)
    module, _, attr = engine.partition(":")
    fn = importlib.import_module(module)
    for part in attr.split("."):
        fn = getattr(fn, part)
    if op == "gemma_rms_norm":
        return lambda: fn(a["x"], a["weight"], a["eps"])
    args = _muh_args(torch, op, a)
    return lambda: fn(*args)


def _muh_args(torch, op, a):
    x = a.get("x")
    if op == "rms_norm":
        return (torch.empty_like(x), x, a["weight"], a["eps"])
    if op == "fused_add_rms_norm":
        return (x.clone(), a["residual"].clone(), a["weight"], a["eps"])
    if op == "silu_and_mul":
        return (torch.empty(*x.shape[:-1], x.shape[-1] // 2, dtype=x.dtype, device=x.device), x)
    if op == "topk_softmax":
        t, k = a["gating"].shape[0], a["k"]
        dev = a["gating"].device
        return (
            torch.empty(t, k, dtype=torch.float32, device=dev),
            torch.empty(t, k, dtype=torch.int32, device=dev),
            torch.empty(t, k, dtype=torch.int32, device=dev),
            a["gating"],
        )
    raise KeyError(op)


def _error(torch, op, got, ref, dtype):
    """Max error of muh's result against the float64 reference (scaled as TOLERANCE says)."""
    if op == "topk_softmax":
        w, ids = got
        k = w.shape[-1]
        want = ref.topk(k, dim=-1).values
        picked = ref.gather(-1, ids.long().clamp(0, ref.shape[-1] - 1))
        bad_ids = bool(((ids < 0) | (ids >= ref.shape[-1])).any())
        err = max(
            (w.double().sort(-1, descending=True).values - want).abs().max().item(),
            (picked - w.double()).abs().max().item(),
        )
        return float("inf") if bad_ids else err
    pairs = list(zip(got, ref)) if isinstance(ref, tuple) else [(got, ref)]
    err = 0.0
    for g, r in pairs:
        scale = max(1.0, r.abs().max().item())
        e = (g.double() - r).abs().max().item() / scale
        err = max(err, e if e == e else float("inf"))  # NaN is wrong
    return err


def _median_us(torch, fn, calls, device):
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    fn()
    sync()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e6


class _MuhImpl:
    """muh's kernels: the runtime's ops (``llm``) and the gemma norm through muh's torch operators."""

    def __init__(self):
        from . import llm

        pkg = importlib.import_module(__package__) if __package__ else None
        path = getattr(pkg, "library_path", None)
        llm.load(path() if callable(path) else None)
        self.llm = llm
        self.rms_norm, self.fused_add_rms_norm = llm.rms_norm, llm.fused_add_rms_norm
        self.silu_and_mul, self.topk_softmax = llm.silu_and_mul, llm.topk_softmax
        self._ops = None

    def gemma_rms_norm(self, x, weight, eps):
        if self._ops is None:
            import torch

            from . import operators

            if operators.loaded() is None:
                operators.load(self.llm.library().origin, backend="ctypes")
            self._ops = torch.ops.muh
        return self._ops.gemma_rms_norm(x, weight, eps)


def run_case(torch, impl, case, device, calls):
    """One row: the case measured (raises what the op raises; a fault kills the process)."""
    dtype = getattr(torch, case["dtype"])
    a = _inputs(torch, case["op"], case["shape"], dtype, device, seed=len(case["op"]) * 1000 + sum(case["shape"]))
    ref = _reference(torch, case["op"], a)
    got = _call_muh(torch, impl, case["op"], a)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    err = _error(torch, case["op"], got, ref, case["dtype"])
    tol = TOLERANCE.get(case["dtype"], 1e-2)
    row = {
        "op": case["op"],
        "shape": list(case["shape"]),
        "dtype": case["dtype"],
        "max_error": err,
        "tolerance": tol,
        "engine": case.get("engine", "torch"),
    }
    if not err <= tol:
        return dict(row, verdict="wrong")
    muh_args = _muh_args(torch, case["op"], a) if case["op"] != "gemma_rms_norm" else None
    fn = getattr(impl, case["op"])
    muh = (lambda: fn(*muh_args)) if muh_args is not None else (lambda: fn(a["x"], a["weight"], a["eps"]))
    try:
        engine = _engine_call(torch, case, a)
        engine_us = _median_us(torch, engine, calls, device)
    except Exception as exc:  # noqa: BLE001 - the engine's function cannot run here: its torch path is the baseline
        row["engine"] = "torch (%s: %s)" % (type(exc).__name__, str(exc)[:80])
        engine_us = _median_us(torch, lambda: _torch_path(torch, case["op"], a), calls, device)
    muh_us = _median_us(torch, muh, calls, device)
    return dict(row, muh_us=muh_us, engine_us=engine_us, verdict="faster" if muh_us < engine_us else "slower")


def child(cases, first, impl_name, device, calls):
    """Runs cases[first:], one JSON line per case (``start`` before it, ``row`` after)."""
    import torch

    impl = importlib.import_module(impl_name) if impl_name else _MuhImpl()
    for i in range(first, len(cases)):
        print(json.dumps({"start": i}), flush=True)
        try:
            row = run_case(torch, impl, cases[i], device, calls)
        except Exception as exc:  # noqa: BLE001 - an op that raises is not correct
            row = {
                "op": cases[i]["op"],
                "shape": cases[i]["shape"],
                "dtype": cases[i]["dtype"],
                "verdict": "error",
                "detail": "%s: %s" % (type(exc).__name__, str(exc)[:200]),
            }
        print(json.dumps({"row": row, "index": i}), flush=True)


def select(cases, rows):
    """The ops whose every case ran, was correct and faster."""
    ops = sorted({c["op"] for c in cases})
    return [
        op
        for op in ops
        if all(r is not None and r.get("verdict") == "faster" for c, r in zip(cases, rows) if c["op"] == op)
    ]


def run(cases, out, budget=BUDGET_S, impl=None, device="cuda", calls=CALLS, python=sys.executable):
    """The parent: children over the cases within ``budget`` seconds; writes ``out``; returns the result."""
    start = time.monotonic()
    rows = [None] * len(cases)
    first = 0
    module = __spec__.name if __spec__ is not None else "selftest"
    while first < len(cases):
        left = budget - (time.monotonic() - start)
        if left <= 0:
            break
        cmd = [
            python,
            "-m",
            module,
            "--child",
            str(first),
            "--cases-json",
            json.dumps(cases),
            "--device",
            device,
            "--calls",
            str(calls),
        ] + (["--impl", impl] if impl else [])
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            stdout, stderr = proc.communicate(timeout=left)
            status = "exit %s" % proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            status = "budget of %.0f s spent" % budget
        current = None
        for line in stdout.splitlines():
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict) and "start" in msg:
                current = msg["start"]
            elif isinstance(msg, dict) and "row" in msg:
                rows[msg["index"]] = msg["row"]
                current = None
        if current is None:
            if proc.returncode == 0:
                break
            current = first  # died before its first case: it is that case's
        c = cases[current]
        tail = (stderr or "").strip().splitlines()[-1:] or [""]
        rows[current] = {
            "op": c["op"],
            "shape": c["shape"],
            "dtype": c["dtype"],
            "verdict": "timeout" if "budget" in status else "fault",
            "detail": ("%s; %s" % (status, tail[0][:200])).strip("; "),
        }
        first = current + 1
    for i, c in enumerate(cases):
        if rows[i] is None:
            rows[i] = {"op": c["op"], "shape": c["shape"], "dtype": c["dtype"], "verdict": "not run"}
    result = {
        "version": VERSION,
        "selected": select(cases, rows),
        "rows": rows,
        "budget_s": budget,
        "elapsed_s": round(time.monotonic() - start, 3),
        "device": device,
    }
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        tmp = "%s.tmp%d" % (out, os.getpid())
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, sort_keys=True)
        os.replace(tmp, out)
    return result


def table(result):
    """op | shape | dtype | max error | muh µs | engine µs | verdict, one line each."""

    def num(v, fmt):
        return fmt % v if isinstance(v, (int, float)) else "-"

    lines = [
        "[muh] self-test (%s, %.1f s): selected [%s]"
        % (result.get("device"), result.get("elapsed_s", 0), ", ".join(result["selected"])),
        "[muh] op | shape | dtype | max error | muh us | engine us | verdict",
    ]
    for r in result["rows"]:
        lines.append(
            "[muh] %s | %s | %s | %s | %s | %s | %s%s"
            % (
                r["op"],
                "x".join(map(str, r["shape"])),
                r["dtype"],
                num(r.get("max_error"), "%.2e"),
                num(r.get("muh_us"), "%.1f"),
                num(r.get("engine_us"), "%.1f"),
                r["verdict"],
                " (%s)" % r["detail"] if r.get("detail") else "",
            )
        )
    return "\n".join(lines)


def load_cases(path):
    """(cases, budget in seconds) of a cases file."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    cases = data["cases"] if isinstance(data, dict) else data
    budget = float(data.get("budget_s", BUDGET_S)) if isinstance(data, dict) else BUDGET_S
    for c in cases:
        if not (
            isinstance(c, dict)
            and isinstance(c.get("op"), str)
            and isinstance(c.get("shape"), list)
            and isinstance(c.get("dtype"), str)
        ):
            raise ValueError("a case needs op, shape (a list) and dtype: %r" % (c,))
    return cases, budget


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m muh_kernels.selftest", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.environ.get(ENV_RESULT, DEFAULT_OUT))
    p.add_argument("--cases", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), CASES_FILE))
    p.add_argument("--budget", type=float, default=None, help="seconds (default: the cases file's budget_s, else 30)")
    p.add_argument("--calls", type=int, default=CALLS)
    p.add_argument("--device", default="cuda")
    p.add_argument("--impl", default=None)
    p.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--cases-json", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child is not None:
        child(json.loads(a.cases_json), a.child, a.impl, a.device, a.calls)
        return 0
    try:
        cases, budget = load_cases(a.cases)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print("[muh] self-test not run: cases %s: %s; no muh op will be rebound" % (a.cases, exc), flush=True)
        return 1
    result = run(cases, a.out, budget=a.budget or budget, impl=a.impl, device=a.device, calls=a.calls)
    print(table(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
