// Top-k per row (values and indices, sorted descending, ties to the lower index), static CUDA: no
// numbers of its own; kernels/topk.cu instantiates it with each element type's resolved policy P
// (params.cuh). Compiles on its own against the generated common layer (include/muh: block.cuh,
// host.cuh, types.cuh); C++14 (the host side uses <mutex>/<thread>), CUDA 10.2 subset.
//
// Short rows: one block per row (topk_kernel): radix select on order-preserving key bits (kBits per
// pass, histogram in shared memory, passes stop early once the threshold digit is exact), then one
// ordered gather pass (block scans keep index order, so equal keys are taken lowest index first),
// then a bitonic sort of the k survivors by (key descending, index ascending). Long rows: several
// blocks per row (topk_slice_kernel + topk_merge_kernel, below), same result bit for bit. Rows of at
// most kWarpCols columns: one warp per row (topk_warp_kernel, below), same result bit for bit.
//
// Policy P (enums): kThreads, kItems, kVec, kBits (digit bits per pass), kBinsPerThread, kMaxK,
// kKeyBits, kPasses, the split path's kSplit, kSplitChunk, kSplitMinCols, kSplitMaxK,
// kSplitMaxRows, and the small-row path's kWarpCols, kWarpRows, kWarpVecs, kWarpMaxK.
#pragma once

#include <stdint.h>

#include <mutex>
#include <thread>

#include "muh/block.cuh"
#include "muh/host.cuh"
#include "muh/types.cuh"

namespace muh {
namespace topk_impl MUH_LIBRARY_LOCAL {

// Bitonic sort of the k survivors in shared memory (both row kernels): key descending, index
// ascending; slots k..next power of two are padded with the smallest key and the largest index.
template <int kThreads>
__device__ __forceinline__ void sort_survivors(unsigned* sel_key, int* sel_idx, int k) {
  int n2 = 1;
  while (n2 < k) n2 <<= 1;
  for (int i = k + (int)threadIdx.x; i < n2; i += kThreads) {
    sel_key[i] = 0u;
    sel_idx[i] = 2147483647;
  }
  __syncthreads();
  for (int size = 2; size <= n2; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int i = threadIdx.x; i < n2 / 2; i += kThreads) {
        const int lo = 2 * i - (i & (stride - 1));
        const int hi = lo + stride;
        const bool up = (lo & size) == 0;
        const unsigned ka = sel_key[lo], kb = sel_key[hi];
        const int ia = sel_idx[lo], ib = sel_idx[hi];
        const bool b_first = kb > ka || (kb == ka && ib < ia);
        if (b_first == up) {
          sel_key[lo] = kb;
          sel_key[hi] = ka;
          sel_idx[lo] = ib;
          sel_idx[hi] = ia;
        }
      }
      __syncthreads();
    }
  }
}

// The k survivors of row blockIdx.x sorted (sort_survivors), written out: values read back from
// the row (signed zeros and NaN payloads as they went in) and their indices.
template <int kThreads, typename T>
__device__ __forceinline__ void write_survivors(const T* row, unsigned* sel_key, int* sel_idx, int k, T* out_vals,
                                                long long* out_idx) {
  sort_survivors<kThreads>(sel_key, sel_idx, k);
  T* vo = out_vals + (long long)blockIdx.x * k;
  long long* io = out_idx + (long long)blockIdx.x * k;
  for (int i = threadIdx.x; i < k; i += kThreads) {
    vo[i] = row[sel_idx[i]];
    io[i] = sel_idx[i];
  }
}

