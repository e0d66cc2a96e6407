// Segmented reduce (sum, min, max, argmin, argmax over segments [begin[i], end[i]) of one input; CUB
// DeviceSegmentedReduce semantics), static CUDA. Each segment is reduced by the class its length falls in
// (class_of: a thread up to kSmallItems elements, a warp up to warp::kSize * kWarpItems, a block up to
// kThreads * kBlockItems, many blocks beyond), chosen on the device. The host never reads the offsets: it
// picks the launches by the segment count alone (launches()):
//   - at most kFewSegments (a segment per thread of one block): ONE launch, few_kernel, of as many blocks as
//     fit on the device at once by its own occupancy (few_grid; one a segment where that is more:
//     few_blocks). Every block reads all offsets and makes the same plan (share_of, units_of,
//     fallback_share_of): `per` is the even share of all tiles over the launch's blocks; a segment is one unit,
//     reduced whole by one block (CUB's shape), when its tiles are at most `per` or it is no longer than the
//     block bound (kThreads * kBlockItems); a longer one is split into runs of `per` tiles, each run a unit.
//     Where that gives more units than blocks (segments a little longer than the share take a run and a
//     short one), `per` is the share of the blocks beyond one a segment, which bounds the units by the blocks:
//     one wave, block g takes unit g. A split segment's blocks leave partials, and the last of them to finish
//     (a ticket per segment, reset by it) combines them in run order (deterministic for a given grid) and
//     writes the result.
//   - more: three launches whatever the lengths:
//     1. small_kernel: one thread per segment. A segment of the thread class is reduced by its thread, one
//        of the warp class by its warp (the warp takes its lanes' such segments one after the other); a
//        longer one is appended to the work list with its count of tiles (one 64-bit atomic gives its
//        entry and its first tile, so tiles are numbered in entry order).
//     2. tiles_kernel: the listed segments' tiles (kThreads * kItems elements each), split evenly over a
//        grid sized to fill the GPU: each block reduces a contiguous run of tiles; a segment whose tiles
//        all fall in one block's run is written by that block, a longer one leaves a partial at each end
//        of the block's run.
//     3. fixup_kernel: the first block of each segment spread over several blocks combines their partials
//        in block order (deterministic) and writes the result.
// Full tiles (fold_tiles, both paths) take kVec elements a load (types.cuh's load_vec, at most 16 bytes)
// when the segment's start is aligned to that, else one; a partial tile loads one element at a time.
// No numbers of its own: kernels/segmented_reduce.cu instantiates it with each element type's resolved
// policy P (params.cuh). Compiles on its own against the generated common layer (include/muh: block.cuh,
// host.cuh, types.cuh, warp.cuh); C++14, CUDA 10.2 subset.
//
// Policy P (enums): kThreads, kItems, kVec, kLdg (the tile pass: CUB's SegmentedReducePolicy; kVec: elements
// per load of an aligned full tile), kSmallThreads (block of the first pass), kSmallItems (longest segment a
// thread reduces alone), kWarpItems (elements per lane of the longest segment a warp reduces), kBlockItems
// (elements per thread of the longest segment a block of the one-launch path reduces whole whatever the
// share), kFewSegments (most segments of the one-launch path), kMaxGrid (most blocks of the tile pass and of
// the one-launch path: the workspace holds two partials each).
#pragma once

#include <float.h>
#include <stdint.h>

#include "muh/block.cuh"
#include "muh/host.cuh"
#include "muh/types.cuh"
#include "muh/warp.cuh"

