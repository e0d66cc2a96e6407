"""Which CUB families `muh tune --implementation cub` measures, and how: each one's C entry, harness
fragment and element types (``CubHarness``), and the dimensions of its CUB policy a space may vary.

The rest of the CUB implementation: the space's candidates (muh/tune/space.py, ``implementation = "cub"``)
and the units of CUB's dispatch on candidate hubs (muh/tune/cub.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from muh.diagnostics import Diagnostic, MuhError
from muh.runtime.c_api import CFunc
from muh.schema.catalog import FAMILIES as CATALOG

IMPLEMENTATIONS = ("muh", "cub")
TEMPLATES = "cub"  # below muh/tune/templates/


@dataclass(frozen=True)
class CubHarness:
    """How `muh tune` measures one CUB family: the C entry each variant gets (``api``, rendered by
    ``<family>.run.cu.j2``), the harness fragment (``<family>.harness.cu.j2``), the element types its
    reference handles, and the correctness gate's two odd sizes."""

    family: str
    api: tuple[CFunc, ...]
    dtypes: tuple[str, ...]
    check_sizes: tuple[int, int] = ((1 << 20) + 17, 1000 + 3)

    @property
    def run_template(self) -> str:
        return f"{TEMPLATES}/{self.family}.run.cu.j2"

    @property
    def harness_template(self) -> str:
        return f"{TEMPLATES}/{self.family}.harness.cu.j2"


_WS = (("void*", "temp"), ("size_t*", "temp_bytes"))
#: The element types a CUB family's harness measures: those the shared harness stores as themselves
#: (the 16-bit floats are raw bits there, which CUB would compare as integers).
_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64")

HARNESSES = {
    h.family: h
    for h in (
        CubHarness(
            "select_if",
            (
                CFunc(
                    "muh_select_if_run",
                    "int",
                    _WS
                    + (("const void*", "in"), ("void*", "out"), ("int*", "num_selected"), ("long long", "n"))
                    + (("cudaStream_t", "stream"),),
                ),
            ),
            _TYPES,
        ),
        CubHarness(
            "segmented_sort",
            (
                CFunc(
                    "muh_segmented_sort_run",
                    "int",
                    _WS
                    + (("const void*", "in"), ("void*", "out"), ("long long", "n"), ("long long", "segments"))
                    + (("const int*", "begin"), ("const int*", "end"), ("cudaStream_t", "stream")),
                ),
            ),
            _TYPES,
        ),
        CubHarness(
            "radix_sort",
            (
                CFunc(
                    "muh_radix_sort_run",
                    "int",
                    _WS + (("const void*", "in"), ("void*", "out"), ("long long", "n"), ("cudaStream_t", "stream")),
                ),
            ),
            _TYPES,
        ),
    )
}
#: The families `--implementation cub` measures (each with a hub muh generates and a harness here).
FAMILIES = tuple(HARNESSES)


def check_implementation(name: str) -> str:
    """``--implementation``: ``muh`` (muh's own kernels, the default) or ``cub``."""
    if name not in IMPLEMENTATIONS:
        from muh.diagnostics import did_you_mean

        raise MuhError(
            [
                Diagnostic(
                    "E-FLAG",
                    f"--implementation {name!r} is not an implementation",
                    None,
                    hint=did_you_mean(name, IMPLEMENTATIONS)
                    or "`muh` (muh's own kernels, the default) or `cub` (CUB's kernels on candidate hubs)",
                )
            ]
        )
    return name


def tunable(family: str) -> tuple[str, ...]:
    """The dimensions of ``family``'s CUB policy a space may vary (a sub-policy's as ``large.items``):
    those CUB's agent policies hold (its table). MuhError, naming the families that work, for any other
    family."""
    from muh.codegen.cxx.cub_hub import has_hub

    if family not in HARNESSES:
        cat = CATALOG.get(family)
        why = (
            "CUB does not tune it"
            if cat is None or cat.cub is None
            else "muh generates no CUB policy hub for it"
            if not has_hub(family)
            else "`muh tune` has no CUB harness for it yet"
        )
        raise MuhError(
            [
                Diagnostic(
                    "E-TUNE",
                    f"`muh tune --implementation cub` cannot measure `{family}`: {why}",
                    None,
                    hint=f"--implementation cub measures: {', '.join(FAMILIES)}",
                )
            ]
        )
    table = CATALOG[family].cub
    dims = [m.dim for m in table.cub_members]
    for sub in table.subs:
        dims += [f"{sub.name}.{m.dim}" for m in sub.members if m.cub is not None]
    return tuple(dims)


def check_types(family: str, types: list[str]) -> None:
    h = HARNESSES[family]
    for t in types:
        if t not in h.dtypes:
            raise MuhError(
                [
                    Diagnostic(
                        "E-TUNE",
                        f"`muh tune --implementation cub` does not measure {family} on {t}",
                        None,
                        hint=f"{family} types: {', '.join(h.dtypes)}",
                    )
                ]
            )