// Order-preserving keys: a larger value gives a larger unsigned key. As in PyTorch's sort, -0.0 and +0.0
// are equal and every NaN is above +inf (all NaNs equal); values are written back from the input,
// so signed zeros and NaN payloads come out as they went in.
template <typename T>
struct Key;
template <>
struct Key<float> {
  static __device__ __forceinline__ unsigned of(float v) {
    unsigned b = __float_as_uint(v);
    if ((b & 0x7fffffffu) > 0x7f800000u) return ~0u;  // NaN
    if (b == 0x80000000u) b = 0u;                     // -0.0
    return b ^ ((b & 0x80000000u) ? ~0u : 0x80000000u);
  }
};
template <>
struct Key<__half> {
  static __device__ __forceinline__ unsigned of(__half v) {
    unsigned b = __half_as_ushort(v);
    if ((b & 0x7fffu) > 0x7c00u) return 0xffffu;
    if (b == 0x8000u) b = 0u;
    return b ^ ((b & 0x8000u) ? 0xffffu : 0x8000u);
  }
};
template <>
struct Key<bf16> {
  static __device__ __forceinline__ unsigned of(bf16 v) {
    unsigned b = v.bits;
    if ((b & 0x7fffu) > 0x7f80u) return 0xffffu;
    if (b == 0x8000u) b = 0u;
    return b ^ ((b & 0x8000u) ? 0xffffu : 0x8000u);
  }
};

// ---- the radix select and the ordered gather (all three kernels) ---------------------------------
// Shared memory of a radix select: one pass's histogram, the block scan's warp totals, the digit found.
template <typename P>
struct SelectShared {
  unsigned hist[1 << P::kBits];
  unsigned scan_tmp[block::Shape<P::kThreads>::kWarps];
  unsigned digit, above, count;
};

// Digit of the k_rem-th largest key among the counted ones (bins scanned in descending order);
// every thread gets sh.digit / sh.above / sh.count after the call.
template <typename P>
__device__ __forceinline__ void find_digit(SelectShared<P>& sh, unsigned k_rem) {
  enum { kThreads = P::kThreads, kBins = 1 << P::kBits };
  unsigned own = 0u;
#pragma unroll
  for (int j = 0; j < P::kBinsPerThread; ++j) {
    const int b = kBins - 1 - ((int)threadIdx.x * P::kBinsPerThread + j);
    if (b >= 0) own += sh.hist[b];
  }
  unsigned total;
  unsigned above = block::exclusive_scan<kThreads>(own, Sum(), 0u, sh.scan_tmp, total);
#pragma unroll
  for (int j = 0; j < P::kBinsPerThread; ++j) {
    const int b = kBins - 1 - ((int)threadIdx.x * P::kBinsPerThread + j);
    if (b >= 0) {
      const unsigned h = sh.hist[b];
      if (above < k_rem && k_rem <= above + h) {
        sh.digit = (unsigned)b;
        sh.above = above;
        sh.count = h;
      }
      above += h;
    }
  }
  __syncthreads();
}

// Radix select of the k-th largest key: pass p looks at the kBits-digit below bit kKeyBits - p*kBits
// (the last digit may be narrower), and the passes stop early once the threshold digit is exact.
// The kernel owns the loop and the loads: in pass p every thread calls start(sh, p), count() for
// each of its keys (any order, any share of the keys), then done(), which is true when no further
// pass is needed. Afterwards the top k are the keys whose bits under `mask` are above `prefix`,
// and the first `need` (in index order) of those equal to it.
template <typename P>
struct RadixSelect {
  unsigned prefix, mask, need;
  int shift;       // the pass's digit: bits shift .. shift + width - 1
  unsigned dmask;  // (1 << width) - 1

  __device__ __forceinline__ explicit RadixSelect(unsigned k) : prefix(0u), mask(0u), need(k), shift(0), dmask(0u) {}

  // The digit comes from the pass number, not carried over from the previous pass: the same
  // digits, but the compiler knows each pass's (ptxas then needs fewer registers).
  __device__ __forceinline__ void start(SelectShared<P>& sh, int pass) {
    const int hi = P::kKeyBits - pass * P::kBits;  // > 0 for pass < kPasses = ceil(kKeyBits / kBits)
    shift = hi > P::kBits ? hi - P::kBits : 0;
    dmask = (1u << (hi - shift)) - 1u;
    for (int b = threadIdx.x; b < (1 << P::kBits); b += P::kThreads) sh.hist[b] = 0u;
    __syncthreads();
  }

  __device__ __forceinline__ void count(SelectShared<P>& sh, unsigned key) const {
    if ((key & mask) == prefix) atomicAdd(&sh.hist[(key >> shift) & dmask], 1u);
  }