namespace muh {
namespace segmented_reduce_impl MUH_LIBRARY_LOCAL {

// The finite extremes CUB starts min and max from (cuda::std::numeric_limits<T>::max() / lowest()).
template <typename T>
struct Finite;
template <>
struct Finite<float> {
  static __device__ __forceinline__ float highest() { return FLT_MAX; }
};
template <>
struct Finite<double> {
  static __device__ __forceinline__ double highest() { return DBL_MAX; }
};
template <>
struct Finite<__half> {
  static __device__ __forceinline__ float highest() { return 65504.0f; }
};
template <>
struct Finite<bf16> {
  static __device__ __forceinline__ float highest() { return 3.38953139e38f; }
};
template <>
struct Finite<int> {
  static __device__ __forceinline__ int highest() { return INT_MAX; }
  static __device__ __forceinline__ int lowest() { return INT_MIN; }
};
template <>
struct Finite<long long> {
  static __device__ __forceinline__ long long highest() { return LLONG_MAX; }
  static __device__ __forceinline__ long long lowest() { return LLONG_MIN; }
};
template <typename T>
__device__ __forceinline__ typename Acc<T>::type lowest_of() {
  return -Finite<T>::highest();
}
template <>
__device__ __forceinline__ int lowest_of<int>() {
  return Finite<int>::lowest();
}
template <>
__device__ __forceinline__ long long lowest_of<long long>() {
  return Finite<long long>::lowest();
}

// A value and its offset in the segment (CUB's KeyValuePair<offset, T>, key first).
template <typename A>
struct KV {
  long long key;
  A value;
};

// The operators: R is the running value, init() CUB's initial value (what an empty segment gives),
// fold() takes element x at offset i of the segment, combine() two running values, value()/key() the
// output. Every fold starts from init(), as CUB's does.
template <typename T>
struct OpSum {
  typedef typename Acc<T>::type A;
  typedef A R;
  static __device__ __forceinline__ R init() { return A(0); }
  static __device__ __forceinline__ R fold(R r, A x, long long) { return r + x; }
  static __device__ __forceinline__ R combine(R a, R b) { return a + b; }
  static __device__ __forceinline__ A value(R r) { return r; }
  static __device__ __forceinline__ long long key(R) { return 0; }
};
template <typename T>
struct OpMin {  // cuda::minimum from numeric_limits<T>::max()
  typedef typename Acc<T>::type A;
  typedef A R;
  static __device__ __forceinline__ R init() { return Finite<T>::highest(); }
  static __device__ __forceinline__ R fold(R r, A x, long long) { return x < r ? x : r; }
  static __device__ __forceinline__ R combine(R a, R b) { return b < a ? b : a; }
  static __device__ __forceinline__ A value(R r) { return r; }
  static __device__ __forceinline__ long long key(R) { return 0; }
};
template <typename T>
struct OpMax {  // cuda::maximum from numeric_limits<T>::lowest()
  typedef typename Acc<T>::type A;
  typedef A R;
  static __device__ __forceinline__ R init() { return lowest_of<T>(); }
  static __device__ __forceinline__ R fold(R r, A x, long long) { return x > r ? x : r; }
  static __device__ __forceinline__ R combine(R a, R b) { return b > a ? b : a; }
  static __device__ __forceinline__ A value(R r) { return r; }
  static __device__ __forceinline__ long long key(R) { return 0; }
};
// cub::ArgMin / ArgMax: the smaller (larger) value, the first offset on ties; from {1, max()} ({1, lowest()}).
template <typename T, bool kMax>
struct OpArg {
  typedef typename Acc<T>::type A;
  typedef KV<A> R;
  static __device__ __forceinline__ bool better(A b, A a) { return kMax ? b > a : b < a; }
  static __device__ __forceinline__ R init() {
    R r;
    r.key = 1;
    r.value = kMax ? lowest_of<T>() : (A)Finite<T>::highest();
    return r;
  }
  static __device__ __forceinline__ R combine(R a, R b) {
    return (better(b.value, a.value) || (a.value == b.value && b.key < a.key)) ? b : a;
  }
  static __device__ __forceinline__ R fold(R r, A x, long long i) {
    R b;
    b.key = i;
    b.value = x;
    return combine(r, b);
  }
  static __device__ __forceinline__ A value(R r) { return r.value; }
  static __device__ __forceinline__ long long key(R r) { return r.key; }
};

template <typename Op>
struct Combine {
  __device__ __forceinline__ typename Op::R operator()(typename Op::R a, typename Op::R b) const {
    return Op::combine(a, b);
  }
};

// Op::combine over the warp (every lane gets it): the warp layer's reduce for a plain value; a key-value
// pair is exchanged field by field (the emulated warp's exchange moves at most 8 bytes at a time).
template <typename Op, typename R>
struct Lanes {
  static __device__ __forceinline__ R reduce(R v) { return warp::reduce(v, Combine<Op>()); }
};
template <typename Op, typename A>
struct Lanes<Op, KV<A>> {
  static __device__ __forceinline__ KV<A> reduce(KV<A> v) {
#pragma unroll
    for (int o = warp::kSize / 2; o > 0; o >>= 1) {
      KV<A> t;
      t.key = warp::shfl_xor(v.key, o);
      t.value = warp::shfl_xor(v.value, o);
      v = Op::combine(v, t);
    }
    return v;
  }
};
template <typename Op>
__device__ __forceinline__ typename Op::R warp_reduce(typename Op::R v) {
  return Lanes<Op, typename Op::R>::reduce(v);
}

// Op::combine over the block (every thread gets it), as block::reduce with warp_reduce's exchange;
// `smem` holds one value per warp.
template <int kThreads, typename Op>
__device__ __forceinline__ typename Op::R block_reduce(typename Op::R v, typename Op::R* smem) {
  v = warp_reduce<Op>(v);
  if (warp::lane() == 0) smem[warp::id()] = v;
  __syncthreads();
  typename Op::R r = smem[0];
  for (int i = 1; i < block::Shape<kThreads>::kWarps; ++i) r = Op::combine(r, smem[i]);
  __syncthreads();
  return r;
}

// A segment longer than a warp's share: its place in the work list.
struct Entry {
  long long segment;
  long long begin;
  long long size;
  long long first_tile;  // tiles of all earlier entries
};

// Workspace: the list's counter (entries << 36 | tiles), the one-launch path's tickets (one per segment,
// zero between calls: the workspace comes zero-filled and the last block of each split segment resets its
// ticket), the partials, the list. 2^36 tiles of at least one warp each, 2^28 segments (run refuses more).
constexpr int kCountBits = 36;
constexpr long long kMaxSegments = 1LL << (64 - kCountBits);
constexpr unsigned long long kTileMask = (1ull << kCountBits) - 1;
constexpr size_t kCounterBytes = 16;
constexpr int kMaxFewSegments = 1024;  // tickets: kFewSegments is a block's threads (CUDA: at most 1024)
constexpr size_t kTicketBytes = sizeof(unsigned) * kMaxFewSegments;

template <typename P>
constexpr size_t partial_bytes() {
  return sizeof(KV<double>) * 2 * (size_t)P::kMaxGrid;
}

// ---- the plan: pure functions of the policy, the segment count and lengths (host and device) ----------

enum Class { kThreadClass = 0, kWarpClass = 1, kBlockClass = 2, kManyClass = 3 };

// The class of a segment of n elements.
template <typename P>
__host__ __device__ inline int class_of(long long n) {
  if (n <= (long long)P::kSmallItems) return kThreadClass;
  if (n <= (long long)warp::kSize * P::kWarpItems) return kWarpClass;
  if (n <= (long long)P::kThreads * P::kBlockItems) return kBlockClass;
  return kManyClass;
}

// Tiles of a segment of n elements (0 for an empty one).
template <typename P>
__host__ __device__ inline long long tiles_of(long long n) {
  return n > 0 ? (n + (long long)P::kThreads * P::kItems - 1) / ((long long)P::kThreads * P::kItems) : 0;
}

// One-launch path: tiles per run of a split segment, the even share of all `tiles` over `blocks` (at least 1).
__host__ __device__ inline long long share_of(long long tiles, long long blocks) {
  const long long per = (tiles + blocks - 1) / blocks;
  return per > 0 ? per : 1;
}

// One-launch path: the units (blocks) of a segment of n elements. Whole (one unit) when its tiles are at most
// `per`, or when it is no longer than the block bound (kThreads * kBlockItems: what a block always keeps whole,
// CUB's shape); else its runs of `per` tiles, the last one shorter. The units of a segment of t >= 1 tiles are
// at most 1 + (t - 1) / per, an empty segment's 1: a plan's units are at most segments + tiles / per.
template <typename P>
__host__ __device__ inline long long units_of(long long n, long long per) {
  const long long t = tiles_of<P>(n);
  if (t <= per || class_of<P>(n) != kManyClass) return 1;
  return (t + per - 1) / per;
}

// One-launch path: the share when the even one (share_of(tiles, blocks)) gives more units than `blocks` (split
// segments' short last runs): runs sized for the blocks beyond one a segment, so units <= segments + (blocks -
// segments) = blocks; with no block to spare, every segment whole (per = all tiles: `segments` units, and the
// host launches at least that many blocks).
__host__ __device__ inline long long fallback_share_of(long long tiles, long long segments, long long blocks) {
  return blocks > segments ? share_of(tiles, blocks - segments) : (tiles > 0 ? tiles : 1);
}

// One-launch path: the blocks to launch for `segments` segments when `resident` blocks of few_kernel fit on the
// device at once: all of them (one wave), or one a segment where that is more.
__host__ __device__ inline long long few_blocks(long long segments, long long resident) {
  return resident > segments ? resident : segments;
}

// Kernel launches of a call of `segments` segments (the memset of the three-launch path not counted).
template <typename P>
__host__ __device__ inline int launches(long long segments) {
  return segments <= 0 ? 0 : segments <= (long long)P::kFewSegments ? 1 : 3;
}

template <typename T, typename Op>
__device__ __forceinline__ void put(T* out, long long* out_key, long long s, typename Op::R r) {
  out[s] = Cvt<typename Acc<T>::type, T>::out(Op::value(r));
  if (out_key) out_key[s] = Op::key(r);
}

// One element as its accumulator type (types.cuh's load_vec: the read-only path where kLdg).
template <typename T, bool kLdg>
__device__ __forceinline__ typename Acc<T>::type ld(const T* p) {
  T v[1];
  load_vec<T, 1, kLdg>(p, v);
  return Cvt<typename Acc<T>::type, T>::in(v[0]);
}

// One full tile's elements of this thread: its kItems / kVec vector loads (kVec elements each, contiguous;
// with kVec = 1 the tile's i-th element of the thread is i * kThreads + threadIdx.x), issued together.
template <typename T, typename P, int kVec>
__device__ __forceinline__ void load_tile(T (&v)[P::kItems / kVec][kVec], const T* base, long long off) {
#pragma unroll
  for (int i = 0; i < P::kItems / kVec; ++i)
    load_vec<T, kVec, P::kLdg != 0>(base + off + ((long long)i * P::kThreads + threadIdx.x) * kVec, v[i]);
}
// Their fold in order, each element with its offset in the segment (argmin/argmax: the first on ties).
template <typename T, typename P, typename Op, int kVec>
__device__ __forceinline__ typename Op::R fold_tile(typename Op::R r, const T (&v)[P::kItems / kVec][kVec],
                                                    long long off) {
#pragma unroll
  for (int i = 0; i < P::kItems / kVec; ++i)
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      r = Op::fold(r, Cvt<typename Acc<T>::type, T>::in(v[i][j]),
                   off + ((long long)i * P::kThreads + threadIdx.x) * kVec + j);
  return r;
}

// This thread's fold of the full tiles [t, full) of the segment at `base`, kVec elements a load. Software-
// pipelined: the next tile's loads are issued before this one is folded, so a thread has two tiles in flight
// where ptxas would otherwise wait on the first loads of each tile before issuing its later ones (sm_90 SASS
// of the plain loop).
template <typename T, typename P, typename Op, int kVec>
__device__ __forceinline__ typename Op::R fold_full(typename Op::R r, const T* base, long long t, long long full) {
  enum { kTile = P::kThreads * P::kItems };
  static_assert(P::kItems % kVec == 0, "segmented_reduce: a thread's items are whole vectors");
  T v[P::kItems / kVec][kVec], w[P::kItems / kVec][kVec];  // ping-pong: tile t in one, t + 1 loading into the other
  load_tile<T, P, kVec>(v, base, t * kTile);
  while (true) {
    if (t + 1 < full) load_tile<T, P, kVec>(w, base, (t + 1) * kTile);
    r = fold_tile<T, P, Op, kVec>(r, v, t * kTile);
    if (++t >= full) break;
    if (t + 1 < full) load_tile<T, P, kVec>(v, base, (t + 1) * kTile);
    r = fold_tile<T, P, Op, kVec>(r, w, t * kTile);
    if (++t >= full) break;
  }
  return r;
}

// This thread's fold of tiles [t0, t1) of the segment of `size` elements at `base`. Full tiles take P::kVec
// elements a load (16 bytes at most: types.cuh's load_vec) where `base` is aligned to that (one test, the same
// for the whole block: tiles start at multiples of kTile, a multiple of kVec), else one a load (a segment may
// start anywhere). The last tile, when partial, is guarded, one element a load.
template <typename T, typename P, typename Op>
__device__ __forceinline__ typename Op::R fold_tiles(const T* base, long long size, long long t0, long long t1) {
  enum { kThreads = P::kThreads, kItems = P::kItems, kTile = kThreads * kItems, kVec = P::kVec };
  typename Op::R r = Op::init();
  const long long full = size / kTile < t1 ? size / kTile : t1;  // tiles [t0, full) are full
  long long t = t0;
  if (t < full) {
    if (kVec > 1 && reinterpret_cast<uintptr_t>(base) % (sizeof(T) * kVec) == 0)
      r = fold_full<T, P, Op, kVec>(r, base, t, full);
    else
      r = fold_full<T, P, Op, 1>(r, base, t, full);
    t = full;
  }
  for (; t < t1; ++t) {
    const long long off = t * kTile;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const long long k = off + i * kThreads + threadIdx.x;
      if (k < size) r = Op::fold(r, ld<T, P::kLdg != 0>(base + k), k);
    }
  }
  return r;
}

// A partial read past the L1 (another block wrote it in this launch): a plain value, or a pair by field.
template <typename R>
struct Fresh {
  static __device__ __forceinline__ R at(const R* p) { return *(const volatile R*)p; }
  static __device__ __forceinline__ void put(R* p, R v) { *(volatile R*)p = v; }
};
template <typename A>
struct Fresh<KV<A>> {
  static __device__ __forceinline__ KV<A> at(const KV<A>* p) {
    KV<A> r;
    r.key = ((const volatile KV<A>*)p)->key;
    r.value = ((const volatile KV<A>*)p)->value;
    return r;
  }
  static __device__ __forceinline__ void put(KV<A>* p, KV<A> v) {
    ((volatile KV<A>*)p)->key = v.key;
    ((volatile KV<A>*)p)->value = v.value;
  }
};

template <typename T, typename O, typename P, typename Op>
__global__ void __launch_bounds__(P::kSmallThreads)
    small_kernel(const T* __restrict__ in, const O* __restrict__ begins, const O* __restrict__ ends, long long segments,
                 T* __restrict__ out, long long* __restrict__ out_key, Entry* __restrict__ list,
                 unsigned long long* counter) {
  typedef typename Op::R R;
  enum { kTile = P::kThreads * P::kItems };
  const long long s = (long long)blockIdx.x * P::kSmallThreads + threadIdx.x;
  const bool live = s < segments;
  long long b = 0, n = 0;
  if (live) {
    b = (long long)begins[s];
    const long long e = (long long)ends[s];
    n = e > b ? e - b : 0;
  }
  if (live && n <= P::kSmallItems) {  // a thread's segment
    R r = Op::init();
    for (long long i = 0; i < n; ++i) r = Op::fold(r, ld<T, P::kLdg != 0>(in + b + i), i);
    put<T, Op>(out, out_key, s, r);
  }
  // A warp's segments, one after the other, all lanes loading each.
  bool pending = live && n > P::kSmallItems && n <= (long long)warp::kSize * P::kWarpItems;
  while (warp::any(pending)) {
    const int src = warp::first_lane(pending);
    const long long sb = warp::shfl_idx(b, src), sn = warp::shfl_idx(n, src), ss = warp::shfl_idx(s, src);
    R r = Op::init();
    for (long long i = warp::lane(); i < sn; i += warp::kSize) r = Op::fold(r, ld<T, P::kLdg != 0>(in + sb + i), i);
    r = warp_reduce<Op>(r);
    if (warp::lane() == src) {
      put<T, Op>(out, out_key, ss, r);
      pending = false;
    }
  }
  if (live && n > (long long)warp::kSize * P::kWarpItems) {  // a block's or many blocks': listed
    const long long tiles = (n + kTile - 1) / kTile;
    const unsigned long long old = atomicAdd(counter, (1ull << kCountBits) + (unsigned long long)tiles);
    Entry en;
    en.segment = s;
    en.begin = b;
    en.size = n;
    en.first_tile = (long long)(old & kTileMask);
    list[old >> kCountBits] = en;
  }
}

// The entry holding tile t (entries' first tiles ascend with their index).
__device__ __forceinline__ long long entry_of(const Entry* list, long long entries, long long t) {
  long long lo = 0, hi = entries - 1;
  while (lo < hi) {
    const long long mid = (lo + hi + 1) / 2;
    if (list[mid].first_tile <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// Block g's run of tiles [lo, hi) of `tiles`, the grid's even share.
__device__ __forceinline__ void run_of(long long tiles, long long g, long long grid, long long& lo, long long& hi) {
  const long long per = (tiles + grid - 1) / grid;
  lo = g * per;
  hi = lo + per < tiles ? lo + per : tiles;
}

template <typename T, typename P, typename Op>
__global__ void __launch_bounds__(P::kThreads)
    tiles_kernel(const T* __restrict__ in, T* __restrict__ out, long long* __restrict__ out_key,
                 const Entry* __restrict__ list, const unsigned long long* counter, typename Op::R* partials) {
  typedef typename Op::R R;
  enum { kThreads = P::kThreads, kItems = P::kItems, kTile = kThreads * kItems };
  __shared__ R warp_partials[block::Shape<kThreads>::kWarps];
  const unsigned long long c = *counter;
  const long long entries = (long long)(c >> kCountBits), tiles = (long long)(c & kTileMask);
  long long lo, hi;
  run_of(tiles, blockIdx.x, gridDim.x, lo, hi);
  if (lo >= hi) return;
  long long e = entry_of(list, entries, lo);
  for (long long t = lo; t < hi; ++e) {
    const Entry en = list[e];
    const long long count = (en.size + kTile - 1) / kTile;
    const long long last = en.first_tile + count < hi ? en.first_tile + count : hi;
    R r = fold_tiles<T, P, Op>(in + en.begin, en.size, t - en.first_tile, last - en.first_tile);
    t = last;
    r = block_reduce<kThreads, Op>(r, warp_partials);
    if (threadIdx.x == 0) {
      const bool starts = en.first_tile >= lo, ends = en.first_tile + count <= hi;
      if (starts && ends)
        put<T, Op>(out, out_key, en.segment, r);
      else
        partials[2 * blockIdx.x + (starts ? 1 : 0)] = r;  // 0: the run's first segment, 1: its last
    }
  }
}

template <typename T, typename P, typename Op>
__global__ void fixup_kernel(T* __restrict__ out, long long* __restrict__ out_key, const Entry* __restrict__ list,
                             const unsigned long long* counter, const typename Op::R* partials, int grid) {
  typedef typename Op::R R;
  enum { kTile = P::kThreads * P::kItems };
  const unsigned long long c = *counter;
  const long long entries = (long long)(c >> kCountBits), tiles = (long long)(c & kTileMask);
  long long lo, hi;
  run_of(tiles, blockIdx.x, grid, lo, hi);
  if (lo >= hi) return;
  const Entry en = list[entry_of(list, entries, hi - 1)];
  const long long count = (en.size + kTile - 1) / kTile;
  if (en.first_tile < lo || en.first_tile + count <= hi) return;  // not a segment this block starts and leaves
  const long long per = (tiles + grid - 1) / grid;
  const long long last_block = (en.first_tile + count - 1) / per;
  // partials: this block's "last" slot, then each later block's "first" slot, in block order
  R r = Op::init();
  const long long n = last_block - blockIdx.x + 1;
  for (long long i = warp::lane(); i < n; i += warp::kSize)
    r = Op::combine(r, i == 0 ? partials[2 * blockIdx.x + 1] : partials[2 * (blockIdx.x + i)]);
  r = warp_reduce<Op>(r);
  if (warp::lane() == 0) put<T, Op>(out, out_key, en.segment, r);
}

// The one-launch path (at most P::kFewSegments segments): see the top of the file. Every block plans for the
// launch's blocks (gridDim.x, at least `segments`: few_blocks()), so the plan's units never exceed them.
template <typename T, typename O, typename P, typename Op>
__global__ void __launch_bounds__(P::kThreads)
    few_kernel(const T* __restrict__ in, const O* __restrict__ begins, const O* __restrict__ ends, int segments,
               T* __restrict__ out, long long* __restrict__ out_key, typename Op::R* partials, unsigned* tickets) {
  typedef typename Op::R R;
  enum { kThreads = P::kThreads, kWarps = block::Shape<kThreads>::kWarps };
  __shared__ long long first_unit[kThreads + 1];  // each segment's first unit; [segments..]: all units
  __shared__ long long scratch[kWarps];
  __shared__ R warp_partials[kWarps];
  __shared__ int am_last;
  const int t = (int)threadIdx.x;
  long long n = 0;
  if (t < segments) {
    const long long b = (long long)begins[t], e = (long long)ends[t];
    n = e > b ? e - b : 0;
  }
  const long long blocks = gridDim.x;
  long long tiles = 0, units = 0;
  block::exclusive_scan<kThreads>(tiles_of<P>(n), Sum(), 0LL, scratch, tiles);
  long long per = share_of(tiles, blocks);
  long long mine =
      block::exclusive_scan<kThreads>(t < segments ? units_of<P>(n, per) : 0LL, Sum(), 0LL, scratch, units);
  if (units > blocks) {  // the same in every thread: `units` is the block's total
    per = fallback_share_of(tiles, segments, blocks);
    mine = block::exclusive_scan<kThreads>(t < segments ? units_of<P>(n, per) : 0LL, Sum(), 0LL, scratch, units);
  }
  first_unit[t] = mine;
  if (t == 0) first_unit[kThreads] = units;
  __syncthreads();
  const long long g = blockIdx.x;
  if (g >= units) return;
  int lo = 0, hi = segments - 1;  // the segment of unit g: the last whose first unit is at most g
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (first_unit[mid] <= g)
      lo = mid;
    else
      hi = mid - 1;
  }
  const int s = lo;
  const long long sb = (long long)begins[s], se = (long long)ends[s];
  const long long sn = se > sb ? se - sb : 0, st = tiles_of<P>(sn);
  const long long k = g - first_unit[s];
  const bool whole = first_unit[s + 1] - first_unit[s] == 1;
  const long long t0 = whole ? 0 : k * per, t1 = whole || (k + 1) * per > st ? st : (k + 1) * per;
  R r = block_reduce<kThreads, Op>(fold_tiles<T, P, Op>(in + sb, sn, t0, t1), warp_partials);
  // past the fold only s lives; the rest is read again from shared memory
  const long long first = first_unit[s], count = first_unit[s + 1] - first;
  if (count == 1) {  // the segment whole: a block per segment
    if (t == 0) put<T, Op>(out, out_key, s, r);
    return;
  }
  if (t == 0) {
    Fresh<R>::put(partials + blockIdx.x, r);
    __threadfence();
    am_last = atomicAdd(tickets + s, 1u) == (unsigned)(count - 1);
  }
  __syncthreads();
  if (!am_last) return;
  __threadfence();
  R a = Op::init();  // thread i folds runs i, i + kThreads, ... in order, then the block's fixed tree
  for (long long i = t; i < count; i += kThreads) a = Op::combine(a, Fresh<R>::at(partials + first + i));
  a = block_reduce<kThreads, Op>(a, warp_partials);
  if (t == 0) {
    put<T, Op>(out, out_key, s, a);
    tickets[s] = 0u;
  }
}

// Blocks of `kernel` (kThreads each) that fit on the device at once, at most P::kMaxGrid; a negative status on
// an error.
template <typename P, typename K>
int resident_blocks(K kernel, const char* what) {
  int per_sm = 0;
  int rc = host::cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, P::kThreads, 0), what);
  if (rc) return -rc;
  long long g = (long long)(per_sm > 0 ? per_sm : 1) * host::sm_count();
  return (int)(g < P::kMaxGrid ? g : P::kMaxGrid);
}

// Blocks of the tile pass: all that fit on the device at once (cached per device), at most P::kMaxGrid.
template <typename T, typename P, typename Op>
int tile_grid() {
  static int per_device[host::kMaxDevices];
  int& cached = per_device[host::current_device()];
  if (!cached) {
    const int g = resident_blocks<P>(tiles_kernel<T, P, Op>, "occupancy(segmented_reduce tiles)");
    if (g < 0) return g;
    cached = g;
  }
  return cached;
}

// Blocks of the one-launch path's kernel that fit on the device at once (cached per device), at most
// P::kMaxGrid: its own occupancy (its registers differ from the tile pass's), so that its plan (units at most
// the launch's blocks, few_blocks()) runs in one wave.
template <typename T, typename O, typename P, typename Op>
int few_grid() {
  static int per_device[host::kMaxDevices];
  int& cached = per_device[host::current_device()];
  if (!cached) {
    const int g = resident_blocks<P>(few_kernel<T, O, P, Op>, "occupancy(segmented_reduce few)");
    if (g < 0) return g;
    cached = g;
  }
  return cached;
}

// Workspace bytes for `segments` segments.
template <typename P>
size_t workspace_bytes(long long segments) {
  return kCounterBytes + kTicketBytes + partial_bytes<P>() + sizeof(Entry) * (size_t)(segments > 0 ? segments : 0);
}

template <typename T, typename O, typename P, typename Op>
int run(const void* in, const void* begins, const void* ends, long long segments, void* out, long long* out_key,
        void* ws, size_t ws_bytes, cudaStream_t s) {
  typedef typename Op::R R;
  if (segments == 0) return MUH_OK;
  if (segments >= kMaxSegments)
    return host::fail(MUH_ERR_ARGUMENT, "muh_segmented_reduce: %lld segments, at most %lld", segments,
                      kMaxSegments - 1);
  if (ws_bytes < workspace_bytes<P>(segments))
    return host::fail(MUH_ERR_ARGUMENT, "muh_segmented_reduce: workspace of %zu bytes is too small (%zu needed)",
                      ws_bytes, workspace_bytes<P>(segments));
  static_assert(P::kFewSegments <= kMaxFewSegments && P::kFewSegments <= P::kThreads,
                "segmented_reduce: the one-launch path plans a segment per thread of one block");
  static_assert(P::kThreads <= P::kMaxGrid, "segmented_reduce: partials for max(resident, segments) units");
  unsigned long long* counter = static_cast<unsigned long long*>(ws);
  unsigned* tickets = reinterpret_cast<unsigned*>(static_cast<char*>(ws) + kCounterBytes);
  R* partials = reinterpret_cast<R*>(static_cast<char*>(ws) + kCounterBytes + kTicketBytes);
  Entry* list = reinterpret_cast<Entry*>(static_cast<char*>(ws) + kCounterBytes + kTicketBytes + partial_bytes<P>());
  if (launches<P>(segments) == 1) {
    const int resident = few_grid<T, O, P, Op>();
    if (resident < 0) return -resident;
    few_kernel<T, O, P, Op><<<(unsigned)few_blocks(segments, resident), P::kThreads, 0, s>>>(
        static_cast<const T*>(in), static_cast<const O*>(begins), static_cast<const O*>(ends), (int)segments,
        static_cast<T*>(out), out_key, partials, tickets);
    return host::launch_check("segmented_reduce launch (few segments)");
  }
  const int grid = tile_grid<T, P, Op>();
  if (grid < 0) return -grid;
  int rc = host::cuda_check(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), s), "segmented_reduce memset");
  if (rc) return rc;
  const long long blocks = (segments + P::kSmallThreads - 1) / P::kSmallThreads;
  if (blocks > 2147483647LL)
    return host::fail(MUH_ERR_ARGUMENT, "muh_segmented_reduce: %lld segments is too many", segments);
  small_kernel<T, O, P, Op><<<(unsigned)blocks, P::kSmallThreads, 0, s>>>(
      static_cast<const T*>(in), static_cast<const O*>(begins), static_cast<const O*>(ends), segments,
      static_cast<T*>(out), out_key, list, counter);
  rc = host::launch_check("segmented_reduce launch (segments)");
  if (rc) return rc;
  tiles_kernel<T, P, Op>
      <<<grid, P::kThreads, 0, s>>>(static_cast<const T*>(in), static_cast<T*>(out), out_key, list, counter, partials);
  rc = host::launch_check("segmented_reduce launch (tiles)");
  if (rc) return rc;
  fixup_kernel<T, P, Op><<<grid, warp::kSize, 0, s>>>(static_cast<T*>(out), out_key, list, counter, partials, grid);
  return host::launch_check("segmented_reduce launch (fixup)");
}

}  // namespace segmented_reduce_impl MUH_LIBRARY_LOCAL
}  // namespace muh
