"""How a family corresponds to CUB (CCCL 3.0.1): the table the check stage compares muh's policy with
CUB's by.

A ``CubTable`` names, for one algorithm family, the public entry point whose policy hub CUB's case
list asks (``hub``: the hub's newest policy; ``agent``: the agent policy inside the one it selects),
the tuning header that declares it, the element types, operators, offset widths and value types the
hub distinguishes, and every dimension of muh's policy with the member of CUB's agent policy that
holds it (``Member``; sub-policies: ``Sub``). The check stage reads nothing else about a family:
muh/check/cub_truth.py renders the ground-truth probe's rows from it, muh/check/parity.py the values
it compares, muh/check/tuning_headers.py the ``static_assert(generated == cub)`` unit; the catalogue
(muh/schema/catalog.py) takes a tabled family's dimensions and sub-policies from it.

Owners: a family with a folder (``muh/families/<name>/``) holds its table there as ``CUB``; the
catalogue holds the tables of the families muh only describes. C++ type expressions are CCCL 3.0.1's
names (cub/device/dispatch/tuning/*.cuh); ``T``, ``Op`` and ``O`` are the probe's element type,
operator and offset type, ``key_of<T>`` / ``value_of<T>`` a by-key probe's halves.
"""

from __future__ import annotations

from dataclasses import dataclass

# The element types CUB's case list probes (catalogue names; the probe spells them as C++ types) ...
PROBED = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64")
# ... and the ones a sum is probed for: types that accumulate in themselves (no integer promotion), so
# that ``policy_hub<T, …>`` is exactly the hub ``DeviceReduce::Sum`` / ``DeviceScan::*Sum`` use.
SUMS = ("float32", "float64", "int32", "int64", "uint32", "uint64")

# The member of CUB's agent policies that usually holds a dimension (a table names others explicitly).
USUAL = {
    "threads": "BLOCK_THREADS",
    "items": "ITEMS_PER_THREAD",
    "load": "LOAD_ALGORITHM",
    "store": "STORE_ALGORITHM",
    "modifier": "LOAD_MODIFIER",
    "block": "SCAN_ALGORITHM",
    "delay": "detail::delay_constructor_t",
    "radix_bits": "RADIX_BITS",
    "rank": "RANK_ALGORITHM",
    "threads_per_segment": "WARP_THREADS",
    "buffers_per_thread": "BUFFERS_PER_THREAD",
    "prefer_pow2_bits": "PREFER_POW2_BITS",
    "block_tile": "BLOCK_LEVEL_TILE_SIZE",
    "warp_threshold": "WARP_LEVEL_THRESHOLD",
    "block_threshold": "BLOCK_LEVEL_THRESHOLD",
}


@dataclass(frozen=True)
class Member:
    """One dimension of muh's policy and the member of CUB's policy ``P`` that holds it (a path below
    ``P``: ``BLOCK_THREADS``, ``algo_policy::block_threads``); None: muh's own dimension, CUB has none."""

    dim: str
    cub: str | None


@dataclass(frozen=True)
class Sub:
    """A named sub-policy: muh's name, the member type of CUB's policy holding it, its members."""

    name: str
    cub: str
    members: tuple[Member, ...]


@dataclass(frozen=True)
class CubTable:
    """One family's correspondence with CUB (see the module docstring)."""

    entry: str  # the public entry point whose hub the probes ask, and how it is called
    header: str  # its tuning header (cub/device/dispatch/tuning/<header>)
    hub: str  # C++: the hub's newest policy (MaxPolicy) for the probe's T, Op, O
    agent: str | None  # the agent policy's member in the selected chain policy (None: the chain policy itself)
    types: tuple[str, ...]  # element types probed
    members: tuple[Member, ...]  # every dimension of the family, in the catalogue's order
    subs: tuple[Sub, ...] = ()
    takes_op: bool = False  # the hub distinguishes operators (probed with each of the catalogue's)
    takes_offset: bool = False  # the hub distinguishes 32- and 64-bit offsets
    any_type: bool = False  # the entry point takes user-defined element types (probed as records)
    values: tuple[str, ...] = ()  # by-key: value types, one per class the hub distinguishes

    @property
    def dims(self) -> tuple[str, ...]:
        return tuple(m.dim for m in self.members)

    @property
    def cub_members(self) -> tuple[Member, ...]:
        """The members CUB has (compared), top level only."""
        return tuple(m for m in self.members if m.cub is not None)


def members(*spec: str | tuple[str, str | None]) -> tuple[Member, ...]:
    """``"dim"`` (CUB's usual member, ``USUAL``), ``("dim", "MEMBER")`` or ``("dim", None)`` (muh's own)."""
    return tuple(Member(s, USUAL[s]) if isinstance(s, str) else Member(*s) for s in spec)


def sub(name: str, cub: str, *spec: str | tuple[str, str]) -> Sub:
    """A sub-policy held in CUB's member type ``cub``: its members as ``members`` takes them, each below
    ``cub`` unless written as a path below the policy itself (one holding ``::``)."""
    out = []
    for m in members(*spec):
        out.append(Member(m.dim, m.cub if "::" in m.cub and m.cub != USUAL.get(m.dim) else f"{cub}::{m.cub}"))
    return Sub(name, cub, tuple(out))


# The shapes many CUB agent policies share.
TILE = members("threads", "items", "load", "store", "modifier")
LOOKBACK = members("threads", "items", "load", "modifier", "block", "delay", ("scaling", None))
SCAN = members("threads", "items", "load", "store", "modifier", "block", "delay", ("scaling", None))
SORT = members(
    *(
        ("threads", None),
        ("items", None),
        ("radix_bits", None),
        ("rank", None),
        ("load", None),
        ("modifier", None),
        ("scaling", None),
    )
)
