// LSD radix sort, Onesweep-style (Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix
// Sort for GPUs", 2022; the algorithm of CUB's DeviceRadixSort), static CUDA: no numbers of its own;
// kernels/radix_sort.cu instantiates it with each key type's resolved policy (params.cuh). Compiles on its
// own against the generated include/muh layer (warp.cuh, block.cuh, scan_tile.cuh): C++14, CUDA 10.2 subset.
//
// A sort of n keys over bits [begin, end) in passes of kBits-bit digits (least significant first):
//   1. histogram_kernel: every pass's digit counts over all keys, in one read of the keys;
//   2. exclusive_sum_kernel: per pass, the counts' exclusive prefix (where each digit starts);
//   3. onesweep_kernel, once per pass: each block takes the next tile (an atomic counter, so every tile a
//      block waits for belongs to a block already running), ranks its keys stably by digit, publishes its
//      per-digit counts as soon as it has counted them (before the ranks, as CUB's early counts), writes its keys
//      to shared memory in sorted order, and finds where its keys of each digit go by a decoupled look-back over the
//      counts of the tiles before it (one thread per digit); then scatters keys (and values) through
//      shared memory so that the writes of one digit are contiguous.
// A problem of at most one single-tile block's keys is sorted by single_tile_kernel, all passes in one
// block, keys held in shared memory between passes.
//
// Keys are sorted as unsigned bit patterns: signed keys with the sign bit flipped, floating point keys
// with the sign bit flipped when positive and all bits flipped when negative (so -NaN < -inf < ... < -0,
// +0 < ... < +inf < +NaN by bits); descending sorts flip every bit. As in CUB, -0.0 and +0.0 have one
// digit (that of +0.0): they are equal keys and keep their input order. The sort is stable.
//
// Ranking (per tile, per pass): warp-private digit counts (shared-memory atomics), summed over the warps
// per digit, a block scan over digits; then each key's rank is its warp's running offset for the digit
// plus the peers below it in the warp, found with a match over the digit's bits (warp::match_any: one
// ballot per bit, over the full logical warp), the highest peer adding the group's size.
//
// The look-back words are the scan's (scan_tile::TileState of 4-byte values: the launch's epoch and
// AGGREGATE / PREFIX in the high half, the count in the low half), one per (tile, digit); the epoch makes
// words of earlier passes read as "not published", so the status array is never cleared.
//
// Policy P (enums): kBits (radix bits per pass), kThreads, kItems (onesweep tile), kMinBlocks (onesweep blocks
// per SM its registers are bounded for: keys only, and keys of at most 4 bytes with 4-byte values); kHistThreads,
// kHistItems (histogram tile), kHistMinBlocks (histogram blocks per SM its registers are bounded for),
// kHistBlocksPerSm (the histogram's grid per SM); kScanThreads (exclusive sum block); kSingleThreads,
// kSingleItems, kSingleBits (single-tile block).
#pragma once

#include <stdint.h>

#include "muh/block.cuh"
#include "muh/kernels/params.cuh"
#include "muh/scan_tile.cuh"
#include "muh/types.cuh"
#include "muh/warp.cuh"

#include "muh/linkage.cuh"  // MUH_LIBRARY_LOCAL