  __device__ __forceinline__ bool done(SelectShared<P>& sh) {
    __syncthreads();
    find_digit<P>(sh, need);
    need -= sh.above;
    prefix |= sh.digit << shift;
    mask |= dmask << shift;
    const bool exact = sh.count == need;
    __syncthreads();
    return exact;
  }
};

// The ordered gather, one tile at a time: each thread holds kN keys of the tile in index order
// (ok[j]: key j exists), the threads' runs in thread order. gather_counts gives a thread's count
// of keys above the threshold (low half) and equal to it (high half; each count of a tile must
// stay below 2^16); the kernel scans them over the block, and gather_scatter writes the thread's keys with slots
// from there: above the threshold to slot g, g+1, ...; the e-th equal one to slot n_gt + e while
// e < need (n_gt = k - need, the number above). So above-threshold keys come first, then the
// equal ones, each group in index order: equal keys are taken lowest index first.
template <typename P, int kN>
__device__ __forceinline__ unsigned gather_counts(const RadixSelect<P>& sel, const unsigned (&key)[kN],
                                                  const bool (&ok)[kN]) {
  unsigned counts = 0u;
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    const unsigned m = key[j] & sel.mask;
    if (ok[j] && m > sel.prefix) counts += 1u;
    if (ok[j] && m == sel.prefix) counts += 1u << 16;
  }
  return counts;
}

// The index a gathered key carries: its position first + j, or the merge's candidate's own index.
struct AtPosition {
  int first;
  __device__ __forceinline__ int operator()(int j) const { return first + j; }
};
struct FromTable {
  const int* idx;  // the row's candidate indices
  int first;
  __device__ __forceinline__ int operator()(int j) const { return idx[first + j]; }
};

template <typename P, int kN, typename Index>
__device__ __forceinline__ void gather_scatter(const RadixSelect<P>& sel, const unsigned (&key)[kN],
                                               const bool (&ok)[kN], unsigned n_gt, unsigned g, unsigned e,
                                               unsigned* out_key, int* out_idx, Index index) {
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    const unsigned m = key[j] & sel.mask;
    if (ok[j] && m > sel.prefix) {
      out_key[g] = key[j];
      out_idx[g] = index(j);
      ++g;
    } else if (ok[j] && m == sel.prefix) {
      if (e < sel.need) {
        out_key[n_gt + e] = key[j];
        out_idx[n_gt + e] = index(j);
      }
      ++e;
    }
  }
}

// The row kernels' gather (topk_kernel, topk_merge_kernel) over a row of tiles: construct it after
// the select, then every thread calls tile() with its keys of each tile in turn until it returns
// true (all k are gathered). The survivors land in key[0..k) / idx[0..k); gt / eq count the keys
// above / equal to the threshold in the tiles so far. (The kernels declare these as separate
// __shared__ objects: as members of one struct with SelectShared, nvcc 13.0 gave the row kernels
// up to 30 registers more on sm_90, and spills at 512 threads.)
template <typename P>
struct RowGather {
  unsigned* key;
  int* idx;
  unsigned* gt;
  unsigned* eq;
  unsigned n_gt;

  __device__ __forceinline__ RowGather(unsigned k, const RadixSelect<P>& sel, unsigned* key_, int* idx_, unsigned* gt_,
                                       unsigned* eq_)
      : key(key_), idx(idx_), gt(gt_), eq(eq_), n_gt(k - sel.need) {
    if (threadIdx.x == 0) {
      *gt = 0u;
      *eq = 0u;
    }
    __syncthreads();
  }

  template <int kN, typename Index>
  __device__ __forceinline__ bool tile(const RadixSelect<P>& sel, SelectShared<P>& sh, const unsigned (&keys)[kN],
                                       const bool (&ok)[kN], Index index) const {
    unsigned tot;
    const unsigned ex = block::exclusive_scan<P::kThreads>(gather_counts(sel, keys, ok), Sum(), 0u, sh.scan_tmp, tot);
    gather_scatter(sel, keys, ok, n_gt, *gt + (ex & 0xffffu), *eq + (ex >> 16), key, idx, index);
    __syncthreads();
    if (threadIdx.x == 0) {
      *gt += tot & 0xffffu;
      *eq += tot >> 16;
    }
    __syncthreads();
    return *gt >= n_gt && *eq >= sel.need;
  }
};

