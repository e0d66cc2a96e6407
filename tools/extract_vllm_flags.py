#!/usr/bin/env python3
"""Extract the exact CLI surface of a pinned vLLM wheel into a committed JSON fixture.

Static only: the wheel is downloaded (or taken from the cache), the few ``.py`` files that define
the OpenAI server's arguments are read from the zip, and every ``parser.add_argument(...)`` call is
read from their syntax trees. Nothing of vLLM is imported or executed, so this runs on any machine
without a GPU, torch or vLLM's dependencies.

    python tools/extract_vllm_flags.py                      # vllm 0.6.3.post1 -> muh/engines/vllm/data/
    python tools/extract_vllm_flags.py --version 0.6.3.post1 --check   # CI: fixture is up to date

The wheel is cached under ``$MUH_CACHE_DIR`` (default ``~/.cache/muh``)/wheels.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "muh" / "engines" / "vllm" / "data"

ARG_FILES = ("vllm/entrypoints/openai/cli_args.py", "vllm/engine/arg_utils.py")
# Files whose module-level names the choices of some flags refer to.
NAME_FILES = (
    "vllm/config.py",
    "vllm/transformers_utils/config.py",
    "vllm/model_executor/layers/quantization/__init__.py",
)
TOOL_PARSER_DIR = "vllm/entrypoints/openai/tool_parsers/"
# Where the engine checks a flag's value (``if self.<dest> > 1.0: raise``): read for each option's range.
CHECK_FILES = ("vllm/config.py",)
# Values the engine uses as counts or fractions without checking them when it parses its arguments:
# (dest, lowest value, lowest excluded?, file, the source text there that shows why). The text must
# occur in the wheel (the fixture records its line), so a release that changes it fails the extraction.
USED_AS = (
    ("tensor_parallel_size", 1, False, "vllm/config.py", "% tensor_parallel_size"),
    (
        "pipeline_parallel_size",
        1,
        False,
        "vllm/config.py",
        "self.world_size = pipeline_parallel_size * self.tensor_parallel_size",
    ),
    ("max_num_seqs", 1, False, "vllm/config.py", "if self.max_num_batched_tokens < self.max_num_seqs:"),
    ("max_num_batched_tokens", 1, False, "vllm/config.py", "if self.max_num_batched_tokens < self.max_num_seqs:"),
    ("max_model_len", 1, False, "vllm/config.py", "max_model_len: Maximum length of a sequence"),
    (
        "max_seq_len_to_capture",
        1,
        False,
        "vllm/config.py",
        "self.max_seq_len_to_capture = min(self.max_seq_len_to_capture,",
    ),
    ("block_size", 1, False, "vllm/config.py", "self.block_size = block_size"),
    (
        "gpu_memory_utilization",
        0,
        True,
        "vllm/worker/worker.py",
        "total_gpu_memory * self.cache_config.gpu_memory_utilization",
    ),
)
INT64_MAX = 2**63 - 1  # an int flag lands in torch / C++ 64-bit integers
FLOAT_MAX = sys.float_info.max  # argparse's float() reads anything larger as inf
MOE_CONFIG_DIR = "vllm/model_executor/layers/fused_moe/configs/"


def wheel_path(version: str) -> Path:
    """The cached wheel of ``vllm==version``; downloads it with pip when missing."""
    sys.path.insert(0, str(ROOT))
    from muh.engines.vllm.wheel import fetch

    return fetch(version)


# -- static evaluation of the few expressions argparse calls use ----------------------------------


class Names:
    """Module-level constants (lists, dicts, str enums, dataclass defaults) from the wheel's sources."""

    def __init__(self, trees: dict[str, ast.Module]):
        self.values: dict[str, object] = {}
        self.enums: dict[str, list[str]] = {}
        self.class_defaults: dict[str, dict[str, object]] = {}
        for tree in trees.values():
            for node in tree.body:
                if isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        if isinstance(t, ast.Name) and node.value is not None:
                            ok, val = self.literal(node.value)
                            if ok:
                                self.values[t.id] = val
                elif isinstance(node, ast.ClassDef):
                    self._class(node)

    def _class(self, node: ast.ClassDef) -> None:
        fields: dict[str, object] = {}
        members: list[str] = []
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                ok, val = self.literal(stmt.value)
                if ok:
                    fields[stmt.target.id] = val
            elif (
                isinstance(stmt, ast.Assign)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                members.append(stmt.value.value)
        self.class_defaults[node.name] = fields
        if members:
            self.enums[node.name] = members

    def literal(self, node: ast.expr) -> tuple[bool, object]:
        """(True, value) when ``node`` evaluates statically, else (False, None)."""
        try:
            return True, ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, RecursionError):
            pass
        if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) for k in node.keys):
            return True, {k.value: None for k in node.keys}  # keys are what `in` and choices see
        if isinstance(node, ast.Name) and node.id in self.values:
            return True, self.values[node.id]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner = self.class_defaults.get(node.value.id, {})
            if node.attr in owner:
                return True, owner[node.attr]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.enums:
            return True, None  # an enum member used as a default: not needed
        if isinstance(node, ast.List):
            out: list[object] = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    ok, val = self.literal(elt.value)
                    if not ok:
                        return False, None
                    out.extend(list(val))  # type: ignore[arg-type]
                else:
                    ok, val = self.literal(elt)
                    if not ok:
                        return False, None
                    out.append(val)
            return True, out
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            gen = node.generators[0]
            # [f.value for f in SomeStrEnum]
            if (
                isinstance(gen.iter, ast.Name)
                and gen.iter.id in self.enums
                and isinstance(node.elt, ast.Attribute)
                and node.elt.attr == "value"
            ):
                return True, list(self.enums[gen.iter.id])
        return False, None