namespace muh {
namespace radix_sort MUH_LIBRARY_LOCAL {

enum { kMaxPasses = 16, kHeadBytes = 512 };  // passes per sort (radix bits >= 4 for 64-bit keys)

// ---- key bits ------------------------------------------------------------------------------------

template <int kBytes>
struct Bits;
template <>
struct Bits<1> {
  typedef unsigned char type;
};
template <>
struct Bits<2> {
  typedef unsigned short type;
};
template <>
struct Bits<4> {
  typedef unsigned type;
};
template <>
struct Bits<8> {
  typedef unsigned long long type;
};

enum { kUnsigned = 0, kSigned = 1, kFloat = 2 };

// Order-preserving bit transform of a key of kind kKind held as unsigned bits U.
template <typename U, int kKind>
struct Order {
  static __host__ __device__ __forceinline__ U high() { return (U)((U)1 << (8 * sizeof(U) - 1)); }
  static __device__ __forceinline__ U in(U b) {
    if (kKind == kSigned) return (U)(b ^ high());
    if (kKind == kFloat) return (b & high()) ? (U)~b : (U)(b ^ high());
    return b;
  }
  static __device__ __forceinline__ U out(U b) {
    if (kKind == kSigned) return (U)(b ^ high());
    if (kKind == kFloat) return (b & high()) ? (U)(b ^ high()) : (U)~b;
    return b;
  }
};

// What the passes see of a key: its ordered bits (flipped for a descending sort), -0.0 as +0.0.
template <typename U, int kKind>
struct Digits {
  U flip;  // all ones for a descending sort
  unsigned shift, mask;
  __device__ __forceinline__ U ordered(U raw) const { return (U)(Order<U, kKind>::in(raw) ^ flip); }
  __device__ __forceinline__ U raw(U ord) const { return Order<U, kKind>::out((U)(ord ^ flip)); }
  // The digits of pass p of a sort over bits [begin, end): kBits bits from begin + p * kBits, fewer in the last.
  template <int kBits>
  __host__ __device__ __forceinline__ Digits pass(int begin, int end, int p) const {
    Digits d = *this;
    d.shift = (unsigned)(begin + p * kBits);
    const int nb = end - (int)d.shift < kBits ? end - (int)d.shift : kBits;
    d.mask = (1u << nb) - 1u;
    return d;
  }
  // The bits a key's digits are read from: its ordered bits, -0.0's those of +0.0.
  __device__ __forceinline__ U counted(U ord) const {
    if (kKind == kFloat) {
      const U minus_zero = (U)(Order<U, kKind>::in(Order<U, kKind>::high()) ^ flip);
      if (ord == minus_zero) ord = (U)(Order<U, kKind>::in((U)0) ^ flip);
    }
    return ord;
  }
  __device__ __forceinline__ unsigned digit_of_counted(U c) const { return (unsigned)(c >> shift) & mask; }
  __device__ __forceinline__ unsigned digit(U ord) const { return digit_of_counted(counted(ord)); }
};

// ---- workspace -----------------------------------------------------------------------------------
// [0, 4): the epoch of the last sort (kept between calls); [64, 64 + 4 * kMaxPasses): each pass's tile
// counter; [kHeadBytes, + passes * radix * 4): the digit counts, then their exclusive prefixes; then the
// look-back words (8 bytes per tile and digit). The counters and counts are cleared per sort (memset);
// the look-back words never are (epochs).

struct Workspace {
  static __host__ __device__ size_t counts_offset() { return kHeadBytes; }
  static __host__ __device__ size_t status_offset(int passes, int radix) {
    return ((size_t)kHeadBytes + (size_t)passes * radix * 4u + 255u) / 256u * 256u;
  }
  static __host__ __device__ size_t bytes(long long tiles, int passes, int radix) {
    return status_offset(passes, radix) + (size_t)tiles * radix * 8u;
  }
  static __host__ __device__ unsigned* epoch(void* ws) { return static_cast<unsigned*>(ws); }
  static __host__ __device__ unsigned* counters(void* ws) {
    return reinterpret_cast<unsigned*>(static_cast<char*>(ws) + 64);
  }
  static __host__ __device__ unsigned* counts(void* ws) {
    return reinterpret_cast<unsigned*>(static_cast<char*>(ws) + counts_offset());
  }
  static __host__ __device__ unsigned long long* status(void* ws, int passes, int radix) {
    return reinterpret_cast<unsigned long long*>(static_cast<char*>(ws) + status_offset(passes, radix));
  }
};

enum { kEpochMask = (1 << 30) - 1 };  // the look-back word keeps 30 bits of the epoch

// ---- 1. histogram --------------------------------------------------------------------------------

// The most digit passes a key of U has (the histogram's shared counts are sized to them: 4 KB for four-byte keys
// at 8 bits, as CUB's; sized to kMaxPasses they were 16 KB and cost the kernel resident blocks).
template <typename U, int kBits>
struct MaxPasses {
  enum { value = (8 * (int)sizeof(U) + kBits - 1) / kBits };
};

// One whole tile's keys counted into every pass's shared counts: its keys loaded first (kHistItems loads in flight
// per thread; -0.0 made +0.0 once here, not in every pass), then pass by pass (its shift and mask computed once per
// tile), no bound checks.
template <typename U, int kKind, typename P, int kPasses, int kRadix>
__device__ __forceinline__ void histogram_tile(const U* keys, long long base, const Digits<U, kKind>& dg, int begin,
                                               int end, int passes, unsigned (&hist)[kPasses][kRadix]) {
  U ord[P::kHistItems];
  const U* at = keys + base + threadIdx.x;
#pragma unroll
  for (int u = 0; u < P::kHistItems; ++u) ord[u] = dg.counted(dg.ordered(at[u * P::kHistThreads]));
#pragma unroll
  for (int p = 0; p < kPasses; ++p)
    if (p < passes) {
      const Digits<U, kKind> d = dg.template pass<P::kBits>(begin, end, p);
#pragma unroll
      for (int u = 0; u < P::kHistItems; ++u) atomicAdd(&hist[p][d.digit_of_counted(ord[u])], 1u);
    }
}

// The last, partial tile: key by key (a rolled loop: unrolled beside the whole tiles' copy, its checks made ptxas
// spill the kernel at its register bound).
template <typename U, int kKind, typename P, int kPasses, int kRadix>
__device__ __forceinline__ void histogram_rest(const U* keys, long long base, long long n, const Digits<U, kKind>& dg,
                                               int begin, int end, int passes, unsigned (&hist)[kPasses][kRadix]) {
#pragma unroll 1
  for (long long i = base + threadIdx.x; i < n; i += P::kHistThreads) {
    const U c = dg.counted(dg.ordered(keys[i]));
#pragma unroll 1
    for (int p = 0; p < passes; ++p)
      atomicAdd(&hist[p][dg.template pass<P::kBits>(begin, end, p).digit_of_counted(c)], 1u);
  }
}

template <typename U, int kKind, typename P>
__global__ void __launch_bounds__(P::kHistThreads, P::kHistMinBlocks)
    histogram_kernel(const U* keys, long long n, Digits<U, kKind> dg, int begin, int end, int passes,
                     unsigned* counts) {
  // blockIdx.y: the row (rows sorted each on its own: n keys a row, the counts of row r at counts + r * passes *
  // radix); one row otherwise
  keys += (size_t)blockIdx.y * (size_t)n;
  counts += (size_t)blockIdx.y * (size_t)passes * (1u << P::kBits);
  enum { kRadix = 1 << P::kBits, kTile = P::kHistThreads * P::kHistItems, kPasses = MaxPasses<U, P::kBits>::value };
  __shared__ unsigned hist[kPasses][kRadix];
  for (int i = threadIdx.x; i < kPasses * kRadix; i += P::kHistThreads) hist[i / kRadix][i % kRadix] = 0;
  __syncthreads();
  // the whole tiles (no bound checks: they and the constants ptxas reloaded per key cost the kernel 634 us against
  // CUB's 458 us at 2^28 uint32 keys, H100, bench/results/radix-sort-h100-2026-12-06/run7), then the last partial one
  const long long full = n / kTile * kTile;
  long long base = (long long)blockIdx.x * kTile;
  for (; base < full; base += (long long)gridDim.x * kTile)
    histogram_tile<U, kKind, P>(keys, base, dg, begin, end, passes, hist);
  if (base < n) histogram_rest<U, kKind, P>(keys, base, n, dg, begin, end, passes, hist);
  __syncthreads();
  for (int i = threadIdx.x; i < passes * kRadix; i += P::kHistThreads) {
    const unsigned c = hist[i / kRadix][i % kRadix];
    if (c) atomicAdd(counts + i, c);
  }
}

// ---- 2. exclusive sum of each pass's counts (block p: pass p); block 0 also advances the epoch -----

struct Add {
  __device__ __forceinline__ unsigned operator()(unsigned a, unsigned b) const { return a + b; }
};

template <typename P>
__global__ void __launch_bounds__(P::kScanThreads)
    exclusive_sum_kernel(unsigned* counts, unsigned* epoch, int passes, long long cols) {
  // block b: pass b % passes of row b / passes; each start includes the row's first element (row * cols)
  const unsigned row_base = (unsigned)((long long)(blockIdx.x / (unsigned)passes) * cols);
  enum { kRadix = 1 << P::kBits, kPer = (kRadix + P::kScanThreads - 1) / P::kScanThreads };
  __shared__ unsigned tmp[P::kScanThreads / warp::kSize];
  unsigned* c = counts + (size_t)blockIdx.x * kRadix;
  unsigned v[kPer], sum = 0;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int b = threadIdx.x * kPer + j;
    v[j] = b < kRadix ? c[b] : 0u;
    sum += v[j];
  }
  unsigned total;
  unsigned ex = block::exclusive_scan<P::kScanThreads>(sum, Add(), 0u, tmp, total);
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int b = threadIdx.x * kPer + j;
    if (b < kRadix) c[b] = row_base + ex;
    ex += v[j];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *epoch = (*epoch + (unsigned)passes) & (unsigned)kEpochMask;
}

#if MUH_WARP_HAS_MATCH  // ranking matches digits with warp ballots (none cover a 128-lane warp)

// ---- ranking (shared by the onesweep and single-tile kernels) --------------------------------------
// Keys are held warp-striped: item u of lane l of warp w is the tile's key w * kItems * kSize + u * kSize + l,
// so a tile's keys in (warp, item, lane) order are its keys in memory order, and ranking in that order is
// stable.

// kPtxVote: warp::match_any's form (the PTX vote is faster for 4-byte keys, slower for 8-byte ones).
template <int kThreads, int kItems, int kBits, bool kPtxVote = true>
struct Rank {
  enum {
    kRadix = 1 << kBits,
    kWarps = kThreads / warp::kSize,
    kPer = (kRadix + kThreads - 1) / kThreads,  // digits per thread (thread t: digits t * kPer + j)
  };
  struct Smem {
    int warp_counts[kWarps][kRadix];  // per warp and digit: count, then the warp's running offset
    unsigned scan[kWarps];
  };

