#!/usr/bin/env python3
"""What the serving engine in this image really is, without model weights and without CUDA.

    python3 engine_probe.py [--hardware HW.json] [--model DIR] [-o OUT.json]

Reports the engine's version and variant markers, which of muh's tuning anchors exist (each must occur
exactly once), whether triton imports, the signatures of the functions muh's plugin may rebind, which
vendor-library functions are present, the model class the served config maps to and the MoE config file
name vLLM would look for. This process imports neither torch nor vllm: everything that must import them
runs in a child process with a time limit, so no CUDA context is ever created in a process vLLM uses.
With --hardware, the hardware probe's document is extended with an "engine" part (run.sh does this).
Standard library only (Python 3.8+). What it asks about the engine is data: engine_probe.json beside it (written by
muh's probe bundle from the spec and the engine plug-in), or --data FILE. This file is copied into the bundle as it is.
"""

import argparse
import ast
import importlib.util
import json
import os
import re
import subprocess
import sys

DATA_FILE = "engine_probe.json"  # beside this file
DATA = {}  # what to ask: read by main() from DATA_FILE (or --data)
CHILD_TIMEOUT_S = 120  # each child interpreter's limit (importing torch or vllm)


def load_data(path=None):
    """The probe's data: ``path``, else engine_probe.json beside this file."""
    path = path or os.path.join(os.path.dirname(os.path.abspath(__file__)), DATA_FILE)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def child(code):
    """Run ``code`` in a fresh interpreter; (json value or None, error text or None)."""
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % CHILD_TIMEOUT_S
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("MUH:")]
    if p.returncode != 0 or not lines:
        err = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return None, err[:300]
    return json.loads(lines[-1][4:]), None


def site_root():
    spec = importlib.util.find_spec(DATA["engine"])  # a top-level package: found, not imported
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.dirname(list(spec.submodule_search_locations)[0])


def read(root, rel):
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def engine_version(root):
    try:
        from importlib import metadata

        return metadata.version(DATA["engine"]), "importlib.metadata"
    except Exception:  # noqa: BLE001 - any failure means "not from metadata"
        pass
    for rel in ("%s/version.py" % DATA["engine"], "%s/_version.py" % DATA["engine"]):
        text = read(root, rel) or ""
        m = re.search(r"""^__version__\s*=\s*(?:\w+\s*=\s*)*["']([^"']+)""", text, re.M)
        if m:
            return m.group(1), rel
    return None, "no version found"


def markers(root):
    out = {}
    for m in DATA["markers"]:
        path = os.path.join(root, m["path"])
        entry = {"what": m["what"], "exists": os.path.exists(path)}
        if entry["exists"] and os.path.isfile(path):
            entry["bytes"] = os.path.getsize(path)
            if m.get("contains"):
                entry["contains"] = m["contains"] in (read(root, m["path"]) or "")
        out[m["path"]] = entry
    for p in DATA["absolute_markers"]:
        out[p["path"]] = {"what": p["what"], "exists": os.path.exists(p["path"])}
    return out


def anchors(root):
    out = []
    for a in DATA["anchors"]:
        text = read(root, a["file"])
        n = None if text is None else ("\n" + text).count("\n" + a["anchor"])
        out.append(
            {
                "id": a["id"],
                "file": a["file"],
                "pinned_line": a["line"],
                "file_exists": text is not None,
                "occurrences": n,
                "ok": n == 1,
            }
        )
    return out


def signature_of(root, module, attr):
    rel = module.replace(".", "/")
    text, path = None, None
    for cand in (rel + ".py", rel + "/__init__.py"):
        text = read(root, cand)
        if text is not None:
            path = cand
            break
    if text is None:
        return {"module": module, "attr": attr, "found": False, "why": "no source file for %s" % module}
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return {"module": module, "attr": attr, "found": False, "why": "source does not parse: %s" % e}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == attr:
            sig = "(%s)" % ast.unparse(node.args) if hasattr(ast, "unparse") else None
            if sig and node.returns is not None:
                sig += " -> " + ast.unparse(node.returns)
            return {
                "module": module,
                "attr": attr,
                "found": True,
                "where": "%s:%d" % (path, node.lineno),
                "signature": sig,
            }
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in node.targets):
            return {
                "module": module,
                "attr": attr,
                "found": True,
                "where": "%s:%d" % (path, node.lineno),
                "signature": None,
                "note": "assigned, not defined: %s" % (ast.unparse(node.value) if hasattr(ast, "unparse") else "?"),
            }
    return {"module": module, "attr": attr, "found": False, "why": "%s defines no `%s` at module level" % (path, attr)}


def vendor_functions():
    out = {}
    for module, names in sorted(DATA["vendor_functions"].items()):
        top = module.split(".")[0]
        if importlib.util.find_spec(top) is None:
            out[module] = {"importable": False, "why": "%s is not installed" % top}
            continue
        code = (
            "import json, importlib\nm = importlib.import_module(%r)\n"
            "print('MUH:' + json.dumps({n: hasattr(m, n) for n in %r}))" % (module, names)
        )
        got, err = child(code)
        if got is None:
            out[module] = {"importable": False, "why": err}
        else:
            out[module] = {
                "importable": True,
                "present": sorted(n for n, v in got.items() if v),
                "missing": sorted(n for n, v in got.items() if not v),
            }
    return out