def _kw(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords if k.arg}


def _action_name(node: ast.expr | None) -> str:
    if node is None:
        return "store"
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.Name):
        return node.id
    return ast.unparse(node)


def _kind(action: str, nargs: object, const: object) -> str:
    """How a flag takes its value, in muh's words."""
    if action == "store_true":
        return "switch"
    if action == "StoreBoolean":
        return "optional_bool" if nargs == "?" else "bool"
    if nargs in ("+", "*"):
        return "list"
    if action == "append":
        return "append"
    return "value"


def extract_options(path: str, tree: ast.Module, names: Names) -> list[dict]:
    out: list[dict] = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
        ):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not flags or not all(f.startswith("-") for f in flags):
            continue
        kw = _kw(node)
        action = _action_name(kw.get("action"))
        nargs = names.literal(kw["nargs"])[1] if "nargs" in kw else None
        const = names.literal(kw["const"])[1] if "const" in kw else None
        choices = None
        choices_expr = None
        if "choices" in kw:
            ok, val = names.literal(kw["choices"])
            if ok:
                choices = [v for v in val]  # type: ignore[union-attr]
            else:
                choices_expr = ast.unparse(kw["choices"])
        default = None
        if "default" in kw:
            ok, val = names.literal(kw["default"])
            default = val if ok and isinstance(val, (str, int, float, bool, type(None))) else None
        type_name = None
        if "type" in kw:
            t = kw["type"]
            type_name = t.id if isinstance(t, ast.Name) else ast.unparse(t)
        longs = [f for f in flags if f.startswith("--")]
        dest = (longs[0] if longs else flags[0]).lstrip("-").replace("-", "_")
        entry = {
            "flags": flags,
            "dest": dest,
            "kind": _kind(action, nargs, const),
            "action": action,
            "nargs": nargs,
            "type": type_name,
            "choices": choices,
            "default": default,
            "where": f"{path}:{node.lineno}",
        }
        if const is not None:
            entry["const"] = const
        if choices_expr is not None:
            entry["choices_expr"] = choices_expr
        out.append(entry)
    return out


def extract_requires(path: str, tree: ast.Module) -> list[dict]:
    """``if args.a and not args.b: raise`` inside the serve-args validator: a needs b."""
    out: list[dict] = []
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("validate")):
            continue
        for node in ast.walk(fn):
            if not (
                isinstance(node, ast.If) and isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And)
            ):
                continue
            if not any(isinstance(s, ast.Raise) for s in node.body):
                continue
            vals = node.test.values
            if (
                len(vals) == 2
                and isinstance(vals[0], ast.Attribute)
                and isinstance(vals[1], ast.UnaryOp)
                and isinstance(vals[1].op, ast.Not)
                and isinstance(vals[1].operand, ast.Attribute)
            ):
                out.append({"if": vals[0].attr, "requires": vals[1].operand.attr, "where": f"{path}:{node.lineno}"})
    return out


def extract_tool_parsers(sources: dict[str, str]) -> list[str]:
    found: set[str] = set()
    for path, text in sources.items():
        for node in ast.walk(ast.parse(text, path)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "register_module"
                and node.args
            ):
                try:
                    val = ast.literal_eval(node.args[0])
                except ValueError:
                    continue
                found.update([val] if isinstance(val, str) else list(val))
    return sorted(found)


def extract_checks(path: str, tree: ast.Module) -> dict[str, dict]:
    """``if self.x > 1.0: raise …`` (and <, <=, >=) in a ``_verify_args``: the range the engine allows."""
    out: dict[str, dict] = {}
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("_verify")):
            continue
        for node in ast.walk(fn):
            if not (
                isinstance(node, ast.If)
                and isinstance(node.test, ast.Compare)
                and len(node.test.ops) == 1
                and any(isinstance(s, ast.Raise) for s in node.body)
            ):
                continue
            left, op, right = node.test.left, node.test.ops[0], node.test.comparators[0]
            if not (
                isinstance(left, ast.Attribute)
                and isinstance(left.value, ast.Name)
                and left.value.id == "self"
                and isinstance(right, ast.Constant)
                and isinstance(right.value, (int, float))
            ):
                continue
            r = out.setdefault(left.attr, {})
            where = f"{path}:{node.lineno}"
            if isinstance(op, (ast.Gt, ast.GtE)):  # refused above: the maximum
                r.update(max=right.value, max_open=isinstance(op, ast.GtE), max_where=where)
            elif isinstance(op, (ast.Lt, ast.LtE)):
                r.update(min=right.value, min_open=isinstance(op, ast.LtE), min_where=where)
    return out


