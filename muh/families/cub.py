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

from dataclasses import dataclass, field

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


# ---- muh's enumerations and delays in CUB's spelling (CCCL 3.0.1) --------------------------------------


def _upper(prefix: str, names) -> tuple[tuple[str, str], ...]:
    return tuple((n, prefix + n.upper()) for n in names)


#: CCCL 3.0.1's enumerators (cub/block/block_load.cuh, block_store.cuh, thread/thread_load.cuh, thread_store.cuh,
#: block_reduce.cuh, block_scan.cuh, warp/warp_load.cuh, block_radix_rank.cuh), by their suffix: muh spells
#: each value as its lower-case suffix.
_CUB_LOADS = ("direct", "striped", "vectorize", "transpose", "warp_transpose", "warp_transpose_timesliced")
_CUB_LOAD_MODIFIERS = ("default", "ca", "cg", "cs", "cv", "ldg", "volatile")
_CUB_STORE_MODIFIERS = ("default", "wb", "cg", "cs", "wt", "volatile")


def cub_enums() -> tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...]:
    """muh enumeration -> (CUB enumeration type, (muh enumerator, CUB enumerator) for every value CUB 3.0.1
    has). A muh value missing here has no CUB counterpart: validate refuses it in a family with a hub
    (``cub_choices``)."""
    return (
        ("block_load_algorithm", "cub::BlockLoadAlgorithm", _upper("cub::BLOCK_LOAD_", _CUB_LOADS)),
        # segmented sort's sub-warp policies load with a WarpLoadAlgorithm; muh spells them as block loads.
        (
            "block_load_algorithm",
            "cub::WarpLoadAlgorithm",
            _upper("cub::WARP_LOAD_", ("direct", "striped", "vectorize", "transpose")),
        ),
        ("block_store_algorithm", "cub::BlockStoreAlgorithm", _upper("cub::BLOCK_STORE_", _CUB_LOADS)),
        ("cache_load_modifier", "cub::CacheLoadModifier", _upper("cub::LOAD_", _CUB_LOAD_MODIFIERS)),
        ("cache_store_modifier", "cub::CacheStoreModifier", _upper("cub::STORE_", _CUB_STORE_MODIFIERS)),
        (
            "block_reduce_algorithm",
            "cub::BlockReduceAlgorithm",
            _upper("cub::BLOCK_REDUCE_", ("raking_commutative_only", "raking", "warp_reductions")),
        ),
        (
            "block_scan_algorithm",
            "cub::BlockScanAlgorithm",
            _upper("cub::BLOCK_SCAN_", ("warp_scans", "raking", "raking_memoize")),
        ),
        (
            "transform_algorithm",
            "cub::detail::transform::Algorithm",
            (
                ("prefetch", "cub::detail::transform::Algorithm::prefetch"),
                ("ublkcp", "cub::detail::transform::Algorithm::ublkcp"),
            ),
        ),
        (
            "radix_rank_algorithm",
            "cub::RadixRankAlgorithm",
            _upper("cub::RADIX_RANK_", ("basic", "memoize", "match", "match_early_counts_any"))
            + (("match_atomic_or", "cub::RADIX_RANK_MATCH_EARLY_COUNTS_ATOMIC_OR"),),
        ),
        (
            "histogram_memory",
            "cub::BlockHistogramMemoryPreference",
            (("gmem", "cub::GMEM"), ("smem", "cub::SMEM"), ("blended", "cub::BLEND")),
        ),
    )


#: muh's delay kinds -> CUB 3.0.1's look-back delay constructor (``cub::detail::<name><ns, l2w>``;
#: ``no_delay`` takes the L2 write latency only, ``no_delay_constructor_t<l2w>``).
DELAYS = {
    "fixed": "fixed_delay_constructor_t",
    "backoff": "exponential_backoff_constructor_t",
    "backoff_jitter": "exponential_backoff_jitter_constructor_t",
    "backoff_jitter_window": "exponential_backoff_jitter_window_constructor_t",
    "backon_jitter_window": "exponential_backon_jitter_window_constructor_t",
    "backon_jitter": "exponential_backon_jitter_constructor_t",
    "backon": "exponential_backon_constructor_t",
    "reduce_by_key": "reduce_by_key_delay_constructor_t",
}

#: The CUB type a dimension's value becomes in a generated hub (``block``: the family's block enumeration,
#: whichever CUB type maps it; segmented sort's small and medium loads: ``HUB_SUB_ENUM``).
HUB_ENUM = {
    "load": "cub::BlockLoadAlgorithm",
    "store": "cub::BlockStoreAlgorithm",
    "modifier": "cub::CacheLoadModifier",
    "block": None,
    "rank": "cub::RadixRankAlgorithm",
    "memory": "cub::BlockHistogramMemoryPreference",
    "algorithm": "cub::detail::transform::Algorithm",
}
HUB_SUB_ENUM = {
    ("segmented_sort", "small", "load"): "cub::WarpLoadAlgorithm",
    ("segmented_sort", "medium", "load"): "cub::WarpLoadAlgorithm",
}
#: muh's C++ enumeration of an enumerated dimension (the tuning headers' types).
MUH_ENUM = {
    "load": "block_load_algorithm",
    "store": "block_store_algorithm",
    "modifier": "cache_load_modifier",
    "rank": "radix_rank_algorithm",
    "memory": "histogram_memory",
    "algorithm": "transform_algorithm",
}