def triton():
    if importlib.util.find_spec("triton") is None:
        return {"imports": False, "why": "triton is not installed"}
    got, err = child("import json, triton\nprint('MUH:' + json.dumps(getattr(triton, '__version__', None)))")
    return {"imports": err is None, "version": got} if err is None else {"imports": False, "why": err}


def model_config(model):
    path = os.path.join(model, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        return None, "cannot read %s: %s" % (path, e)
    return cfg, None


def moe_numbers(cfg):
    """(experts, intermediate size) from the model config (top level or text_config)."""
    for c in (cfg, cfg.get("text_config") or {}):
        e = c.get("num_experts") or c.get("num_local_experts") or c.get("n_routed_experts")
        i = c.get("moe_intermediate_size")
        if e and i:
            return int(e), int(i)
    return None, None


def model_class(root, archs):
    out = {"architectures": archs}
    rel = "%s/model_executor/models/registry.py" % DATA["engine"]
    text = read(root, rel) or read(root, "%s/model_executor/models/__init__.py" % DATA["engine"]) or ""
    static = {}
    for a in archs:
        m = re.search(r'"%s"\s*:\s*\(\s*"([^"]+)"\s*,\s*"([^"]+)"' % re.escape(a), text)
        static[a] = "%s.%s" % m.groups() if m else None
    out["registry_entry"] = static
    code = (
        "import json\nfrom vllm.model_executor.models import ModelRegistry\n"
        "cls, arch = ModelRegistry.resolve_model_cls(%r)\n"
        "print('MUH:' + json.dumps([cls.__module__ + '.' + cls.__qualname__, arch]))" % (archs,)
    )
    got, err = child(code)
    out["resolved"] = {"class": got[0], "arch": got[1]} if got else None
    if err:
        out["resolve_error"] = err
    return out


def moe_file(root, cfg, device_name):
    out = {}
    experts, inter = moe_numbers(cfg) if cfg else (None, None)
    tp = DATA["tensor_parallel_size"]
    if not experts:
        out["why"] = "the model config names no experts / moe_intermediate_size"
        return out
    n = inter // tp
    out.update(E=experts, N=n, tensor_parallel_size=tp, device_name=device_name)
    if device_name:
        out["file_by_rule"] = DATA["moe_file_pattern"].format(
            E=experts, N=n, device=device_name.replace(" ", "_"), dtype=""
        )
    code = (
        "import json\nfrom vllm.model_executor.layers.fused_moe import fused_moe as f\nimport os\n"
        "name = f.get_config_file_name(%d, %d, None)\n"
        "path = os.path.join(os.path.dirname(os.path.realpath(f.__file__)), 'configs', name)\n"
        "print('MUH:' + json.dumps([name, os.path.exists(path)]))" % (experts, n)
    )
    got, err = child(code)
    if got:
        out["file_by_engine"], out["engine_ships_it"] = got
    else:
        out["engine_error"] = err
    out["muh_ships"] = DATA["muh_moe_file"]
    seen = out.get("file_by_engine") or out.get("file_by_rule")
    out["muh_file_matches"] = None if not (seen and DATA["muh_moe_file"]) else seen == DATA["muh_moe_file"]
    return out


def main(argv=None):
    global DATA
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hardware", help="the hardware probe's JSON: extended with an 'engine' part")
    ap.add_argument("--model", help="model folder with config.json (default: the data's model)")
    ap.add_argument("--data", help="what to ask (default: %s beside this file)" % DATA_FILE)
    ap.add_argument("-o", "--out", help="write here (default: stdout)")
    args = ap.parse_args(argv)
    DATA = load_data(args.data)
    args.model = args.model or DATA["model"]
    doc, device_name = None, None
    if args.hardware:
        with open(args.hardware, encoding="utf-8") as f:
            doc = json.load(f)
        hw = doc.get("hardware", {})
        device_name = (hw.get("device_name_nvml") or {}).get("value") or (hw.get("device_name") or {}).get("value")
    root = site_root()
    rep = {
        "spec": DATA["spec"],
        "pinned": "%s %s" % (DATA["engine"], DATA["version"]),
        "python": sys.version.split()[0],
    }
    if root is None:
        rep["installed"] = False
        rep["why"] = "%s is not importable by %s" % (DATA["engine"], sys.executable)
    else:
        rep["installed"] = True
        rep["site_packages"] = root
        rep["version"], rep["version_from"] = engine_version(root)
        rep["markers"] = markers(root)
        rep["anchors"] = anchors(root)
        rep["signatures"] = {
            name: signature_of(root, mod, attr) for name, (mod, attr) in sorted(DATA["rebinds"].items())
        }
    rep["triton"] = triton()
    rep["vendor_functions"] = vendor_functions()
    cfg, err = model_config(args.model)
    rep["model"] = {"path": args.model, "config": err or "read"}
    if cfg is not None and root is not None:
        rep["model"]["class"] = model_class(root, list(cfg.get("architectures") or []))
        rep["moe_config"] = moe_file(root, cfg, device_name)
    if doc is not None:
        doc["engine"] = rep
        out = doc
    else:
        out = rep
    text = json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, args.out)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