def option_ranges(options: list[dict], sources: dict[str, str], trees: dict[str, ast.Module]) -> None:
    """Each numeric option's ``range``: the engine's own checks, the uses above, and the width of the
    number type it lands in."""
    checks: dict[str, dict] = {}
    for p in CHECK_FILES:
        checks.update(extract_checks(p, trees[p]))
    used: dict[str, dict] = {}
    for dest, lo, open_, path, text in USED_AS:
        src = sources[path]
        if text not in src:
            raise SystemExit(f"{path}: `{text}` (why {dest} is at least {lo}) is not in this wheel: review USED_AS")
        used[dest] = {"min": lo, "min_open": open_, "min_where": f"{path}:{src[: src.index(text)].count(chr(10)) + 1}"}
    for o in options:
        if o["type"] not in ("int", "float"):
            continue
        r = {
            "min": 0,
            "min_open": False,
            "min_where": "no numeric flag takes a negative value",
            "max": INT64_MAX if o["type"] == "int" else FLOAT_MAX,
            "max_open": False,
            "max_where": "64-bit integer" if o["type"] == "int" else "largest finite double",
        }
        r.update(used.get(o["dest"], {}))
        r.update(checks.get(o["dest"], {}))
        o["range"] = r
    missing = [d for d, *_ in USED_AS if not any(o["dest"] == d and "range" in o for o in options)]
    if missing:
        raise SystemExit(f"USED_AS names no numeric option of this wheel: {', '.join(missing)}")


def build_fixture(wheel: Path, version: str) -> dict:
    with zipfile.ZipFile(wheel) as z:
        members = z.namelist()
        read = lambda p: z.read(p).decode("utf-8")  # noqa: E731
        arg_sources = {p: read(p) for p in ARG_FILES}
        name_sources = {p: read(p) for p in NAME_FILES if p in members}
        use_sources = {p: read(p) for p in {*CHECK_FILES, *(u[3] for u in USED_AS)} if p in members}
        parser_sources = {p: read(p) for p in members if p.startswith(TOOL_PARSER_DIR) and p.endswith(".py")}
        moe_files = sorted(
            p[len(MOE_CONFIG_DIR) :] for p in members if p.startswith(MOE_CONFIG_DIR) and p.endswith(".json")
        )
    trees = {p: ast.parse(t, p) for p, t in {**name_sources, **arg_sources}.items()}
    names = Names(trees)
    options: list[dict] = []
    for p in ARG_FILES:
        options.extend(extract_options(p, trees[p], names))
    options.sort(
        key=lambda o: (
            o["flags"][-1] if o["flags"][0].startswith("-") and not o["flags"][0].startswith("--") else o["flags"][0]
        )
    )
    option_ranges(options, use_sources, {p: ast.parse(t, p) for p, t in use_sources.items()})
    requires = [r for p in ARG_FILES for r in extract_requires(p, trees[p])]
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    return {
        "engine": "vllm",
        "version": version,
        "entrypoint": "vllm.entrypoints.openai.api_server",
        "source": {
            "wheel": wheel.name,
            "sha256": digest,
            "files": {p: hashlib.sha256(t.encode()).hexdigest() for p, t in sorted(arg_sources.items())},
        },
        "underscore_to_dash": True,  # FlexibleArgumentParser rewrites --a_b to --a-b before parsing
        "abbreviations": True,  # argparse's allow_abbrev: a prefix parses, so muh insists on exact names
        "options": options,
        "requires": requires,
        "tool_call_parsers": extract_tool_parsers(parser_sources),
        "moe_config_files": moe_files,
    }


def render(fixture: dict) -> str:
    return json.dumps(fixture, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default="0.6.3.post1", help="vllm version (default: %(default)s)")
    ap.add_argument("--wheel", type=Path, help="use this wheel instead of the cache / pip download")
    ap.add_argument("--out", type=Path, help="output JSON (default: muh/engines/vllm/data/vllm-<version>.json)")
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed fixture differs")
    args = ap.parse_args(argv)
    wheel = args.wheel or wheel_path(args.version)
    out = args.out or DATA / f"vllm-{args.version}.json"
    text = render(build_fixture(wheel, args.version))
    if args.check:
        current = out.read_text() if out.exists() else ""
        if current != text:
            print(
                f"{out} is out of date; run: python tools/extract_vllm_flags.py --version {args.version}",
                file=sys.stderr,
            )
            return 1
        print(f"{out}: up to date")
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    fx = json.loads(text)
    print(
        f"wrote {out}: {sum(len(o['flags']) for o in fx['options'])} option strings, "
        f"{len(fx['tool_call_parsers'])} tool-call parsers, {len(fx['moe_config_files'])} MoE config files"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