  // counts[j]: the tile's count of digit t * kPer + j; excl[j]: keys of the tile with a smaller digit.
  // digits[u] >= kRadix marks a key that is not ranked (past the end of the tile). `on_counts(counts)` is called
  // as soon as the counts are known, before the block scan and the ranks (the onesweep kernel publishes them
  // there for the tiles after it, as CUB's early-counts callback does). Inlined where a ballot is one vote
  // (warp::kBallotIsVote); where it is a shuffle butterfly (a 64-lane warp) or an exchange (emulated), one
  // out-of-line copy serves every kernel of the same shape, which keeps the build's size and compile time in
  // check.
  template <bool kPartial, typename F>
  static __device__ __forceinline__ void run(Smem& s, const unsigned (&digits)[kItems], int (&ranks)[kItems],
                                             unsigned (&counts)[kPer], unsigned (&excl)[kPer], const F& on_counts) {
    if (!warp::kBallotIsVote) {
      outlined<kPartial>(s, digits, ranks, counts, excl, on_counts);
    } else {
      body<kPartial>(s, digits, ranks, counts, excl, on_counts);
    }
  }
  template <bool kPartial, typename F>
  static __device__ __noinline__ void outlined(Smem& s, const unsigned (&digits)[kItems], int (&ranks)[kItems],
                                               unsigned (&counts)[kPer], unsigned (&excl)[kPer], const F& on_counts) {
    body<kPartial>(s, digits, ranks, counts, excl, on_counts);
  }
  template <bool kPartial, typename F>
  static __device__ __forceinline__ void body(Smem& s, const unsigned (&digits)[kItems], int (&ranks)[kItems],
                                              unsigned (&counts)[kPer], unsigned (&excl)[kPer], const F& on_counts) {
    const int w = warp::id();
    for (int b = warp::lane(); b < kRadix; b += warp::kSize) s.warp_counts[w][b] = 0;
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kItems; ++u)
      if (!kPartial || digits[u] < (unsigned)kRadix) atomicAdd(&s.warp_counts[w][digits[u]], 1);
    __syncthreads();
    unsigned sum = 0;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int b = threadIdx.x * kPer + j;
      unsigned run = 0;
      if (b < kRadix)
        for (int v = 0; v < kWarps; ++v) {
          const int c = s.warp_counts[v][b];
          s.warp_counts[v][b] = (int)run;
          run += (unsigned)c;
        }
      counts[j] = run;
      sum += run;
    }
    on_counts(counts);
    unsigned total;
    unsigned ex = block::exclusive_scan<kThreads>(sum, Add(), 0u, s.scan, total);
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int b = threadIdx.x * kPer + j;
      excl[j] = ex;
      if (b < kRadix)
        for (int v = 0; v < kWarps; ++v) s.warp_counts[v][b] += (int)ex;
      ex += counts[j];
    }
    __syncthreads();
    int* mine = s.warp_counts[w];
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      const unsigned d = digits[u];
      const warp::mask_t peers = warp::match_any<(kPartial ? kBits + 1 : kBits), kPtxVote>(d);
      const int leader = warp::last_lane(peers);
      const int below = warp::popc(peers & warp::lanes_below());
      int base = 0;
      if (warp::lane() == leader && (!kPartial || d < (unsigned)kRadix)) base = atomicAdd(mine + d, warp::popc(peers));
      base = warp::shfl_idx(base, leader);
      ranks[u] = base + below;
    }
  }
};