def cub_choices(family: str, dim: str, block_enum: str, sub: str | None = None) -> tuple[str, ...] | None:
    """The values of ``dim`` CUB's agent takes in ``family``'s generated hub (None: not an enumerated
    dimension a hub converts). ``block_enum``: the family's block enumeration (reduce or scan)."""
    if dim not in HUB_ENUM:
        return None
    muh_enum = block_enum if dim == "block" else MUH_ENUM[dim]
    cub_type = HUB_SUB_ENUM.get((family, sub, dim), HUB_ENUM[dim])
    for m, t, pairs in cub_enums():
        if m == muh_enum and (cub_type is None or t == cub_type):
            return tuple(v for v, _ in pairs)
    return None


#: Values CUB's agent compiles with and computes wrongly with, per (family, dimension, value), with why: a generated
#: hub must not hand them to CUB. CUB's scan agents scan each thread's items as consecutive elements (a blocked
#: arrangement); a striped load or store hands them items a block apart. Seen: CUB's InclusiveSum on the H200
#: spec's hub (load = striped, store = striped) gave prefix sums off by up to 21x |x| at 2^20..2^28 floats (H100,
#: bench/results/cub-hub-2026-12-06/race-h100.jsonl). Other order-keeping agents (select, partition, unique,
#: reduce_by_key, merge, adjacent_difference) are not listed: not seen, not proven.
WRONG_IN_CUB: dict[tuple[str, str, str], str] = {
    (family, dim, "striped"): (
        "CUB's scan agent scans each thread's items as consecutive elements; a striped "
        f"{'load' if dim == 'load' else 'store'} gives wrong prefix sums"
    )
    for family in ("scan", "scan_by_key")
    for dim in ("load", "store")
}

#: Numbers CUB's agents take for a dimension a generated hub or selector hands them, per (family, dimension), with
#: why: CUB loads ``vec`` items at once as a ``CubVector<T, vec>``, which holds 1 to 4 elements (cub/util_type.cuh;
#: a larger one fails CUB's own static_assert inside its agent: cub/agent/agent_reduce.cuh's ``VectorT`` is declared
#: whatever the call), and the histogram agent documents 1, 2 or 4 (cub/agent/agent_histogram.cuh ``_VEC_SIZE``).
CUB_NUMBERS: dict[tuple[str, str], tuple[tuple[int, ...], str]] = {
    **{
        (family, "vec"): ((1, 2, 3, 4), "CUB's reduce agent loads vec items as one CubVector, which holds 1 to 4")
        for family in ("reduce", "segmented_reduce")
    },
    ("histogram", "vec"): ((1, 2, 4), "CUB's histogram agent loads vec samples as one CubVector of 1, 2 or 4"),
}


#: Values CUB's agents hold as one: per family, groups of (sub-policy, dimension) a generated hub passes to
#: CUB as one member, with why. A policy whose group members differ cannot be run by CUB's dispatch.
AGREE: dict[str, tuple[tuple[tuple[tuple[str, str], ...], str], ...]] = {
    "segmented_sort": (
        (
            (("small", "threads"), ("medium", "threads")),
            "CUB sorts small and medium segments in one block size "
            "(AgentSmallAndMediumSegmentedSortPolicy's BLOCK_THREADS)",
        ),
    ),
    **{
        f: (
            (
                (("onesweep", "radix_bits"), ("histogram", "radix_bits"), ("exclusive_sum", "radix_bits")),
                "CUB's one-sweep passes share one digit width (the policy's ONESWEEP_RADIX_BITS)",
            ),
        )
        for f in ("radix_sort", "radix_sort_pairs")
    },
}


# ---- CCCL 3.5's policy selectors (cuda::execution::tune) -----------------------------------------------


@dataclass(frozen=True)
class Selector:
    """How a family's policy reads in CCCL 3.5's policy-selector API (the 3.5.0 headers of NVIDIA's
    nvidia-cuda-cccl 13.3.5.0.6 wheel, cub/device/dispatch/tuning/tuning_<family>.cuh): the plain struct a
    selector returns (``policy``, the tuning environment's key), its members that are passes of one struct
    (``passes``, each of type ``pass_type``, filled alike), the pass's fields in aggregate order as muh's
    dimensions (``fields``: ``Member(dim, field)``; a field muh's spec leaves unset takes CUB's value), the
    CUB enumeration each enumerated dimension converts to, and CUB's own selector over the call's types
    (C++ over the template parameters ``params``), which answers where muh cannot name the call."""

    policy: str
    passes: tuple[str, ...]
    pass_type: str
    fields: tuple[Member, ...]
    enums: dict[str, str]
    params: tuple[str, ...]
    cub_selector: str
    header: str  # the 3.5 header declaring the policy and CUB's selector (below cub/)
    entry_header: str  # the 3.5 header of the public entry the convenience entry calls (below cub/)
    subs: tuple[SelectorSub, ...] = ()  # muh's sub-policies held in nested structs of CUB's policy
    # A policy whose members are structs of different types (radix sort's passes, segmented sort's segment
    # sizes): its members in aggregate order (``Part``; ``passes`` and ``fields`` are then empty). An ``enums``
    # key ``"<sub>.<dim>"`` names the CUB type of ``dim`` in sub-policy ``sub`` where it is not ``dim``'s.
    parts: tuple[Part, ...] = ()
    # A boolean dimension CUB 3.5 holds as an enumeration: dim -> (CUB's value for true, for false).
    bools: dict[str, tuple[str, str]] = field(default_factory=dict)
    # The look-back families' shared template (templates/cub/tune/_lookback.cuh.j2) reads these:
    decls: tuple[str, ...] = ()  # the selector's template parameters (C++ declarations of ``params``, defaults too)
    ask: tuple[str, ...] = ()  # muh's selector's question: element, operation, offset bits (C++ over ``params``)
    ask_value: str = ""  # by-key: the values' element (after any size bucket arguments)
    known: str = ""  # C++ over ``params``: muh's selector can name the call (else CUB's answer, whole)