template <typename T, typename P, int kVec>
__global__ void __launch_bounds__(P::kThreads)
    topk_kernel(const T* __restrict__ in, int cols, int k, T* __restrict__ out_vals, long long* __restrict__ out_idx) {
  enum { kThreads = P::kThreads, kPerThread = P::kItems * kVec, kChunk = kThreads * kPerThread };
  __shared__ SelectShared<P> sh;
  __shared__ unsigned sel_key[P::kMaxK];
  __shared__ int sel_idx[P::kMaxK];
  __shared__ unsigned s_gt, s_eq;
  const T* row = in + (long long)blockIdx.x * cols;

  // ---- radix select: find the key prefix of the k-th largest element ----
  RadixSelect<P> sel((unsigned)k);
  for (int pass = 0; pass < P::kPasses; ++pass) {
    sel.start(sh, pass);
    for (int base = 0; base < cols; base += kChunk) {
      T v[P::kItems][kVec];
      bool ok[P::kItems];
#pragma unroll
      for (int j = 0; j < P::kItems; ++j) {
        const int i = base + (j * kThreads + (int)threadIdx.x) * kVec;
        ok[j] = i < cols;
        if (ok[j]) {
          if (kVec > 1)
            load_vec<T, kVec, true>(row + i, v[j]);
          else
            v[j][0] = row[i];
        }
      }
#pragma unroll
      for (int j = 0; j < P::kItems; ++j) {
        if (!ok[j]) continue;
#pragma unroll
        for (int e = 0; e < kVec; ++e) sel.count(sh, Key<T>::of(v[j][e]));
      }
    }
    if (sel.done(sh)) break;
  }

  // ---- gather in index order: all keys above the prefix, then the first sel.need equal to it ----
  const RowGather<P> gather((unsigned)k, sel, sel_key, sel_idx, &s_gt, &s_eq);
  for (int base = 0; base < cols; base += kChunk) {
    const int first = base + (int)threadIdx.x * kPerThread;
    unsigned key[kPerThread];
    bool ok[kPerThread];
    if (kVec > 1 && first + kPerThread <= cols) {
#pragma unroll
      for (int j = 0; j < P::kItems; ++j) {
        T v[kVec];
        load_vec<T, kVec, true>(row + first + j * kVec, v);
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          key[j * kVec + e] = Key<T>::of(v[e]);
          ok[j * kVec + e] = true;
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        ok[j] = first + j < cols;
        key[j] = ok[j] ? Key<T>::of(row[first + j]) : 0u;
      }
    }
    if (gather.tile(sel, sh, key, ok, AtPosition{first})) break;
  }

  write_survivors<kThreads>(row, sel_key, sel_idx, k, out_vals, out_idx);
}

// ---- long rows, split over several blocks -------------------------------------------------------
// (1) topk_slice_kernel: block (b, row) owns columns [b*kChunk, (b+1)*kChunk) of its row. Its keys
// are loaded once (16-byte loads, each thread a contiguous run) and canonicalised once into
// registers; the radix passes and the ordered gather then read registers only. It writes its own
// min(k, len) best (key, index) pairs to ws[row][b][0..); only the last slice can be shorter than
// k (k <= kChunk / 4), so a row's valid candidates are the prefix [0, m) of its nblk*k slots.
// (2) topk_merge_kernel: one block per row selects the k best of the row's m candidates. Within a
// slice, the pairs above its threshold come first, then the ones equal to it, each group in index
// order; keys that are equal in full fall in the same group, and slices are in index order, so
// among equal keys position order is index order and the tie rule (lowest index first) carries
// over unchanged. The global top-k under the total order (key descending, index ascending) is
// contained in the union of the slices' top-k, so the result is identical to one block per row.

template <typename P>
struct SliceSelect {
  enum { kThreads = P::kThreads, kPerThread = P::kItems * P::kVec, kChunk = kThreads * kPerThread };
};