// What the single-tile kernel does with a tile's counts as the ranking finds them: nothing.
struct IgnoreCounts {
  template <typename A>
  __device__ __forceinline__ void operator()(const A&) const {}
};

// ---- 3. one pass: onesweep --------------------------------------------------------------------------

// A tile's digit counts published for the tiles after it (tile 0's are already its inclusive prefix): thread t
// publishes digits t * kPer + j.
template <int kRadix, int kPer>
struct PublishCounts {
  scan_tile::TileState<unsigned, 0> st;
  long long tile;
  bool first;  // the first tile of its row (of the sort: one row): its counts are already its inclusive prefix
  unsigned epoch;
  __device__ __forceinline__ void operator()(const unsigned (&counts)[kPer]) const {
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int b = threadIdx.x * kPer + j;
      if (b < kRadix)
        st.publish(tile * kRadix + b, epoch, first ? scan_tile::kPrefix : scan_tile::kAggregate, counts[j]);
    }
  }
};

struct NoValue {};  // the values of a keys-only sort

template <typename V>
struct Payload {  // values of a key-value sort (V: the values' raw bits; NoValue: keys only)
  enum { kBytes = sizeof(V) };
};
template <>
struct Payload<NoValue> {
  enum { kBytes = 0 };
};

// What a sort of rows does with its values (sort_rows: the values are each key's column, argsort's indices), per
// pass: kMadeColumns, the pass reads no values but makes each key's column in its row (the first pass); kWideOut,
// the pass writes each value as a 64-bit integer (the last pass: the int64 indices argsort returns, without a
// conversion kernel after the sort). Only the per-row kernel (kRows) reads them: the flat one compiles them away.
enum RowValues { kMadeColumns = 1, kWideOut = 2 };

