"""Render the kernel files of one KernelConfig. Codegen only renders: every number comes from the
family records (muh/families/), each with its rule, printed into include/muh/kernels/params.cuh."""

from __future__ import annotations

from typing import Callable

from muh import families
from muh.codegen.templates import render, render_from
from muh.families.base import KernelConfig, KernelConfigError, max_threads, param, wrap
from muh.families.registry import validate
from muh.runtime import dtypes as DT

PKG = "muh.codegen.kernels"

# (output path, template or static source, comment prefix): the files every build has (a static source, no
# .j2, is muh/codegen/kernels/<file> copied as it is after the header); each family adds its source
# (kernels/<name>.cu from <name>.cu.j2) and its static headers (include/muh/kernels/<file>, or
# include/muh/<file> for ``headers``), all from its folder muh/families/<name>/.
COMMON_FILES = (
    ("include/muh/warp.cuh", "warp.cuh.j2", "//"),
    ("include/muh/block.cuh", "block.cuh.j2", "//"),
    ("include/muh/types.cuh", "types.cuh", "//"),
    ("include/muh/host.cuh", "host.cuh", "//"),
    ("include/muh/linkage.cuh", "linkage.cuh", "//"),
    ("include/muh/kernels/params.cuh", "params.cuh.j2", "//"),
    ("include/muh/kernels/api.h", "api.h.j2", "//"),
    ("kernels/common.cu", "common.cu.j2", "//"),
)
BINDINGS = ("kernels/bindings/torch_ops.cpp", "torch_ops.cpp.j2", "//")
WARP_LAYER = "include/muh/warp.cuh"


def files() -> tuple[tuple[str, str, str], ...]:
    """Every generated file: (output path, template or static source, comment prefix); a family's
    sources as ``<family>:<file>`` (its folder, muh/families/<family>/)."""
    fam = []
    for rec in families.records():
        fam += [(f"include/muh/{s}", f"{rec.name}:{s}", "//") for s in rec.headers]
        fam += [(f"include/muh/kernels/{s}", f"{rec.name}:{s}", "//") for s in rec.static]
        fam.append((rec.source, f"{rec.name}:{rec.template}", "//"))
    return COMMON_FILES + tuple(fam) + (BINDINGS,)


def _log2(n: int) -> int:
    return n.bit_length() - 1