@dataclass(frozen=True)
class SelectorSub:
    """A sub-policy of muh's (``name``: ``p.<name>.<dim>``) held in a nested struct of CUB 3.5's policy (``path``
    below it, ``lookback.small_buffer``), its fields as ``Member(dim, field)`` (a field muh's sub-policy leaves
    unset stays CUB's)."""

    name: str
    path: str
    fields: tuple[Member, ...]


#: A field of a CCCL 3.5 policy that no muh dimension describes: always CUB's own selector's value.
CUB_ONLY = ""


@dataclass(frozen=True)
class Part:
    """One member of a CCCL 3.5 policy made of structs (``Selector.parts``): CUB's member name, its struct type
    (``type``; "": a plain value, filled by the one field), the muh sub-policy whose dimensions fill it
    (``sub``; None: the policy's own dimensions) and its fields in aggregate order (``Member(dim, field)``; a
    dimension the spec leaves unset, or ``CUB_ONLY``, takes CUB's value; a plain value that is all CUB's is
    ``Part(member, "", None, (Member(CUB_ONLY, member),))``, a whole struct CUB's own selector answers)."""

    member: str
    type: str
    sub: str | None
    fields: tuple[Member, ...]


def _members(*pairs: tuple[str, str]) -> tuple[Member, ...]:
    return tuple(Member(d, f) for d, f in pairs)


def _cub_part(member: str) -> Part:
    """A member of a 3.5 policy that CUB's own selector answers whole (no muh dimension describes it)."""
    return Part(member, "", None, (Member(CUB_ONLY, member),))


#: The sort families' enumerated dimensions in CUB 3.5's types (a sub-policy's own in ``"<sub>.<dim>"``).
_SORT_ENUMS = {
    "load": "cub::BlockLoadAlgorithm",
    "modifier": "cub::CacheLoadModifier",
    "rank": "cub::RadixRankAlgorithm",
}
#: cub::RadixSortDownsweepPolicy (tuning_radix_sort.cuh; also the single-tile pass and segmented radix sort's
#: passes): the scan algorithm has no muh dimension in these sub-policies.
_DOWNSWEEP = _members(
    ("threads", "threads_per_block"),
    ("items", "items_per_thread"),
    ("load", "load_algorithm"),
    ("modifier", "load_modifier"),
    ("rank", "rank_algorithm"),
    (CUB_ONLY, "scan_algorithm"),
    ("radix_bits", "radix_bits"),
)
#: cub::RadixSortPolicy's members (tuning_radix_sort.cuh), muh's radix sort sub-policies in them (the 3.0 hub's
#: mapping: templates/cub/radix_sort.cuh.j2); the look-back scan of the bin counts and the alternative downsweep
#: and upsweep passes are CUB's, as the private histogram partitions, the one-sweep store and scan algorithms.
_RADIX_PARTS = (
    Part("algorithm", "", None, (Member("use_onesweep", "algorithm"),)),
    Part(
        "histogram",
        "cub::RadixSortHistogramPolicy",
        "histogram",
        _members(
            ("threads", "threads_per_block"),
            ("items", "items_per_thread"),
            (CUB_ONLY, "private_partitions"),
            ("radix_bits", "radix_bits"),
        ),
    ),
    Part(
        "exclusive_sum",
        "cub::RadixSortExclusiveSumPolicy",
        "exclusive_sum",
        _members(("threads", "threads_per_block"), ("radix_bits", "radix_bits")),
    ),
    Part(
        "onesweep",
        "cub::RadixSortOnesweepPolicy",
        "onesweep",
        _members(
            ("threads", "threads_per_block"),
            ("items", "items_per_thread"),
            (CUB_ONLY, "store_algorithm"),
            ("rank", "rank_algorithm"),
            (CUB_ONLY, "scan_algorithm"),
            (CUB_ONLY, "rank_private_partitions"),
            ("radix_bits", "radix_bits"),
        ),
    ),
    _cub_part("scan"),
    Part("downsweep", "cub::RadixSortDownsweepPolicy", "downsweep", _DOWNSWEEP),
    _cub_part("alt_downsweep"),
    Part(
        "upsweep",
        "cub::RadixSortUpsweepPolicy",
        "upsweep",
        _members(
            ("threads", "threads_per_block"),
            ("items", "items_per_thread"),
            ("modifier", "load_modifier"),
            ("radix_bits", "radix_bits"),
        ),
    ),
    _cub_part("alt_upsweep"),
    Part("single_tile", "cub::RadixSortDownsweepPolicy", "single_tile", _DOWNSWEEP),
)
#: cub::SegmentedSortSubWarpMergeSortPolicy (tuning_segmented_sort.cuh): segmented sort's small and medium passes.
_SUB_WARP = _members(
    ("threads", "threads_per_block"),
    ("threads_per_segment", "threads_per_warp"),
    ("items", "items_per_thread"),
    ("load", "load_algorithm"),
    ("modifier", "load_modifier"),
    (CUB_ONLY, "store_algorithm"),
)