// A value as the 64-bit index a kWideOut pass writes (its bits zero-extended: a column is never negative).
template <typename V>
__device__ __forceinline__ long long widened(V v) {
  return (long long)v;
}
template <>
__device__ __forceinline__ long long widened<NoValue>(NoValue) {
  return 0;
}
// A made value (kMadeColumns): the key's column.
template <typename V>
__device__ __forceinline__ V column_value(long long column) {
  return (V)column;
}
template <>
__device__ __forceinline__ NoValue column_value<NoValue>(long long) {
  return NoValue();
}

// Where a pair sort's kernel keeps its values in shared memory: beside the keys (kBeside: keys of at most 4 bytes
// with 4-byte values, the pairs whose kernel is bounded to kMinBlocks blocks per SM), exchanged with them and moved
// by the same scatter, which reads a value's digit from its key; or over the keys once they are written (wider
// pairs: the shared memory a block needs stays that of its widest element).
template <typename U, typename V>
struct OnesweepLayout {
  enum {
    kPairs = Payload<V>::kBytes != 0,
    kBeside = kPairs && Payload<V>::kBytes == 4 && sizeof(U) <= 4,
    kBounded = !kPairs || kBeside,  // __launch_bounds__ at kMinBlocks (other pairs spilled there at two blocks)
  };
};

// The onesweep block's shared memory: the ranking's counts, overlaid by the keys in tile order once ranked (and a
// pair sort's values, over them or beside them: OnesweepLayout); the tile slot and the digits' global offsets.
template <typename U, typename V, int kThreads, int kItems, int kBits>
struct OnesweepSmem {
  typedef Rank<kThreads, kItems, kBits> R;
  enum {
    kTile = kThreads * kItems,
    kBeside = OnesweepLayout<U, V>::kBeside,
    kKeys = kTile * (int)sizeof(U),
    kOver = kBeside ? kKeys : kTile * (int)(sizeof(U) > (size_t)Payload<V>::kBytes ? sizeof(U) : Payload<V>::kBytes),
    kRankBytes = sizeof(typename R::Smem),
    kUnion = kOver > kRankBytes ? kOver : kRankBytes,
    kValsOffset = kBeside ? (kUnion + 15) / 16 * 16 : 0,
    kSlotOffset = (kUnion + 15) / 16 * 16 + (kBeside ? (kTile * Payload<V>::kBytes + 15) / 16 * 16 : 0),
    kBytes = kSlotOffset + 16 + (1 << kBits) * 4,
  };
};

// A ranked tile's keys (or values) to shared memory in sorted order.
template <bool kFull, typename T, int kItems>
__device__ __forceinline__ void to_tile_order(const T (&x)[kItems], const int (&ranks)[kItems], int valid, int seg,
                                              T* x_x) {
#pragma unroll
  for (int u = 0; u < kItems; ++u)
    if (kFull || seg + u * warp::kSize < valid) x_x[ranks[u]] = x[u];
}

// A tile's values (warp-striped, as its keys), loaded only once its keys are ranked (as CUB does: not live over
// the ranking).
// (The thread's first value's index recomputed here from its warp and lane, not the kernel's: given the kernel's,
// ptxas took 168 registers and spilled for 1- and 2-byte values, nvcc 13.0.)
// `column`: the tile's first key's column in its row where the pass makes the values (kMadeColumns), else < 0.
template <bool kFull, typename V, int kItems>
__device__ __forceinline__ void load_values(const V* vals_in, long long base, int valid, long long column,
                                            V (&vals)[kItems]) {
  const long long first = base + (long long)warp::id() * kItems * warp::kSize + warp::lane();
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const int at = (int)(first - base) + u * warp::kSize;
    if (kFull || at < valid) vals[u] = column >= 0 ? column_value<V>(column + at) : vals_in[first + u * warp::kSize];
  }
}

// A ranked tile's keys to shared memory in sorted order, and (kPairs) its values beside them.
template <bool kPairs, bool kFull, typename U, typename V, int kItems>
__device__ __forceinline__ void exchange(const U (&keys)[kItems], const int (&ranks)[kItems], const V* vals_in,
                                         long long base, int valid, long long column, int seg, U* keys_x, V* vals_x) {
  to_tile_order<kFull>(keys, ranks, valid, seg, keys_x);
  if (kPairs) {
    V vals[kItems];
    load_values<kFull>(vals_in, base, valid, column, vals);
    to_tile_order<kFull>(vals, ranks, valid, seg, vals_x);
  }
}