template <typename T, typename P, bool kAligned>
__global__ void __launch_bounds__(P::kThreads)
    topk_slice_kernel(const T* __restrict__ in, int cols, int k, unsigned* __restrict__ ws_key,
                      int* __restrict__ ws_idx) {
  typedef SliceSelect<P> S;
  enum { kThreads = S::kThreads, kPerThread = S::kPerThread, kChunk = S::kChunk, kVec = P::kVec };
  __shared__ SelectShared<P> sh;

  const T* row = in + (long long)blockIdx.y * cols;
  const int start = (int)blockIdx.x * kChunk;
  const int len = cols - start < kChunk ? cols - start : kChunk;
  const int first = (int)threadIdx.x * kPerThread;  // this thread's run, relative to start
  int nvalid = len - first;
  nvalid = nvalid < 0 ? 0 : nvalid > kPerThread ? kPerThread : nvalid;
  unsigned key[kPerThread];
  bool ok[kPerThread];
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) ok[j] = j < nvalid;
  if (kAligned && nvalid == kPerThread) {
#pragma unroll
    for (int j = 0; j < P::kItems; ++j) {
      T v[kVec];
      load_vec<T, kVec, true>(row + start + first + j * kVec, v);
#pragma unroll
      for (int e = 0; e < kVec; ++e) key[j * kVec + e] = Key<T>::of(v[e]);
    }
  } else {
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) key[j] = ok[j] ? Key<T>::of(row[start + first + j]) : 0u;
  }
  const unsigned kk = (unsigned)(k < len ? k : len);

  RadixSelect<P> sel(kk);
  for (int pass = 0; pass < P::kPasses; ++pass) {
    sel.start(sh, pass);
#pragma unroll
    for (int j = 0; j < kPerThread; ++j)
      if (ok[j]) sel.count(sh, key[j]);
    if (sel.done(sh)) break;
  }

  // ordered gather straight to the workspace (one tile: the slice)
  unsigned tot;
  const unsigned ex = block::exclusive_scan<kThreads>(gather_counts(sel, key, ok), Sum(), 0u, sh.scan_tmp, tot);
  const long long base = ((long long)blockIdx.y * gridDim.x + blockIdx.x) * k;
  gather_scatter(sel, key, ok, kk - sel.need, ex & 0xffffu, ex >> 16, ws_key + base, ws_idx + base,
                 AtPosition{start + first});
}

template <typename T, typename P>
__global__ void __launch_bounds__(P::kThreads)
    topk_merge_kernel(const T* __restrict__ in, int cols, int stride, int m, int k, const unsigned* __restrict__ ws_key,
                      const int* __restrict__ ws_idx, T* __restrict__ out_vals, long long* __restrict__ out_idx) {
  enum {
    kThreads = P::kThreads,
    kPerThread = P::kItems,  // candidates are 8-byte pairs: scalar loads, kItems per thread
    kChunk = kThreads * kPerThread
  };
  __shared__ SelectShared<P> sh;
  __shared__ unsigned sel_key[P::kMaxK];
  __shared__ int sel_idx[P::kMaxK];
  __shared__ unsigned s_gt, s_eq;

  const unsigned* ck = ws_key + (long long)blockIdx.x * stride;
  const int* ci = ws_idx + (long long)blockIdx.x * stride;
  RadixSelect<P> sel((unsigned)k);
  for (int pass = 0; pass < P::kPasses; ++pass) {
    sel.start(sh, pass);
    for (int base = 0; base < m; base += kChunk) {
      unsigned key[kPerThread];
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        const int i = base + j * kThreads + (int)threadIdx.x;
        key[j] = i < m ? ck[i] : 0u;
      }
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        const int i = base + j * kThreads + (int)threadIdx.x;
        if (i < m) sel.count(sh, key[j]);
      }
    }
    if (sel.done(sh)) break;
  }

  const RowGather<P> gather((unsigned)k, sel, sel_key, sel_idx, &s_gt, &s_eq);
  for (int base = 0; base < m; base += kChunk) {
    const int first = base + (int)threadIdx.x * kPerThread;
    unsigned key[kPerThread];
    bool ok[kPerThread];
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      ok[j] = first + j < m;
      key[j] = ok[j] ? ck[first + j] : 0u;
    }
    if (gather.tile(sel, sh, key, ok, FromTable{ci, first})) break;
  }

  write_survivors<kThreads>(in + (long long)blockIdx.x * cols, sel_key, sel_idx, k, out_vals, out_idx);
}