#: CCCL 3.5's look-back delay kind (cub/device/dispatch/tuning/common.cuh): a ``cub::LookbackDelayPolicy{kind, delay,
#: l2_write_latency}`` value where 3.0.1 took a delay-constructor type (``DELAYS``). muh's delay kinds -> its
#: enumerators, the pairs cub/detail/delay_constructor.cuh's ``lookback_delay_policy_from_type`` makes of the
#: constructors ``DELAYS`` names (a ``no_delay`` has no delay: 0 ns, as ``no_delay_constructor_t``).
LOOKBACK_DELAY = "cub::LookbackDelayAlgorithm"
LOOKBACK_DELAYS = (
    ("no_delay", "no_delay"),
    ("fixed", "fixed_delay"),
    ("backoff", "exponential_backoff"),
    ("backoff_jitter", "exponential_backoff_jitter"),
    ("backoff_jitter_window", "exponential_backoff_jitter_window"),
    ("backon_jitter_window", "exponential_backon_jitter_window"),
    ("backon_jitter", "exponential_backon_jitter"),
    ("backon", "exponential_backon"),
    ("reduce_by_key", "__reduce_by_key"),
)


#: muh's enumerations in CUB 3.5's spelling where 3.5 renamed or added the type (``cub_enums`` holds 3.0.1's, which
#: the hubs compile against): (muh enumeration, CUB 3.5 type, (muh enumerator, CUB enumerator) for every value CUB
#: 3.5 has). CUB 3.5's ``TransformAlgorithm`` (cub/device/dispatch/tuning/tuning_transform.cuh) replaces 3.0's
#: ``cub::detail::transform::Algorithm``; its ``ldgsts`` has no muh value, muh's ``fallback_for`` no CUB one.
SELECTOR_ENUMS: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    (
        "transform_algorithm",
        "cub::TransformAlgorithm",
        tuple((v, f"cub::TransformAlgorithm::{v}") for v in ("prefetch", "vectorized", "ublkcp")),
    ),
    # the look-back delay kind of a LookbackDelayPolicy value (3.0.1 took delay-constructor types)
    ("delay_kind", LOOKBACK_DELAY, tuple((m, f"{LOOKBACK_DELAY}::{c}") for m, c in LOOKBACK_DELAYS)),
)


#: The look-back policies' common fields in CUB 3.5's aggregate order (a family inserts its store field after the
#: load modifier), and their enumerations.
_LOOKBACK_FIELDS = (
    Member("threads", "threads_per_block"),
    Member("items", "items_per_thread"),
    Member("load", "load_algorithm"),
    Member("modifier", "load_modifier"),
    Member("block", "scan_algorithm"),
    Member("delay", "lookback_delay"),
)
_LOOKBACK_ENUMS = {
    "load": "cub::BlockLoadAlgorithm",
    "modifier": "cub::CacheLoadModifier",
    "block": "cub::BlockScanAlgorithm",
    "delay": LOOKBACK_DELAY,
}


#: cub::ReducePassPolicy (tuning_reduce.cuh): reduce's passes and segmented reduce's large-segment pass.
_REDUCE_PASS = (
    Member("threads", "threads_per_block"),
    Member("items", "items_per_thread"),
    Member("vec", "vec_size"),
    Member("block", "reduce_algorithm"),
    Member("modifier", "load_modifier"),
)
_REDUCE_ENUMS = {"block": "cub::BlockReduceAlgorithm", "modifier": "cub::CacheLoadModifier"}