// One tile of a onesweep pass (kFull: all kTile keys present, no bound checks).
template <bool kFull, typename U, int kKind, typename V, typename P>
__device__ __forceinline__ void onesweep_tile(const U* keys_in, U* keys_out, const V* vals_in, V* vals_out,
                                              const Digits<U, kKind>& dg, const unsigned* starts,
                                              unsigned long long* status, unsigned tile, unsigned row_first,
                                              long long base, int valid, unsigned epoch, unsigned char* smem_raw,
                                              long long column, long long* wide_out) {
  typedef Rank<P::kThreads, P::kItems, P::kBits, (sizeof(U) <= 4)> R;
  typedef OnesweepSmem<U, V, P::kThreads, P::kItems, P::kBits> S;
  enum { kRadix = 1 << P::kBits, kPer = R::kPer, kItems = P::kItems };
  static_assert(P::kBits <= 8, "digits are kept 8 bits each (radix_sort/__init__.py MAX_BITS)");
  enum {
    kPairs = OnesweepLayout<U, V>::kPairs,
    kBeside = OnesweepLayout<U, V>::kBeside,  // values exchanged with the keys (else after the keys are written)
    // a whole tile's keys (and values beside them) exchanged before the look-back where the kernel is bounded to
    // kMinBlocks blocks; the last, partial tile's after it (with its bound checks, exchanged first it spilled)
    kExchangeFirst = kFull && OnesweepLayout<U, V>::kBounded && P::kMinBlocks > 1,
  };
  typename R::Smem& rank_smem = *reinterpret_cast<typename R::Smem*>(smem_raw);
  U* keys_x = reinterpret_cast<U*>(smem_raw);
  V* vals_x = reinterpret_cast<V*>(smem_raw + S::kValsOffset);
  unsigned* global_off = reinterpret_cast<unsigned*>(smem_raw + S::kSlotOffset) + 4;

  // keys (warp-striped) as ordered bits
  U keys[kItems];
  const int seg = warp::id() * kItems * warp::kSize + warp::lane();
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const int at = seg + u * warp::kSize;
    keys[u] = (kFull || at < valid) ? dg.ordered(keys_in[base + at]) : (U)0;
  }

  // ranks; the digits are dead after the ranking (the scatter reads each key's digit from the exchanged keys): held
  // past it they were kItems more live registers over the look-back, which cost the kernel its second block
  // per SM (bench/results/radix-sort-static-2026-12-06.md)
  // this tile's counts are published as soon as the ranking has them (PublishCounts), then the look-back below
  // finds the counts of the tiles before it (one thread per digit)
  int ranks[kItems];
  unsigned counts[kPer], excl[kPer];
  PublishCounts<kRadix, kPer> publish;
  publish.st.words = status;
  publish.tile = (long long)tile;
  publish.first = tile == row_first;
  publish.epoch = epoch;
  const scan_tile::TileState<unsigned, 0>& st = publish.st;
  {
    unsigned digits[kItems];
#pragma unroll
    for (int u = 0; u < kItems; ++u)
      digits[u] = (kFull || seg + u * warp::kSize < valid) ? dg.digit(keys[u]) : (unsigned)kRadix;
    R::template run<!kFull>(rank_smem, digits, ranks, counts, excl, publish);
  }
  // The keys to shared memory in their tile order (position i of the tile's sorted keys goes to
  // global_off[digit] + i), and a pair sort's values beside them, loaded only now (as CUB does: not live over the
  // ranking): before the look-back where the kernel is bounded to two blocks per SM (as CUB does: the registers
  // are free while it waits, and the values' loads overlap the wait; after it, ptxas spilled at 80 registers),
  // after it otherwise (before it, unbounded, ptxas took 128-168 registers and spilled).
  if (kExchangeFirst) {
    __syncthreads();  // every warp ranked (the exchange buffer overlays the ranking's counts)
    exchange<kBeside, kFull>(keys, ranks, vals_in, base, valid, column, seg, keys_x, vals_x);
  }
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int b = threadIdx.x * kPer + j;
    if (b < kRadix) {
      unsigned before = 0;
      for (long long t = (long long)tile - 1; t >= (long long)row_first; --t) {  // the row's tiles before this one
        int kind;
        unsigned v;
        do {
          st.read(t * kRadix + b, epoch, kind, v);
        } while (kind == scan_tile::kInvalid);
        before += v;
        if (kind == scan_tile::kPrefix) break;
      }
      if (tile != row_first) st.publish((long long)tile * kRadix + b, epoch, scan_tile::kPrefix, before + counts[j]);
      // where this tile's keys of digit b go: its row's first element (starts holds it, with the row's digit
      // starts), the keys of digit b in the row's tiles before it, less the tile's keys of smaller digits
      global_off[b] = starts[b] + before - excl[j];
    }
  }
  __syncthreads();  // the offsets known (and the exchanged keys written, or the ranking done)
  if (!kExchangeFirst) {
    exchange<kBeside, kFull>(keys, ranks, vals_in, base, valid, column, seg, keys_x, vals_x);
    __syncthreads();
  }
  // keys (and values beside them) out: thread t moves positions u * kThreads + t of the tile's sorted keys, so
  // that a warp's writes of one digit are contiguous. Where values are beside the keys, the loop is unrolled ten
  // times, not kItems: fully unrolled, ptxas read every key and value of the thread ahead and spilled float keys'
  // pairs at 80 registers (four times, int32 keys' pairs spilled once whole tiles had their own path). Where
  // values come after the keys, the digits of the keys a thread wrote are kept for them, 8 bits each (kBits <= 8),
  // four to a register.
  enum { kScatterUnroll = kBeside ? 10 : kItems, kLater = kPairs && !kBeside };
  unsigned out_digits[kLater ? (kItems + 3) / 4 : 1];
