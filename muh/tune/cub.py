"""`muh tune SPEC FAMILY --implementation cub`: CUB's own kernels measured on candidate policy hubs.

The same pipeline as muh's kernels (space → static filter → units → compile fan-out → no-spill rule →
correctness gate → ABBA timings → confirmation with an A/A twin → database → ``--apply``), with three
parts of its own (the families and their harness records: muh/tune/cub_harness.py):

* **The space** is the spec's ``space`` block over the family's CUB policy dimensions, the
  sub-policies' written ``large.items`` (``cub_harness.tunable``: the dimensions CUB's agent policies
  hold, from CUB's table, muh/families/cub.py). A variant's *candidate spec* is checked by validate's
  policy checks, the spec errors for values CUB's agents cannot take included
  (``validate.candidate_problems``), and resolved by derive (muh/tune/space.py); its effective values
  (sub-policies' too) key its kernel.
* **A variant's code** is the candidate spec's ``include/muh/cub/<family>.cuh`` as ``muh build``
  renders it (``muh.codegen.generate`` with the hub and tuning emitters, the same generator and
  formatter), inlined under ``#define muh muh_v<i>`` like muh's kernels, plus a small C entry
  (``templates/cub/<family>.run.cu.j2``) that calls the hub's convenience entry
  ``muh::cub::<family>::run`` — CUB's ``Dispatch…`` with the candidate's hub.
* **The harness fragment** (``templates/cub/<family>.harness.cu.j2``) is the family part of muh's
  harness (muh/tune/templates/harness.cu.j2, unchanged): the workspace, the call, and the host
  reference of the correctness gate. A dispatch error is a ``launch_error``, a wrong output a
  ``wrong_result``: neither is ever timed or stored as a winner.

The run key carries the implementation (``<family>@<hw>[cub]``) and so does every kernel key, so
muh's and CUB's trials never mix in one database.
"""

from __future__ import annotations

import hashlib

from muh.diagnostics import Diagnostic, MuhError
from muh.runtime import dtypes as DT
from muh.schema.models import Hardware
from muh.tune.cub_harness import HARNESSES
from muh.tune.harness import inline
from muh.tune.space import Effective


def emitter_reasons(eff: Effective, hw: Hardware) -> list[str]:
    """Why the hub of ``eff`` cannot be generated (the build's own errors: derive of the whole candidate,
    the hub and tuning emitters), without a compiler."""
    try:
        hub_files(eff)
    except MuhError as err:
        return [d.message for d in err.diagnostics if d.is_error] or ["the hub cannot be generated"]
    if eff.dtype not in HARNESSES[eff.family].dtypes:
        return [f"`muh tune --implementation cub` does not measure {eff.family} on {eff.dtype}"]
    return []


_HUBS: dict[str, dict[str, str]] = {}  # the candidate spec's content -> its generated files


def hub_files(eff: Effective) -> dict[str, str]:
    """``muh build``'s C++ headers of the candidate spec: the generator and formatter the build uses
    (``muh.codegen.generate``), its CUB hub and tuning emitters (cached by the candidate's content: the
    search, the units and the source hash ask for the same candidate several times)."""
    spec = eff.spec
    key = hashlib.sha256(
        (spec.file + spec.model_dump_json(include={"types", "hardware", "algorithms"})).encode()
    ).hexdigest()
    if key not in _HUBS:
        from muh.codegen import BuildContext, generate
        from muh.derive import derive

        ctx = BuildContext(spec, derive(spec), options={})
        files = {f.path: f.content for f in generate(ctx, only={"cxx_cub_hub", "cxx_tuning"})}
        if f"include/muh/cub/{eff.family}.cuh" not in files:
            from muh.codegen.cxx.cub_hub import HUB_CCCL

            why = (
                f" (its toolchain says cccl = {spec.cccl!r}: `muh tune` measures CUB {HUB_CCCL}'s dispatch on "
                "hubs, which muh writes only for that CCCL; tune a copy of the spec without `cccl`)"
                if spec.cccl != HUB_CCCL
                else ""
            )
            raise MuhError(
                [Diagnostic("E-TUNE", f"the candidate spec generates no CUB hub for {eff.family}{why}", None)]
            )
        if len(_HUBS) > 256:
            _HUBS.clear()
        _HUBS[key] = files
    return _HUBS[key]