#: The families muh writes a selector for when the spec's CCCL is 3.5. DeviceReduce reads its tuning from the
#: environment (``dispatch_with_env_and_tuning`` in cub/device/device_reduce.cuh), keyed by ``cub::ReducePolicy``.
SELECTORS: dict[str, Selector] = {
    "reduce": Selector(
        policy="cub::ReducePolicy",
        passes=("multi_tile", "single_tile"),
        pass_type="cub::ReducePassPolicy",
        fields=_REDUCE_PASS,
        enums=_REDUCE_ENUMS,
        params=("AccumT", "OffsetT", "ReductionOpT"),
        cub_selector="cub::detail::reduce::policy_selector_from_types<AccumT, OffsetT, ReductionOpT>",
        header="device/dispatch/tuning/tuning_reduce.cuh",
        entry_header="device/device_reduce.cuh",
    ),
    # DeviceHistogram (cub/device/device_histogram.cuh's environment overloads: dispatch_with_env_and_tuning),
    # keyed by ``cub::HistogramPolicy``: one flat struct (no passes); init_kernel_pdl_trigger_max_bins has no
    # muh dimension and is CUB's.
    "histogram": Selector(
        policy="cub::HistogramPolicy",
        passes=(),
        pass_type="",
        fields=(
            Member("threads", "threads_per_block"),
            Member("pixels_per_thread", "pixels_per_thread"),
            Member("vec", "vec_size"),
            Member("load", "load_algorithm"),
            Member("modifier", "load_modifier"),
            Member("rle_compress", "rle_compress"),
            Member("memory", "mem_preference"),
            Member("work_stealing", "use_work_stealing"),
            Member("pdl_trigger_max_bins", "init_kernel_pdl_trigger_max_bins"),
        ),
        enums={
            "load": "cub::BlockLoadAlgorithm",
            "modifier": "cub::CacheLoadModifier",
            "memory": "cub::BlockHistogramMemoryPreference",
        },
        params=("SampleT", "CounterT", "NumChannels", "NumActiveChannels", "IsEven"),
        cub_selector="cub::detail::histogram::policy_selector_from_types<SampleT, CounterT, NumChannels, "
        "NumActiveChannels, IsEven>",
        header="device/dispatch/tuning/tuning_histogram.cuh",
        entry_header="device/device_histogram.cuh",
    ),
    # DeviceFor (cub/device/device_for.cuh's environment overloads look ``cub::ForPolicy`` up in the tuning
    # environment): CUB's selector is one for every call (no types), as muh's 3.0 hub (the int32 policy).
    "for_each": Selector(
        policy="cub::ForPolicy",
        passes=(),
        pass_type="",
        fields=(Member("threads", "threads_per_block"), Member("items", "items_per_thread")),
        enums={},
        params=(),
        cub_selector="cub::detail::for_each::policy_selector",
        header="device/dispatch/tuning/tuning_for.cuh",
        entry_header="device/device_for.cuh",
    ),
    # ---- misc: transform, batch_memcpy, adjacent_difference, segmented_reduce ----
    # DeviceTransform (cub/device/device_transform.cuh, ``__transform_internal`` looks ``cub::TransformPolicy`` up in
    # the tuning environment itself): min_bytes_in_flight, an algorithm and one sub-policy per kernel (prefetch,
    # vectorized, async copy). muh's dimensions describe the bytes in flight, the algorithm (prefetch or bulk copy)
    # and the block size of the kernel that runs (its 3.0 hub's ``algo_policy::block_threads``); the template places
    # them (templates/cub/tune/transform.cuh.j2), every other field is CUB's. muh's items and vec belong to muh's
    # kernel.
    "transform": Selector(
        policy="cub::TransformPolicy",
        passes=(),
        pass_type="",
        fields=(
            Member("bytes_in_flight", "min_bytes_in_flight"),
            Member("algorithm", "algorithm"),
            Member("threads", "threads_per_block"),  # of the sub-policy of the algorithm that runs
        ),
        enums={"algorithm": "cub::TransformAlgorithm"},
        params=("RequiresStableAddress", "DenseOutput", "Inputs", "OutputIt"),
        cub_selector="cub::detail::transform::policy_selector_from_types<RequiresStableAddress, DenseOutput, Inputs, "
        "OutputIt>",
        header="device/dispatch/tuning/tuning_transform.cuh",
        entry_header="device/device_transform.cuh",
    ),
    # DeviceMemcpy::Batched (cub/device/device_memcpy.cuh: dispatch_with_env_and_tuning), keyed by
    # ``cub::BatchedCopyPolicy{algorithm, lookback{small_buffer, large_buffer}}``; CUB's selector takes no types
    # (``detail::batch_memcpy::policy_selector``). The look-back delays (``LookbackDelayPolicy`` values) and the
    # algorithm have no muh dimension and are CUB's.
    "batch_memcpy": Selector(
        policy="cub::BatchedCopyPolicy",
        passes=(),
        pass_type="",
        fields=(),
        enums={},
        params=(),
        cub_selector="cub::detail::batch_memcpy::policy_selector",
        header="device/dispatch/tuning/tuning_batch_memcpy.cuh",
        entry_header="device/device_memcpy.cuh",
        subs=(
            SelectorSub(
                "small",
                "lookback.small_buffer",
                (
                    Member("threads", "threads_per_block"),
                    Member("buffers_per_thread", "buffers_per_thread"),
                    Member("bytes_per_thread", "bytes_per_thread"),
                    Member("prefer_pow2_bits", "prefer_pow2_bits"),
                    Member("block_tile", "block_level_tile_size"),
                    Member("warp_threshold", "warp_level_threshold"),
                    Member("block_threshold", "block_level_threshold"),
                ),
            ),
            SelectorSub(
                "large",
                "lookback.large_buffer",
                (Member("threads", "threads_per_block"), Member("bytes_per_thread", "bytes_per_thread")),
            ),
        ),
    ),
    # DeviceAdjacentDifference (its environment overloads reach ``detail::adjacent_difference::dispatch`` in
    # cub/device/dispatch/dispatch_adjacent_difference.cuh, which looks ``cub::AdjacentDifferencePolicy`` up in the
    # tuning environment): one flat struct. An in-place call (MayAlias) keeps CUB's load modifier.
    "adjacent_difference": Selector(
        policy="cub::AdjacentDifferencePolicy",
        passes=(),
        pass_type="",
        fields=(
            Member("threads", "threads_per_block"),
            Member("items", "items_per_thread"),
            Member("load", "load_algorithm"),
            Member("modifier", "load_modifier"),
            Member("store", "store_algorithm"),
        ),
        enums={
            "load": "cub::BlockLoadAlgorithm",
            "modifier": "cub::CacheLoadModifier",
            "store": "cub::BlockStoreAlgorithm",
        },
        params=("InputIteratorT", "MayAlias"),
        cub_selector="cub::detail::adjacent_difference::policy_selector_from_types<InputIteratorT, MayAlias>",
        header="device/dispatch/tuning/tuning_adjacent_difference.cuh",
        entry_header="device/device_adjacent_difference.cuh",
    ),
    # DeviceSegmentedReduce (cub/device/device_segmented_reduce.cuh's environment overloads look
    # ``cub::SegmentedReducePolicy`` up in the tuning environment): the large-segment pass is a
    # ``cub::ReducePassPolicy`` (muh's segmented_reduce policy); the warp- and thread-per-segment passes
    # (``SegmentedReduceWarpReducePolicy``), which CUB derives from its own large-segment pass, are CUB's.
    "segmented_reduce": Selector(
        policy="cub::SegmentedReducePolicy",
        passes=("large_reduce",),
        pass_type="cub::ReducePassPolicy",
        fields=_REDUCE_PASS,
        enums=_REDUCE_ENUMS,
        params=("AccumT", "OffsetT", "ReductionOpT"),
        cub_selector="cub::detail::segmented_reduce::policy_selector_from_types<AccumT, OffsetT, ReductionOpT>",
        header="device/dispatch/tuning/tuning_segmented_reduce.cuh",
        entry_header="device/device_segmented_reduce.cuh",
    ),
    # ---- sort (CCCL 3.5: a policy of structs of different types, Selector.parts) ----------------------------
    # DeviceRadixSort (cub/device/device_radix_sort.cuh: its environment overloads look ``cub::RadixSortPolicy``
    # up in the tuning environment, select_tuning_and_dispatch): keys and pairs share the key and the mapping; muh
    # answers keys-only calls from radix_sort's policies, pair calls from radix_sort_pairs'.
    **{
        family: Selector(
            policy="cub::RadixSortPolicy",
            passes=(),
            pass_type="",
            fields=(),
            enums=_SORT_ENUMS,
            params=("KeyT", "ValueT", "OffsetT"),
            cub_selector="cub::detail::radix_sort::policy_selector_from_types<KeyT, ValueT, OffsetT>",
            header="device/dispatch/tuning/tuning_radix_sort.cuh",
            entry_header="device/device_radix_sort.cuh",
            parts=_RADIX_PARTS,
            bools={"use_onesweep": ("cub::RadixSortAlgorithm::onesweep", "cub::RadixSortAlgorithm::multi_pass")},
        )
        for family in ("radix_sort", "radix_sort_pairs")
    },
    # DeviceSegmentedSort (cub/device/device_segmented_sort.cuh: its environment overloads look
    # ``cub::SegmentedSortPolicy`` up, select_tuning_and_dispatch); the partitioning threshold and the sub-warp
    # passes' store algorithm have no muh dimension.
    "segmented_sort": Selector(
        policy="cub::SegmentedSortPolicy",
        passes=(),
        pass_type="",
        fields=(),
        enums={
            **_SORT_ENUMS,
            "block": "cub::BlockScanAlgorithm",
            "small.load": "cub::WarpLoadAlgorithm",
            "medium.load": "cub::WarpLoadAlgorithm",
        },
        params=("KeyT", "ValueT"),
        cub_selector="cub::detail::segmented_sort::policy_selector_from_types<KeyT, ValueT>",
        header="device/dispatch/tuning/tuning_segmented_sort.cuh",
        entry_header="device/device_segmented_sort.cuh",
        parts=(
            Part(
                "large_segment",
                "cub::SegmentedSortRadixSortPolicy",
                "large",
                _members(
                    ("threads", "threads_per_block"),
                    ("items", "items_per_thread"),
                    ("load", "load_algorithm"),
                    ("modifier", "load_modifier"),
                    ("rank", "rank_algorithm"),
                    ("block", "scan_algorithm"),
                    ("radix_bits", "radix_bits"),
                ),
            ),
            *(
                Part(member, "cub::SegmentedSortSubWarpMergeSortPolicy", sub, _SUB_WARP)
                for member, sub in (("medium_segment", "medium"), ("small_segment", "small"))
            ),
            _cub_part("partitioning_threshold"),
        ),
    ),
    # DeviceSegmentedRadixSort (cub/device/dispatch/dispatch_segmented_radix_sort.cuh's dispatch looks
    # ``cub::SegmentedRadixSortPolicy`` up in the tuning environment the environment overloads pass down).
    "segmented_radix_sort": Selector(
        policy="cub::SegmentedRadixSortPolicy",
        passes=(),
        pass_type="",
        fields=(),
        enums=_SORT_ENUMS,
        params=("KeyT", "ValueT", "OffsetT"),
        cub_selector="cub::detail::segmented_radix_sort::policy_selector_from_types<KeyT, ValueT, OffsetT>",
        header="device/dispatch/tuning/tuning_segmented_radix_sort.cuh",
        entry_header="device/device_segmented_radix_sort.cuh",
        parts=(
            Part("regular_pass", "cub::RadixSortDownsweepPolicy", "segmented", _DOWNSWEEP),
            Part("alternate_pass", "cub::RadixSortDownsweepPolicy", "alt_segmented", _DOWNSWEEP),
        ),
    ),
    # DeviceMergeSort (cub/device/device_merge_sort.cuh's environment overloads: dispatch_with_env_and_tuning),
    # keyed by ``cub::MergeSortPolicy``, one flat struct; ``unroll`` has no muh dimension.
    "merge_sort": Selector(
        policy="cub::MergeSortPolicy",
        passes=(),
        pass_type="",
        fields=_members(
            ("threads", "threads_per_block"),
            ("items", "items_per_thread"),
            ("load", "load_algorithm"),
            ("modifier", "load_modifier"),
            ("store", "store_algorithm"),
            (CUB_ONLY, "unroll"),
        ),
        enums={
            "load": "cub::BlockLoadAlgorithm",
            "modifier": "cub::CacheLoadModifier",
            "store": "cub::BlockStoreAlgorithm",
        },
        params=("KeyIteratorT",),
        cub_selector="cub::detail::merge_sort::policy_selector_from_types<KeyIteratorT>",
        header="device/dispatch/tuning/tuning_merge_sort.cuh",
        entry_header="device/device_merge_sort.cuh",
    ),
    # DeviceMerge (cub/device/device_merge.cuh's environment overloads: dispatch_with_env_and_tuning), keyed by
    # ``cub::MergePolicy``, one flat struct. 3.5 dropped the block load algorithm (muh's ``load`` has no field)
    # and added the bulk copies of keys and values into shared memory (no muh dimension), and ``unroll``.
    "merge": Selector(
        policy="cub::MergePolicy",
        passes=(),
        pass_type="",
        fields=_members(
            ("threads", "threads_per_block"),
            ("items", "items_per_thread"),
            ("modifier", "load_modifier"),
            ("store", "store_algorithm"),
            (CUB_ONLY, "use_bulk_copy_for_keys"),
            (CUB_ONLY, "use_bulk_copy_for_values"),
            (CUB_ONLY, "unroll"),
        ),
        enums={"modifier": "cub::CacheLoadModifier", "store": "cub::BlockStoreAlgorithm"},
        params=("KeysIt1", "ItemsIt1", "KeysIt2", "ItemsIt2", "OffsetT"),
        cub_selector="cub::detail::merge::policy_selector_from_types<KeysIt1, ItemsIt1, KeysIt2, ItemsIt2, OffsetT>",
        header="device/dispatch/tuning/tuning_merge.cuh",
        entry_header="device/device_merge.cuh",
    ),
    # ---- the look-back families (scan group). Each 3.5 policy is {algorithm, lookback{...}} (scan's also a look-ahead
    # member): muh fills the look-back member, CUB's answer keeps the algorithm (and scan's look-ahead member).
    # DeviceScan's non-by-key environment overloads (cub/device/device_scan.cuh, scan_impl_env:
    # dispatch_with_env_and_tuning) look up ``cub::ScanPolicy``; CUB 3.5's selector picks the look-ahead scan where
    # it can run it (``policy_selector::operator()`` in tuning_scan.cuh), and muh's selector then answers CUB's whole
    # policy: muh's scan dimensions describe the look-back scan only.
    "scan": Selector(
        policy="cub::ScanPolicy",
        passes=("lookback",),
        pass_type="cub::ScanLookbackPolicy",
        fields=_LOOKBACK_FIELDS[:4] + (Member("store", "store_algorithm"),) + _LOOKBACK_FIELDS[4:],
        enums=_LOOKBACK_ENUMS | {"store": "cub::BlockStoreAlgorithm"},
        params=("InputIteratorT", "OutputIteratorT", "AccumT", "OffsetT", "ScanOpT", "StableReductionOrder"),
        cub_selector="cub::detail::scan::policy_selector_from_types<InputIteratorT, OutputIteratorT, AccumT, "
        "OffsetT, ScanOpT, StableReductionOrder>",
        header="device/dispatch/tuning/tuning_scan.cuh",
        entry_header="device/device_scan.cuh",
        decls=(
            "class InputIteratorT",
            "class OutputIteratorT",
            "class AccumT",
            "class OffsetT",
            "class ScanOpT",
            "bool StableReductionOrder = false",
        ),
        ask=(
            "::muh::cub::tune::element_or_int32<AccumT>()",
            "::muh::cub::tune::operation_or_plus<ScanOpT>()",
            "int(sizeof(OffsetT)) * 8",
        ),
        known="::muh::cub::tune::known_v<AccumT, ScanOpT>",
    ),
    # DeviceScan's by-key environment overloads (scan_by_key_impl, device_scan.cuh) look up ``cub::ScanByKeyPolicy``.
    "scan_by_key": Selector(
        policy="cub::ScanByKeyPolicy",
        passes=("lookback",),
        pass_type="cub::ScanByKeyLookbackPolicy",
        fields=_LOOKBACK_FIELDS[:4] + (Member("store", "store_algorithm"),) + _LOOKBACK_FIELDS[4:],
        enums=_LOOKBACK_ENUMS | {"store": "cub::BlockStoreAlgorithm"},
        params=("KeyT", "AccumT", "ValueT", "ScanOpT"),
        cub_selector="cub::detail::scan_by_key::policy_selector_from_types<KeyT, AccumT, ValueT, ScanOpT>",
        header="device/dispatch/tuning/tuning_scan_by_key.cuh",
        entry_header="device/device_scan.cuh",
        decls=("class KeyT", "class AccumT", "class ValueT", "class ScanOpT"),
        ask=("::muh::cub::tune::element_or_int32<KeyT>()", "::muh::cub::tune::operation_or_plus<ScanOpT>()", "32"),
        ask_value="::muh::cub::tune::element_or_int32<AccumT>()",
        known="::muh::cub::tune::known_v<KeyT, ScanOpT> && ::muh::cub::tune::known_v<AccumT>",
    ),
    # DeviceReduce::ReduceByKey's environment overload (device_reduce.cuh: dispatch_with_env_and_tuning) looks up
    # ``cub::ReduceByKeyPolicy``.
    "reduce_by_key": Selector(
        policy="cub::ReduceByKeyPolicy",
        passes=("lookback",),
        pass_type="cub::ReduceByKeyLookbackPolicy",
        fields=_LOOKBACK_FIELDS,
        enums=_LOOKBACK_ENUMS,
        params=("ReductionOpT", "AccumT", "KeyT"),
        cub_selector="cub::detail::reduce_by_key::policy_selector_from_types<ReductionOpT, AccumT, KeyT>",
        header="device/dispatch/tuning/tuning_reduce_by_key.cuh",
        entry_header="device/device_reduce.cuh",
        decls=("class ReductionOpT", "class AccumT", "class KeyT"),
        ask=("::muh::cub::tune::element_or_int32<KeyT>()", "::muh::cub::tune::operation_or_plus<ReductionOpT>()", "32"),
        ask_value="::muh::cub::tune::element_or_int32<AccumT>()",
        known="::muh::cub::tune::known_v<KeyT, ReductionOpT> && ::muh::cub::tune::known_v<AccumT>",
    ),
    # DeviceRunLengthEncode::Encode's environment overload (device_run_length_encode.cuh: dispatch_with_env_and_tuning)
    # looks up ``cub::RleEncodePolicy`` (and adapts it to reduce by key's policy for its dispatch).
    "rle_encode": Selector(
        policy="cub::RleEncodePolicy",
        passes=("lookback",),
        pass_type="cub::RleLookbackPolicy",
        fields=_LOOKBACK_FIELDS,
        enums=_LOOKBACK_ENUMS,
        params=("LengthT", "KeyT"),
        cub_selector="cub::detail::rle::encode::policy_selector_from_types<LengthT, KeyT>",
        header="device/dispatch/tuning/tuning_rle_encode.cuh",
        entry_header="device/device_run_length_encode.cuh",
        decls=("class LengthT", "class KeyT"),
        ask=("::muh::cub::tune::element_or_int32<KeyT>()", "::muh::tuning::operation::plus", "32"),
        known="::muh::cub::tune::known_v<KeyT>",
    ),
    # DeviceRunLengthEncode::NonTrivialRuns' environment overload (device_run_length_encode.cuh:
    # dispatch_with_env_and_tuning) looks up ``cub::RleNonTrivialRunsPolicy``.
    "rle_non_trivial_runs": Selector(
        policy="cub::RleNonTrivialRunsPolicy",
        passes=("lookback",),
        pass_type="cub::RleNonTrivialRunsLookbackPolicy",
        fields=_LOOKBACK_FIELDS[:4] + (Member("store_time_slicing", "store_with_time_slicing"),) + _LOOKBACK_FIELDS[4:],
        enums=_LOOKBACK_ENUMS,
        params=("LengthT", "KeyT"),
        cub_selector="cub::detail::rle::non_trivial_runs::policy_selector_from_types<LengthT, KeyT>",
        header="device/dispatch/tuning/tuning_rle_non_trivial_runs.cuh",
        entry_header="device/device_run_length_encode.cuh",
        decls=("class LengthT", "class KeyT"),
        ask=("::muh::cub::tune::element_or_int32<KeyT>()", "::muh::tuning::operation::plus", "32"),
        known="::muh::cub::tune::known_v<KeyT>",
    ),
    # ---- select (cub/device/dispatch/tuning/tuning_select_if.cuh, tuning_three_way_partition.cuh,
    # tuning_unique_by_key.cuh). DeviceSelect's environment overloads (cub/device/device_select.cuh:
    # dispatch_with_env_and_tuning) look ``cub::SelectPolicy`` up for If, Flagged and Unique alike, with CUB's one
    # ``detail::select::policy_selector_from_types<InputIt, FlagsIt, SelectedOutputIt, OffsetT, SelectImpl>`` as the
    # default: muh's select_if, select_flagged and unique each answer it with their own tuning (the caller picks the
    # family by the selector it passes); ``_load_prefetch`` has no muh dimension and is CUB's. DevicePartition's
    # two-way overloads (cub/device/device_partition.cuh, a lookup of their own) look ``cub::PartitionPolicy`` up,
    # defaulting to the select selector with ``SelectImpl::Partition`` through ``__policy_selector_adapter``; the
    # three-way If looks ``cub::ThreeWayPartitionPolicy`` up (dispatch_with_env_and_tuning), UniqueByKey
    # ``cub::UniqueByKeyPolicy`` (one flat struct).
    **{
        family: Selector(
            policy="cub::SelectPolicy",
            passes=("lookback",),
            pass_type="cub::SelectLookbackPolicy",
            fields=_LOOKBACK_FIELDS + (Member("load_prefetch", "_load_prefetch"),),
            enums=_LOOKBACK_ENUMS,
            params=("InputIt", "FlagsIt", "SelectedOutputIt", "OffsetT", "Impl"),
            cub_selector="cub::detail::select::policy_selector_from_types<InputIt, FlagsIt, SelectedOutputIt, "
            "OffsetT, Impl>",
            header="device/dispatch/tuning/tuning_select_if.cuh",
            entry_header="device/device_select.cuh",
        )
        for family in ("select_if", "select_flagged", "unique")
    },
    "partition": Selector(
        policy="cub::PartitionPolicy",
        passes=("lookback",),
        pass_type="cub::PartitionLookbackPolicy",
        fields=_LOOKBACK_FIELDS,
        enums=_LOOKBACK_ENUMS,
        params=("InputIt", "FlagsIt", "SelectedOutputIt", "OffsetT"),
        cub_selector="cub::detail::select::policy_selector_from_types<InputIt, FlagsIt, SelectedOutputIt, OffsetT, "
        "::cub::SelectImpl::Partition>",
        header="device/dispatch/tuning/tuning_select_if.cuh",
        entry_header="device/device_partition.cuh",
    ),
    "three_way_partition": Selector(
        policy="cub::ThreeWayPartitionPolicy",
        passes=("lookback",),
        pass_type="cub::ThreeWayPartitionLookbackPolicy",
        fields=_LOOKBACK_FIELDS,
        enums=_LOOKBACK_ENUMS,
        params=("InputT", "OffsetT"),
        cub_selector="cub::detail::three_way_partition::policy_selector_from_types<InputT, OffsetT>",
        header="device/dispatch/tuning/tuning_three_way_partition.cuh",
        entry_header="device/device_partition.cuh",
    ),
    "unique_by_key": Selector(
        policy="cub::UniqueByKeyPolicy",
        passes=(),
        pass_type="",
        fields=_LOOKBACK_FIELDS,
        enums=_LOOKBACK_ENUMS,
        params=("KeyT", "ValueT"),
        cub_selector="cub::detail::unique_by_key::policy_selector_from_types<KeyT, ValueT>",
        header="device/dispatch/tuning/tuning_unique_by_key.cuh",
        entry_header="device/device_select.cuh",
    ),
}