#pragma unroll
  for (int j = 0; j < (kLater ? (kItems + 3) / 4 : 1); ++j) out_digits[j] = 0u;
#pragma unroll kScatterUnroll
  for (int u = 0; u < kItems; ++u) {
    const int i = u * P::kThreads + threadIdx.x;
    if (kFull || i < valid) {
      const U k = keys_x[i];
      const unsigned d = dg.digit(k);
      const unsigned at = global_off[d] + (unsigned)i;
      keys_out[at] = dg.raw(k);
      if (kBeside) {
        if (wide_out)
          wide_out[at] = widened(vals_x[i]);
        else
          vals_out[at] = vals_x[i];
      }
      if (kLater) out_digits[u / 4] |= d << (8 * (u % 4));
    }
  }
  if (kLater) {  // the values over the keys, now written
    V vals[kItems];
    load_values<kFull>(vals_in, base, valid, column, vals);
    V* over = reinterpret_cast<V*>(smem_raw);
    __syncthreads();
    to_tile_order<kFull>(vals, ranks, valid, seg, over);
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      const int i = u * P::kThreads + threadIdx.x;
      if (kFull || i < valid) {
        const unsigned at = global_off[(out_digits[u / 4] >> (8 * (u % 4))) & 0xffu] + (unsigned)i;
        if (wide_out)
          wide_out[at] = widened(over[i]);
        else
          vals_out[at] = over[i];
      }
    }
  }
}

// One digit pass of keys (and values V, NoValue for none). `epoch_of` is the epoch word; this pass's epoch
// is epoch - (passes - 1 - pass). Bounded to kMinBlocks blocks per SM for keys only and for keys of at most 4
// bytes with 4-byte values (argsort's indices: OnesweepLayout); other pairs spilled there at two blocks (8-byte
// ones hold twice the registers; float32 keys with 1- and 2-byte values 136 bytes, ptxas 13.0), and keep one.
template <typename U, int kKind, typename V, typename P, bool kRows>
__global__ void __launch_bounds__(P::kThreads, OnesweepLayout<U, V>::kBounded ? P::kMinBlocks : 1)
    onesweep_kernel(const U* keys_in, U* keys_out, const V* vals_in, V* vals_out, long long cols,
                    unsigned tiles_per_row, Digits<U, kKind> dg, const unsigned* starts, int starts_stride,
                    unsigned long long* status, unsigned* counter, const unsigned* epoch_of, int back, int row_values) {
  typedef OnesweepSmem<U, V, P::kThreads, P::kItems, P::kBits> S;
  enum { kTile = P::kThreads * P::kItems };
  extern __shared__ __align__(16) unsigned char smem_raw[];
  unsigned* tile_slot = reinterpret_cast<unsigned*>(smem_raw + S::kSlotOffset);

  if (threadIdx.x == 0) *tile_slot = atomicAdd(counter, 1u);
  __syncthreads();
  const unsigned tile = *tile_slot;
  // kRows: the tile's row (rows sorted each on its own: sort_rows) and its place in the row; else one row of `cols`
  // keys (a separate instantiation: the row arithmetic made the flat sort's kernels spill at their register bound)
  const unsigned row = kRows ? tile / tiles_per_row : 0u, row_first = kRows ? row * tiles_per_row : 0u;
  const long long in_row = (long long)(tile - row_first) * kTile;
  const long long base = (long long)row * cols + in_row;
  const long long left = cols - in_row;
  const int valid = left < kTile ? (int)left : (int)kTile;
  if (kRows) starts += (size_t)row * (size_t)starts_stride;
  const unsigned epoch = (*epoch_of - (unsigned)back) & (unsigned)kEpochMask;
  // RowValues (kRows only; constants in the flat kernel)
  const long long column = kRows && (row_values & kMadeColumns) ? in_row : -1;
  long long* wide_out = kRows && (row_values & kWideOut) ? reinterpret_cast<long long*>(vals_out) : 0;
  // a whole tile without a bound check on any key (every tile but the last): the checks and the constants they
  // made ptxas reload per key were 17 instructions a key in the scatter alone (ncu source view, H100,
  // bench/results/radix-sort-h100-2026-12-06/run7). Where a ballot is a shuffle butterfly or an exchange (64-lane
  // and emulated warps) one path serves every tile: the build's compile time (the BI-V100's radix_sort.cu: 381 s
  // of CPU) is not doubled for a speed no GPU there has measured.
  enum { kSplit = warp::kBallotIsVote };
  if (kSplit && valid == kTile)
    onesweep_tile<kSplit, U, kKind, V, P>(keys_in, keys_out, vals_in, vals_out, dg, starts, status, tile, row_first,
                                          base, valid, epoch, smem_raw, column, wide_out);
  else
    onesweep_tile<false, U, kKind, V, P>(keys_in, keys_out, vals_in, vals_out, dg, starts, status, tile, row_first,
                                         base, valid, epoch, smem_raw, column, wide_out);
}