// Workspace of the split path: one device buffer per (device, stream) (and per host thread for
// cudaStreamPerThread), grown on demand (never freed) and kept for the library's lifetime, so calls on one
// stream reuse it in stream order and calls on different streams never share one. While a stream
// is being captured into a CUDA graph no buffer is allocated (an existing one is reused); when
// none fits, or all kSlots slots are taken, the launcher falls back to one block per row.
struct WsSlot {
  int dev;
  cudaStream_t stream;
  std::thread::id thread;
  void* ptr;
  size_t bytes;
};

inline void* split_workspace(size_t bytes, cudaStream_t s) {
  enum { kSlots = 48 };  // (device, stream) pairs with a buffer
  static std::mutex mu;
  static WsSlot slots[kSlots];
  static int used = 0;
  std::lock_guard<std::mutex> lock(mu);
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  const std::thread::id tid = s == cudaStreamPerThread ? std::this_thread::get_id() : std::thread::id();
  WsSlot* slot = nullptr;
  for (int i = 0; i < used; ++i)
    if (slots[i].dev == dev && slots[i].stream == s && slots[i].thread == tid) slot = &slots[i];
  if (slot && slot->bytes >= bytes) return slot->ptr;
  cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(s, &cap) != cudaSuccess || cap != cudaStreamCaptureStatusNone) {
    cudaGetLastError();
    return nullptr;
  }
  if (!slot) {
    if (used == kSlots) return nullptr;
    slot = &slots[used++];
    slot->dev = dev;
    slot->stream = s;
    slot->thread = tid;
    slot->ptr = nullptr;
    slot->bytes = 0;
  }
  size_t want = (size_t)1 << 20;
  while (want < bytes) want <<= 1;
  // A smaller old buffer is not freed: kernels in flight or a captured graph may still use it
  // (sizes grow by doubling, so what is kept is at most the size of the newest buffer).
  void* p = nullptr;
  if (cudaMalloc(&p, want) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  slot->ptr = p;
  slot->bytes = want;
  return p;
}