# -- units --------------------------------------------------------------------------------------------
def _c_type(dtype: str) -> str:
    return DT.TABLE[dtype].storage


def _threshold(dtype: str) -> str:
    """select_if's predicate ``x < threshold``: the harness's inputs are [-1, 1] (floats) or [-100, 100]."""
    return "0.5" if DT.TABLE[dtype].is_float else "50"


#: The label of the reference row: CUB's public entry point, i.e. CUB's own (shipped) hub for the GPU.
SHIPPED = "cub:shipped"


def variant_code(index: int, eff: Effective, hw: Hardware, label: str) -> str:
    """Variant ``index``: its hub (inlined from the candidate's generated headers) and its C entry, in its
    own namespace ``muh_v<i>`` with its own C symbols ``muh_v<i>_…`` (as muh's kernels in a unit); the
    label ``SHIPPED``: no hub, the entry calls CUB's public entry point (CUB's shipped policy)."""
    from muh.codegen.templates import render

    shipped = label == SHIPPED
    files = {} if shipped else hub_files(eff)
    h = HARNESSES[eff.family]
    sym = f"muh_v{index}"
    names = [f.name for f in h.api] + ["muh_last_error"]
    head = [
        f"// ---- variant {index}: {label} ----",
        "// CUB's dispatch and kernels on this candidate's hub",
        f"#define muh {sym}",
    ]
    head += [f"#define {n} {sym}_{n[4:]}" for n in names]
    body = "" if shipped else inline(f"include/muh/cub/{eff.family}.cuh", files, set())
    entry = render(
        "muh.tune",
        h.run_template,
        family=eff.family,
        T=_c_type(eff.dtype),
        threshold=_threshold(eff.dtype),
        shipped=shipped,
    )
    tail = ["#undef muh"] + [f"#undef {n}" for n in names]
    return "\n".join(head + [body, entry] + tail) + "\n"


def render_unit(family: str, dtype: str, hw: Hardware, variants, sizes: list[int], spin_cycles: int) -> str:
    """One translation unit of CUB candidates: muh's harness (templates/harness.cu.j2) with the CUB
    family's fragment, the base at index 0."""
    from muh.codegen.templates import render
    from muh.tune.harness import harness_source

    h = HARNESSES[family]
    code = "#include <cub/cub.cuh>\n" + "\n".join(variant_code(v.index, v.eff, hw, v.label) for v in variants)
    family_code = render("muh.tune", h.harness_template, family=family, threshold=_threshold(dtype))
    return harness_source(family, dtype, variants, code, sizes, h.check_sizes, 0.0, h.api, family_code, spin_cycles)


def source_hash(eff: Effective, hw: Hardware, flags: list[str], label: str = "") -> str:
    """Hash of what the variant compiles from: its hub and C entry (``label`` ``SHIPPED``: CUB's public
    entry), the harness and the family's fragment, the element type's row of the dtype table and the nvcc
    flags (the no-spill rule's)."""
    from importlib.resources import files as res

    h = HARNESSES[eff.family]
    d = hashlib.sha256()
    d.update(b"cub\0")
    d.update(variant_code(0, eff, hw, label).encode())
    for name in ("harness.cu.j2", h.run_template, h.harness_template):
        d.update(res("muh.tune").joinpath("templates", name).read_bytes())
    d.update(repr(DT.TABLE[eff.dtype]).encode())
    d.update("\0".join(flags).encode())
    return d.hexdigest()[:16]
