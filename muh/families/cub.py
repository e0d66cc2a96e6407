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


#: muh's delay kinds -> CCCL 3.5's ``cub::LookbackDelayAlgorithm`` (cub/device/dispatch/tuning/common.cuh): 3.5
#: takes a look-back delay as a value, ``cub::LookbackDelayPolicy{kind, delay, l2_write_latency}``, where 3.0 took a
#: delay constructor type (``DELAYS``). Every kind has one; ``no_delay`` carries muh's 0 ns as its delay.
LOOKBACK_DELAYS = tuple(
    (muh, f"cub::LookbackDelayAlgorithm::{cub}")
    for muh, cub in (
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
)

#: The look-back pass of CCCL 3.5's select, partition, three-way partition and unique-by-key policies
#: (``SelectLookbackPolicy``, ``PartitionLookbackPolicy``, ``ThreeWayPartitionLookbackPolicy``, ``UniqueByKeyPolicy``):
#: the fields in aggregate order; ``delay`` becomes a ``cub::LookbackDelayPolicy`` (tune/common.cuh's ``to``).
SELECT_LOOKBACK = (
    Member("threads", "threads_per_block"),
    Member("items", "items_per_thread"),
    Member("load", "load_algorithm"),
    Member("modifier", "load_modifier"),
    Member("block", "scan_algorithm"),
    Member("delay", "lookback_delay"),
)
SELECT_ENUMS = {
    "load": "cub::BlockLoadAlgorithm",
    "modifier": "cub::CacheLoadModifier",
    "block": "cub::BlockScanAlgorithm",
    "delay": "cub::LookbackDelayPolicy",
}


#: The families muh writes a selector for when the spec's CCCL is 3.5. DeviceReduce reads its tuning from the
#: environment (``dispatch_with_env_and_tuning`` in cub/device/device_reduce.cuh), keyed by ``cub::ReducePolicy``.
SELECTORS: dict[str, Selector] = {
    "reduce": Selector(
        policy="cub::ReducePolicy",
        passes=("multi_tile", "single_tile"),
        pass_type="cub::ReducePassPolicy",
        fields=(
            Member("threads", "threads_per_block"),
            Member("items", "items_per_thread"),
            Member("vec", "vec_size"),
            Member("block", "reduce_algorithm"),
            Member("modifier", "load_modifier"),
        ),
        enums={"block": "cub::BlockReduceAlgorithm", "modifier": "cub::CacheLoadModifier"},
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
            fields=SELECT_LOOKBACK + (Member("load_prefetch", "_load_prefetch"),),
            enums=SELECT_ENUMS,
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
        fields=SELECT_LOOKBACK,
        enums=SELECT_ENUMS,
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
        fields=SELECT_LOOKBACK,
        enums=SELECT_ENUMS,
        params=("InputT", "OffsetT"),
        cub_selector="cub::detail::three_way_partition::policy_selector_from_types<InputT, OffsetT>",
        header="device/dispatch/tuning/tuning_three_way_partition.cuh",
        entry_header="device/device_partition.cuh",
    ),
    "unique_by_key": Selector(
        policy="cub::UniqueByKeyPolicy",
        passes=(),
        pass_type="",
        fields=SELECT_LOOKBACK,
        enums=SELECT_ENUMS,
        params=("KeyT", "ValueT"),
        cub_selector="cub::detail::unique_by_key::policy_selector_from_types<KeyT, ValueT>",
        header="device/dispatch/tuning/tuning_unique_by_key.cuh",
        entry_header="device/device_select.cuh",
    ),
}