// ---- short rows, one warp per row ----------------------------------------------------------------
// topk_warp_kernel: warp w of block b selects row b * kWarpRows + w (a row of at most kWarpCols
// columns, k at most kWarpMaxK). Lane l holds the row's columns [l * kPer, (l + 1) * kPer) as
// order-preserving keys in registers (kN 16-byte vectors, kN the fewest halvings of kWarpVecs that
// still cover the row; scalar loads where the row is not 16-byte aligned). The k-th largest key is
// found one key bit at a time, most significant first: the warp counts the keys that match the
// prefix so far with the bit set (a warp reduction) and keeps the bit when at least `need` do; it
// stops once exactly `need` keys match. Then the ordered gather of the row kernels (a warp scan of
// the lanes' packed counts: above-threshold keys first, then the first `need` matching ones, each
// group in index order) puts the k survivors in the warp's slice of shared memory, and each
// survivor's output position is its rank under (key descending, index ascending), counted against
// the other k - 1. All shared memory a warp uses is its own; the one __syncthreads() between writing
// and reading it is reached by every warp of the block (warp collectives never order shared memory:
// muh's warp layer is shuffles only).
template <typename T, typename P, int kN>
__global__ void __launch_bounds__(P::kThreads)
    topk_warp_kernel(const T* __restrict__ in, int rows, int cols, int k, bool aligned, T* __restrict__ out_vals,
                     long long* __restrict__ out_idx) {
  enum { kVec = P::kVec, kPer = kN * kVec, kRows = P::kThreads / warp::kSize };
  static_assert((int)kRows == (int)P::kWarpRows, "topk: rows per block differ from P::kWarpRows");
  __shared__ unsigned sel_key[kRows][P::kWarpMaxK];
  __shared__ int sel_idx[kRows][P::kWarpMaxK];
  const int w = warp::id();
  const long long r = (long long)blockIdx.x * kRows + w;
  const bool live = r < rows;  // the same for every lane of the warp
  const T* row = in + (live ? r : 0LL) * cols;
  const int first = warp::lane() * kPer;
  int nvalid = live ? cols - first : 0;
  nvalid = nvalid < 0 ? 0 : nvalid > kPer ? kPer : nvalid;
  unsigned key[kPer];
  bool ok[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) ok[j] = j < nvalid;
  if (aligned && nvalid == kPer) {
#pragma unroll
    for (int j = 0; j < kN; ++j) {
      T v[kVec];
      load_vec<T, kVec, true>(row + first + j * kVec, v);
#pragma unroll
      for (int e = 0; e < kVec; ++e) key[j * kVec + e] = Key<T>::of(v[e]);
    }
  } else {
#pragma unroll
    for (int j = 0; j < kPer; ++j) key[j] = ok[j] ? Key<T>::of(row[first + j]) : 0u;
  }

  // ---- select: prefix/mask of the k-th largest key; need: how many keys equal to it are taken ----
  unsigned prefix = 0u, mask = 0u;
  unsigned need = live ? (unsigned)k : 0u;
  unsigned match = live ? (unsigned)cols : 0u;  // keys whose bits under mask equal prefix
  for (int b = P::kKeyBits - 1; b >= 0 && match != need; --b) {
    const unsigned bit = 1u << b;
    unsigned c = 0u;
#pragma unroll
    for (int j = 0; j < kPer; ++j) c += (ok[j] && (key[j] & (mask | bit)) == (prefix | bit)) ? 1u : 0u;
    c = warp::reduce(c, Sum());
    if (need <= c) {
      prefix |= bit;
      match = c;
    } else {
      need -= c;
      match -= c;
    }
    mask |= bit;
  }

  // ---- ordered gather into the warp's slots: above the prefix first, then the first `need` equal ----
  unsigned counts = 0u;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const unsigned m = key[j] & mask;
    if (ok[j] && m > prefix) counts += 1u;
    if (ok[j] && m == prefix) counts += 1u << 16;  // a row has fewer than 2^16 columns (kWarpCols)
  }
  const unsigned ex = warp::exclusive_scan(counts, Sum(), 0u);
  const unsigned n_gt = live ? (unsigned)k - need : 0u;
  unsigned g = ex & 0xffffu, e = ex >> 16;
  unsigned* wk = sel_key[w];
  int* wi = sel_idx[w];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const unsigned m = key[j] & mask;
    if (ok[j] && m > prefix) {
      wk[g] = key[j];
      wi[g] = first + j;
      ++g;
    } else if (ok[j] && m == prefix) {
      if (e < need) {
        wk[n_gt + e] = key[j];
        wi[n_gt + e] = first + j;
      }
      ++e;
    }
  }
  __syncthreads();

  // ---- each survivor to its rank under (key descending, index ascending) ----
  if (!live) return;
  T* vo = out_vals + r * k;
  long long* io = out_idx + r * k;
  for (int s = warp::lane(); s < k; s += warp::kSize) {
    const unsigned ks = wk[s];
    const int is = wi[s];
    int rank = 0;
    for (int t = 0; t < k; ++t) {
      const unsigned kt = wk[t];
      rank += (kt > ks || (kt == ks && wi[t] < is)) ? 1 : 0;
    }
    vo[rank] = row[is];
    io[rank] = is;
  }
}

template <bool b>
struct Bool {};

// Launch topk_warp_kernel with kN vectors per lane, halving kN while half still covers the row.
template <typename T, typename P, int kN>
struct WarpLaunch {
  static void go(const T* in, int rows, int cols, int k, T* vals, long long* idx, bool vec_ok, cudaStream_t s) {
    enum { kHalf = kN / 2 > 0 ? kN / 2 : 1 };
    if (kN > 1 && cols <= (int)(warp::kSize * kHalf * P::kVec)) {
      WarpLaunch<T, P, kHalf>::go(in, rows, cols, k, vals, idx, vec_ok, s);
      return;
    }
    enum { kRows = P::kWarpRows };
    const int blocks = (int)(((long long)rows + kRows - 1) / kRows);
    topk_warp_kernel<T, P, kN><<<blocks, P::kThreads, 0, s>>>(in, rows, cols, k, vec_ok, vals, idx);
  }
};
template <typename T, typename P>
struct WarpLaunch<T, P, 0> {  // kWarpVecs = 0 (no small-row path): never launched
  static void go(const T*, int, int, int, T*, long long*, bool, cudaStream_t) {}
};