def warp_vars(cfg: KernelConfig) -> dict:
    w, p = cfg.warp_size, cfg.physical
    mode = "native" if w == p else ("subwarp" if w < p else "emulated")
    wide = w > 32
    return {
        "logical": w,
        "physical": p,
        "log2_logical": _log2(w),
        "mode": mode,
        "parts": max(1, w // p),
        "has_ballot": w <= 64,
        "mask_type": "unsigned long long" if wide else "unsigned",
        "intrinsic_ballot": mode == "native" and w == 32,
        # match_any's per-bit vote as inline PTX (vote.sync.ballot, sm_70+): a 32-lane hardware warp on NVIDIA
        "ptx_match": mode == "native" and w == 32 and bool(cfg.has_ptx_memory_model),
        "width_arg": f", {w}" if mode == "subwarp" else "",
        "ffs": "__ffsll" if wide else "__ffs",
        "popc": "__popcll" if wide else "__popc",
        "xchg_slots": max_threads(cfg),
    }


def _args(fn, torch: bool) -> list[dict]:
    """The C interface's arguments as the torch binding passes them (pointers as int64 addresses)."""
    out = []
    for t, n in fn.args:
        if t.endswith("*"):
            out.append(
                {
                    "t": "int64_t",
                    "n": n,
                    "call": f"static_cast<{t}>(ptr({n}))" if t not in ("void*", "const void*") else f"ptr({n})",
                }
            )
        elif t in ("size_t", "unsigned"):
            out.append({"t": "int64_t", "n": n, "call": f"static_cast<{t}>({n})"})
        elif t == "float":
            out.append({"t": "double", "n": n, "call": f"static_cast<float>({n})"})
        elif t == "long long":
            out.append({"t": "int64_t", "n": n, "call": n})
        else:
            out.append({"t": t, "n": n, "call": n})
    return out


def _binding(fn) -> str:
    """The torch binding's m.def of one C function (pointers travel as int64 addresses)."""
    args = _args(fn, True)
    ret = {"const char*": "std::string", "size_t": "int64_t"}.get(fn.ret)
    if not fn.args and ret is None:
        return f'  m.def("{fn.name}", &{fn.name});'
    call = wrap(f"{fn.name}(", [a["call"] for a in args] or [""], ")", width=200)
    body = f"std::string({call})" if ret == "std::string" else (f"static_cast<int64_t>({call})" if ret else call)
    one = f'  m.def("{fn.name}", []({", ".join(a["t"] + " " + a["n"] for a in args)}) {{ return {body}; }});'
    if len(one) <= 120:
        return one
    head = wrap(f'  m.def("{fn.name}", [](', [f"{a['t']} {a['n']}" for a in args], ") {")
    ret_line = wrap(
        "    return " + (f"static_cast<int64_t>({fn.name}(" if ret == "int64_t" else f"{fn.name}("),
        [a["call"] for a in args],
        "));" if ret == "int64_t" else ");",
    )
    return f"{head}\n{ret_line}\n  }});"


def _param_line(p) -> str:
    """``constexpr int kX = v;  // rule (inputs)``; the comment above it when the line would pass 120."""
    import textwrap

    decl = f"constexpr int {p.cname} = {p.value};"
    one = f"{decl}  // {p.why()}"
    if len(one) <= 120:
        return one
    return "\n".join(textwrap.wrap(p.why(), 117, initial_indent="// ", subsequent_indent="//   ")) + "\n" + decl


def api_vars() -> list[dict]:
    return [{"name": fn.name, "decl": fn.decl(), "doc": fn.doc, "binding": _binding(fn)} for fn in families.api()]


def template_vars(cfg: KernelConfig) -> dict:
    fams, params = {}, []
    for rec in families.records():
        rows = []
        for d, p in sorted(cfg.of(rec.name).items()):
            ps = rec.params(cfg, d, p)
            buckets = []
            key = cfg.bucket_key(rec.name, d)
            for i, (lo, hi, bp) in enumerate(cfg.buckets_of(rec.name, d)):
                ns = f"{rec.name}_{d}" + (f"_b{i}" if i else "")
                size = f"{key} {lo}..{'' if hi is None else hi - 1}"
                bps = rec.params(cfg, d, bp)
                # members: the bucket's numbers by name, what templates/buckets.j2 makes its Policy<T, B> of
                buckets.append(
                    {
                        "index": i,
                        "ns": ns,
                        "lo": lo,
                        "hi": hi,
                        "size": size,
                        "key": key,
                        "members": [x.cname for x in bps],
                    }
                )
                params.append(
                    {
                        "ns": ns,
                        "lines": [_param_line(x) for x in bps],
                        "doc": f"size bucket {i}: {size}" if hi is not None or i else None,
                    }
                )
            rows.append({"dtype": d, "cxx": DT.TABLE[d].cxx, "buckets": buckets, **{x.cname: x.value for x in ps}})
        fams[rec.name] = rows
    hw = [
        param("kSmemPerBlock", cfg.smem_per_block, "hardware smem_per_block"),
        param("kSmemBanks", cfg.smem_banks, "shared-memory banks (32 on every CUDA-class GPU)"),
    ]
    for rec in families.records():
        hw += rec.globals(cfg)
    extra = {}
    for rec in families.records():
        extra.update(rec.template_vars(cfg))
    return {
        "spec_name": cfg.name,
        "all_dtypes": [{"name": d.name, "code": d.code} for d in DT.by_code()],
        "api": api_vars(),
        "enums": [{"family": r.name, "ops": list(r.operators.items())} for r in families.records() if r.operators],
        **fams,
        **extra,
        "params": params,
        "globals": [_param_line(x) for x in hw],
        "has_nanosleep": int(cfg.has_nanosleep),
        "has_ptx_memory_model": int(cfg.has_ptx_memory_model),
        "has_bulk_copy": int(cfg.has_bulk_copy),
        **warp_vars(cfg),
    }


def default_header(cfg: KernelConfig) -> Callable[[str], str]:
    import muh

    def header(prefix: str) -> str:
        return (
            f"{prefix} @generated by muh {muh.__version__} from kernel config {cfg.name} "
            f"(sha256 {cfg.digest()[:12]}) — do not edit"
        )

    return header


def _static(name: str) -> str:
    """Static CUDA copied as it is: a family's (``<family>:<file>``, from its folder) or the emitter's own
    (``<file>``, beside this module)."""
    from importlib.resources import files as res

    family, _, file = name.rpartition(":")
    return res(families.get(family).package if family else PKG).joinpath(file).read_text()


def _render(tmpl: str, **variables) -> str:
    """A template beside the emitter, or a family's (``<family>:<file>``: its folder first, then the
    emitter's templates for what it imports, e.g. buckets.j2)."""
    family, _, file = tmpl.rpartition(":")
    if not family:
        return render(PKG, tmpl, **variables)
    return render_from(((families.get(family).package, ""), (PKG, "templates")), file, **variables)


def generate(cfg: KernelConfig, header: Callable[[str], str] | None = None) -> list[tuple[str, str]]:
    """[(relative path, content)] for ``cfg``; raises KernelConfigError when it cannot be generated."""
    errs = validate(cfg)
    if errs:
        raise KernelConfigError(f"kernels for `{cfg.name}`: " + "; ".join(errs))
    header = header or default_header(cfg)
    tv = template_vars(cfg)
    out = []
    for path, tmpl, prefix in files():
        if tmpl.endswith(".j2"):
            text = _render(tmpl, header=header(prefix), **tv)
        else:
            text = f"{header(prefix)}\n{_static(tmpl)}"
        out.append((path, text))
    return out


def write(cfg: KernelConfig, root, header: Callable[[str], str] | None = None) -> list[str]:
    """Write the files under ``root`` (tests, bench); returns the paths written."""
    from pathlib import Path

    root = Path(root)
    written = []
    for path, text in generate(cfg, header):
        f = root / path
        f.parent.mkdir(parents=True, exist_ok=True)
        if not f.exists() or f.read_text() != text:
            f.write_text(text)
        written.append(str(f))
    return written