// ---- a small problem: every pass in one block -------------------------------------------------------

template <typename U, typename V, int kThreads, int kItems, int kBits>
struct SingleSmem {
  typedef Rank<kThreads, kItems, kBits> R;
  enum {
    kTile = kThreads * kItems,
    kKeys = (kTile * sizeof(U) + 15) / 16 * 16,
    kVals = (kTile * (size_t)Payload<V>::kBytes + 15) / 16 * 16,
    kBytes = kKeys + kVals + sizeof(typename R::Smem),
  };
};

template <typename U, int kKind, typename V, typename P>
__global__ void __launch_bounds__(P::kSingleThreads)
    single_tile_kernel(const U* keys_in, U* keys_out, const V* vals_in, V* vals_out, int n, Digits<U, kKind> dg,
                       int begin, int end, int passes) {
  typedef Rank<P::kSingleThreads, P::kSingleItems, P::kSingleBits, (sizeof(U) <= 4)> R;
  typedef SingleSmem<U, V, P::kSingleThreads, P::kSingleItems, P::kSingleBits> S;
  enum { kRadix = 1 << P::kSingleBits, kItems = P::kSingleItems, kPer = R::kPer };
  extern __shared__ __align__(16) unsigned char smem_raw[];
  U* keys_x = reinterpret_cast<U*>(smem_raw);
  V* vals_x = reinterpret_cast<V*>(smem_raw + S::kKeys);
  typename R::Smem& rank_smem = *reinterpret_cast<typename R::Smem*>(smem_raw + S::kKeys + S::kVals);

  U keys[kItems];
  V vals[kItems];
  const int seg = warp::id() * kItems * warp::kSize + warp::lane();
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const int at = seg + u * warp::kSize;
    if (at < n) {
      keys[u] = dg.ordered(keys_in[at]);
      if (Payload<V>::kBytes) vals[u] = vals_in[at];
    }
  }
  for (int p = 0; p < passes; ++p) {
    const Digits<U, kKind> d = dg.template pass<P::kSingleBits>(begin, end, p);
    unsigned digits[kItems];
#pragma unroll
    for (int u = 0; u < kItems; ++u) digits[u] = seg + u * warp::kSize < n ? d.digit(keys[u]) : (unsigned)kRadix;
    int ranks[kItems];
    unsigned counts[kPer], excl[kPer];
    R::template run<true>(rank_smem, digits, ranks, counts, excl, IgnoreCounts());
#pragma unroll
    for (int u = 0; u < kItems; ++u)
      if (digits[u] < (unsigned)kRadix) {
        keys_x[ranks[u]] = keys[u];
        if (Payload<V>::kBytes) vals_x[ranks[u]] = vals[u];
      }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      const int at = seg + u * warp::kSize;
      if (at < n) {
        keys[u] = keys_x[at];
        if (Payload<V>::kBytes) vals[u] = vals_x[at];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const int at = seg + u * warp::kSize;
    if (at < n) {
      keys_out[at] = dg.raw(keys[u]);
      if (Payload<V>::kBytes) vals_out[at] = vals[u];
    }
  }
}

#endif  // MUH_WARP_HAS_MATCH

}  // namespace radix_sort MUH_LIBRARY_LOCAL
}  // namespace muh