// The small-row path, where the policy has one (kWarpCols > 0) and the row fits it: true when launched.
template <typename T, typename P>
bool run_warp(Bool<false>, const T*, int, int, int, T*, long long*, bool, cudaStream_t) {
  return false;
}
template <typename T, typename P>
bool run_warp(Bool<true>, const T* in, int rows, int cols, int k, T* vals, long long* idx, bool vec_ok,
              cudaStream_t s) {
  if (cols > P::kWarpCols || k > P::kWarpMaxK) return false;
  WarpLaunch<T, P, P::kWarpVecs>::go(in, rows, cols, k, vals, idx, vec_ok, s);
  return true;
}

template <typename T, typename P>
int run(const void* in_, int rows, int cols, int k, void* vals, long long* idx, cudaStream_t s) {
  if (k < 0 || k > cols) return host::fail(MUH_ERR_ARGUMENT, "muh_topk: k=%d outside 0..%d (the row length)", k, cols);
  if (k > P::kMaxK)
    return host::fail(MUH_ERR_ARGUMENT, "muh_topk: k=%d is larger than this build's maximum %d", k, (int)P::kMaxK);
  if (rows == 0 || k == 0) return MUH_OK;
  const T* in = static_cast<const T*>(in_);
  enum { kVec = P::kVec };
  const bool vec_ok = kVec > 1 && (reinterpret_cast<uintptr_t>(in) % (sizeof(T) * kVec)) == 0 && cols % kVec == 0;
  if (run_warp<T, P>(Bool<(P::kWarpCols > 0)>(), in, rows, cols, k, static_cast<T*>(vals), idx, vec_ok, s))
    return host::launch_check("topk launch (a warp per row)");
  if (P::kSplit && cols >= P::kSplitMinCols && k <= P::kSplitMaxK && rows <= P::kSplitMaxRows) {
    enum { kChunk = SliceSelect<P>::kChunk };
    static_assert((int)kChunk == (int)P::kSplitChunk, "topk: slice size differs from P::kSplitChunk");
    const int nblk = (cols + kChunk - 1) / kChunk;
    const size_t pairs = (size_t)rows * nblk * k;
    void* ws = split_workspace(pairs * (sizeof(unsigned) + sizeof(int)), s);
    if (ws) {
      unsigned* wk = static_cast<unsigned*>(ws);
      int* wi = reinterpret_cast<int*>(wk + pairs);
      const dim3 grid(nblk, rows);
      if (vec_ok)
        topk_slice_kernel<T, P, true><<<grid, P::kThreads, 0, s>>>(in, cols, k, wk, wi);
      else
        topk_slice_kernel<T, P, false><<<grid, P::kThreads, 0, s>>>(in, cols, k, wk, wi);
      const int last = cols - (nblk - 1) * kChunk;
      const int m = (nblk - 1) * k + (last < k ? last : k);  // valid candidates per row
      topk_merge_kernel<T, P>
          <<<rows, P::kThreads, 0, s>>>(in, cols, nblk * k, m, k, wk, wi, static_cast<T*>(vals), idx);
      return host::launch_check("topk launch (split)");
    }
  }
  if (vec_ok)
    topk_kernel<T, P, kVec><<<rows, P::kThreads, 0, s>>>(in, cols, k, static_cast<T*>(vals), idx);
  else
    topk_kernel<T, P, 1><<<rows, P::kThreads, 0, s>>>(in, cols, k, static_cast<T*>(vals), idx);
  return host::launch_check("topk launch");
}

}  // namespace topk_impl MUH_LIBRARY_LOCAL
}  // namespace muh
