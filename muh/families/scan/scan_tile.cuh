// muh: the single-pass scan's device code (static: no numbers of its own; every number comes from
// the policy struct P the generated kernels/scan.cu passes in, resolved from the spec by muh).
// Compiles standalone against the generated include/ (warp.cuh, types.cuh, kernels/params.cuh): C++14,
// CUDA 10.2 subset unless a MUH_HAS_* capability macro of params.cuh says the hardware has more
// (MUH_HAS_PTX_MEMORY_MODEL: ld/st.relaxed.gpu incl. 16-byte vectors, .cs cache hints; NVIDIA sm_70+).
//
// One tile per block (tile = blockIdx.x). The tile never touches shared memory: each logical warp
// owns a contiguous segment of warp::kSize * kItems elements, read and written warp-striped in
// kVec-element vectors (16 bytes: coalesced, one instruction per vector) and scanned in registers
// (a thread-local scan per vector, a warp scan per step); only the warp totals and the block prefix
// go through shared memory. Logical warp 0 then runs the decoupled look-back.
//
// Policy P (enums): kThreads, kItems, kVec (elements per global access; 1 = scalar), kWindow
// (predecessors read per look-back poll; > warp::kSize: several words per lane), kLoad (0 plain,
// 1 read-only path, 2 streaming), kStore (0 plain, 1 streaming), kPacked16 (8-byte values: status
// and value in one 16-byte word, written and read whole), and the delay numbers.
#pragma once

#include <stdint.h>

// params.cuh: MUH_HAS_NANOSLEEP, MUH_HAS_PTX_MEMORY_MODEL (the hardware's capabilities)
#include "muh/kernels/params.cuh"
#include "muh/types.cuh"
#include "muh/warp.cuh"

#ifndef MUH_HAS_BULK_COPY  // the bulk copy engine, global -> shared memory (NVIDIA sm_90+; params.cuh says)
#define MUH_HAS_BULK_COPY 0
#endif

namespace muh {
namespace scan_tile {

enum { kInvalid = 0, kAggregate = 1, kPrefix = 2 };

template <int kCyclesX16>
__device__ __forceinline__ void sleep_ns(unsigned ns) {
  if (ns == 0) return;
#if MUH_HAS_NANOSLEEP
  __nanosleep(ns);
#else
  long long end = clock64() + (long long)ns * kCyclesX16 / 16;
  while (clock64() < end) {
  }
#endif
}

// The look-back delay: mode 0 none, 1 constant, 2 grow (backoff), 3 shrink (backon);
// jitter 0 none, 1 uniform in [0, d], 2 window [d/2, d].
template <typename P>
struct Delay {
  unsigned cur;
  unsigned seed;
  // fresh: the tile's aggregate was published just now (wait for it to reach L2 first); a pipelined
  // block looks back one tile later, long after its publication, and skips that wait.
  __device__ Delay(unsigned tile, bool fresh) : cur(P::kDelayStartNs), seed(tile * 2654435761u + 12345u) {
    if (fresh) sleep_ns<P::kSpinCyclesPerNsX16>(P::kL2WriteNs);  // let our own aggregate reach L2 first
  }
  __device__ void operator()() {
    if (P::kDelayMode == 0) return;
    unsigned d = cur;
    if (P::kDelayJitter) {
      seed = seed * 1664525u + 1013904223u;
      unsigned r = seed >> 8;
      d = P::kDelayJitter == 1 ? r % (d + 1u) : d / 2u + r % (d / 2u + 1u);
    }
    sleep_ns<P::kSpinCyclesPerNsX16>(d);
    if (P::kDelayMode == 2) cur = cur * 2u > (unsigned)P::kDelayMaxNs ? (unsigned)P::kDelayMaxNs : cur * 2u;
    if (P::kDelayMode == 3) cur = cur / 2u < (unsigned)P::kDelayMinNs ? (unsigned)P::kDelayMinNs : cur / 2u;
  }
};

// ---- memory access helpers -----------------------------------------------------------------------

__device__ __forceinline__ unsigned long long load_word(const unsigned long long* p) {
#if MUH_HAS_PTX_MEMORY_MODEL
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
#else
  return *(const volatile unsigned long long*)p;
#endif
}
__device__ __forceinline__ void store_word(unsigned long long* p, unsigned long long v) {
#if MUH_HAS_PTX_MEMORY_MODEL
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
  *(volatile unsigned long long*)p = v;
#endif
}
#if MUH_HAS_PTX_MEMORY_MODEL
// One 16-byte word, read and written whole (as CUB 3.0.1's ScanTileState does for 8-byte values).
__device__ __forceinline__ void load_word2(const unsigned long long* p, unsigned long long& a, unsigned long long& b) {
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}
__device__ __forceinline__ void store_word2(unsigned long long* p, unsigned long long a, unsigned long long b) {
  asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
#endif

// Global loads/stores of kVec elements with the policy's cache behaviour.
template <typename T, int kVec, int kMode>
struct Global {
  typedef typename Raw<sizeof(T) * kVec>::type R;
  static __device__ __forceinline__ void load(const T* p, T (&out)[kVec]) {
    R r;
#if MUH_HAS_PTX_MEMORY_MODEL
    if (kMode == 2) {
      r = __ldcs(reinterpret_cast<const R*>(p));
    } else
#endif
        if (kMode == 1) {
      r = __ldg(reinterpret_cast<const R*>(p));
    } else {
      r = *reinterpret_cast<const R*>(p);
    }
    memcpy(out, &r, sizeof(R));
  }
  static __device__ __forceinline__ void store(T* p, const T (&in)[kVec], int mode) {
    R r;
    memcpy(&r, in, sizeof(R));
    (void)mode;  // read only where the streaming store exists (clang -Wextra: unused otherwise)
#if MUH_HAS_PTX_MEMORY_MODEL
    if (mode == 1) {
      __stcs(reinterpret_cast<R*>(p), r);
      return;
    }
#endif
    *reinterpret_cast<R*>(p) = r;
  }
};

// ---- tile status ---------------------------------------------------------------------------------
// Every word carries the launch's epoch: a word of an older launch reads as "not published", so the
// array needs no reset between launches.

template <typename T, int kLayout>  // 0: 8-byte word (4-byte T); 1: 16-byte word; 2: flags + arrays, fenced
struct TileState;

template <typename T>
struct TileState<T, 0> {
  enum { kValueBits = 8 * sizeof(unsigned) };  // the value in the low half, the status in the high half
  unsigned long long* words;
  static __host__ __device__ size_t bytes(long long tiles) { return (size_t)tiles * 8u; }
  static __host__ __device__ TileState at(void* ws, long long) {
    TileState s;
    s.words = static_cast<unsigned long long*>(ws);
    return s;
  }
  __device__ void publish(long long tile, unsigned epoch, int kind, T v) const {
    unsigned bits;
    memcpy(&bits, &v, sizeof(bits));
    store_word(words + tile, ((unsigned long long)((epoch << 2) | (unsigned)kind) << kValueBits) | bits);
  }
  __device__ void read(long long tile, unsigned epoch, int& kind, T& v) const {
    const unsigned long long w = load_word(words + tile);
    const unsigned st = (unsigned)(w >> kValueBits);
    kind = (st >> 2) == epoch ? (int)(st & 3u) : (int)kInvalid;
    const unsigned bits = (unsigned)w;
    memcpy(&v, &bits, sizeof(bits));
  }
};

#if MUH_HAS_PTX_MEMORY_MODEL
template <typename T>
struct TileState<T, 1> {
  unsigned long long* words;  // pairs (epoch<<2 | kind, value bits)
  static __host__ __device__ size_t bytes(long long tiles) { return (size_t)tiles * 16u; }
  static __host__ __device__ TileState at(void* ws, long long) {
    TileState s;
    s.words = static_cast<unsigned long long*>(ws);
    return s;
  }
  __device__ void publish(long long tile, unsigned epoch, int kind, T v) const {
    unsigned long long bits;
    memcpy(&bits, &v, sizeof(bits));
    store_word2(words + 2 * tile, (unsigned long long)((epoch << 2) | (unsigned)kind), bits);
  }
  __device__ void read(long long tile, unsigned epoch, int& kind, T& v) const {
    unsigned long long st, bits;
    load_word2(words + 2 * tile, st, bits);
    kind = (unsigned)(st >> 2) == epoch ? (int)(st & 3u) : (int)kInvalid;
    memcpy(&v, &bits, sizeof(bits));
  }
};
#endif

template <typename T>
struct TileState<T, 2> {
  unsigned* flags;
  T* aggregates;
  T* inclusives;
  static __host__ __device__ size_t flag_bytes(long long tiles) {
    return ((size_t)tiles * sizeof(unsigned) + 15) / 16 * 16;
  }
  static __host__ __device__ size_t bytes(long long tiles) { return flag_bytes(tiles) + 2 * (size_t)tiles * sizeof(T); }
  static __host__ __device__ TileState at(void* ws, long long tiles) {
    TileState s;
    s.flags = static_cast<unsigned*>(ws);
    s.aggregates = reinterpret_cast<T*>(static_cast<char*>(ws) + flag_bytes(tiles));
    s.inclusives = s.aggregates + tiles;
    return s;
  }
  __device__ void publish(long long tile, unsigned epoch, int kind, T v) const {
    ((volatile T*)(kind == kAggregate ? aggregates : inclusives))[tile] = v;
    __threadfence();
    ((volatile unsigned*)flags)[tile] = (epoch << 2) | (unsigned)kind;
  }
  __device__ void read(long long tile, unsigned epoch, int& kind, T& v) const {
    unsigned f = ((volatile unsigned*)flags)[tile];
    kind = (f >> 2) == epoch ? (int)(f & 3u) : (int)kInvalid;
    v = T(0);
    if (kind != kInvalid) {
      __threadfence();
      v = ((volatile T*)(kind == kAggregate ? aggregates : inclusives))[tile];
    }
  }
};

template <typename T, typename P>
struct Layout {
  enum { value = sizeof(T) == 4 ? 0 : (P::kPacked16 && MUH_HAS_PTX_MEMORY_MODEL) ? 1 : 2 };
};

// Workspace: two 8-byte counters (a pipelined grid's tile draws and block exits; zero between
// launches: the last block to exit resets them), then the tile status.
template <typename T, typename P>
struct Workspace {
  typedef TileState<T, Layout<T, P>::value> State;
  enum { kHead = 16 };
  static __host__ __device__ size_t bytes(long long tiles) { return kHead + State::bytes(tiles); }
  static __host__ __device__ unsigned long long* counters(void* ws) { return static_cast<unsigned long long*>(ws); }
  static __host__ __device__ State state(void* ws, long long tiles) {
    return State::at(static_cast<char*>(ws) + kHead, tiles);
  }
};

#ifndef MUH_SCAN_LOOKBACK_HOOK  // instrumentation point (bench/scan_lab): polls and window steps of one look-back
#define MUH_SCAN_LOOKBACK_HOOK(P, polls, steps)
#endif

// Exclusive prefix of `tile`, run by all lanes of one logical warp. One poll reads kWindow predecessors
// (kWords per lane when kWindow > warp::kSize, issued together); it ends at the nearest PREFIX, adding
// the aggregates before it. A poll counts only when every predecessor up to that PREFIX (or the
// whole window, when it has none) has been published; otherwise the warp waits the delay and reads
// again. Without a PREFIX the window moves back by its width.
template <typename T, typename P, typename State>
__device__ T lookback(const State& st, long long tile, unsigned epoch, bool fresh = true) {
  enum {
    kLanes = (int)P::kWindow<(int)warp::kSize ? (int)P::kWindow : (int)warp::kSize, kWords = (int)P::kWindow>(int)
            warp::kSize
        ? (int)P::kWindow / (int)warp::kSize
        : 1,
    kSpan = kLanes * kWords
  };
  Delay<P> delay((unsigned)tile, fresh);
  T prefix = T(0);
  long long end = tile - 1;
  const bool reader = warp::lane() < kLanes;
  int polls = 0, steps = 0;
  (void)polls;
  (void)steps;
  while (true) {
    int kind[kWords];
    T val[kWords];
    int stop;
    while (true) {
#pragma unroll
      for (int j = 0; j < kWords; ++j) {
        const long long pred = end - warp::lane() - (long long)j * kLanes;
        if (reader && pred >= 0) {
          st.read(pred, epoch, kind[j], val[j]);
        } else {
          kind[j] = reader ? (int)kPrefix : (int)kAggregate;  // before tile 0: a prefix of 0
          val[j] = T(0);
        }
      }
      ++polls;
      int first_prefix = kSpan, first_invalid = kSpan;
#pragma unroll
      for (int j = 0; j < kWords; ++j) {
        const int p = warp::first_lane(kind[j] == kPrefix);
        const int q = warp::first_lane(kind[j] == kInvalid);
        if (first_prefix == kSpan && p < kLanes) first_prefix = j * kLanes + p;
        if (first_invalid == kSpan && q < kLanes) first_invalid = j * kLanes + q;
      }
      stop = first_prefix;
      if (first_invalid == kSpan || first_invalid > first_prefix) break;
      delay();
    }
    T mine = T(0);
#pragma unroll
    for (int j = 0; j < kWords; ++j)
      if (j * kLanes + warp::lane() <= stop) mine = mine + val[j];
    prefix = warp::reduce(mine, Sum()) + prefix;
    ++steps;
    if (stop < kSpan) break;
    end -= kSpan;
  }
  MUH_SCAN_LOOKBACK_HOOK(P, polls, steps);
  return prefix;
}

// ---- one tile ------------------------------------------------------------------------------------

template <typename T, typename P>
struct Tile {
  enum {
    kThreads = P::kThreads,
    kItems = P::kItems,
    kVec = P::kVec,
    kSteps = kItems / kVec,
    kWarps = kThreads / warp::kSize,
    kSeg = warp::kSize * kItems,  // elements of one warp's segment (striped layout)
    kSize = kThreads * kItems
  };
  static_assert(kItems % kVec == 0, "items must be a multiple of vec");
  T v[kSteps][kVec];

  // Striped: vector s of lane l of warp w holds elements w*kSeg + (s*kSize + l)*kVec + [0, kVec).
  __device__ __forceinline__ long long offset(int s) const {
    return (long long)warp::id() * kSeg + ((long long)s * warp::kSize + warp::lane()) * kVec;
  }

  __device__ __forceinline__ void load(const T* in, long long base, int valid, bool fast) {
    if (fast) {
#pragma unroll
      for (int s = 0; s < kSteps; ++s) Global<T, kVec, P::kLoad>::load(in + base + offset(s), v[s]);
    } else {
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        const long long o = offset(s);
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[s][k] = o + k < valid ? in[base + o + k] : T(0);
      }
    }
  }

  __device__ __forceinline__ void load_shared(const T* sm) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s) Global<T, kVec, 0>::load(sm + offset(s), v[s]);
  }

  // Scan in registers: afterwards v holds each element's inclusive (or exclusive) prefix within the
  // warp's segment; returns the warp's total.
  template <bool kExclusive>
  __device__ __forceinline__ T scan_warp() {
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
#pragma unroll
      for (int k = 1; k < kVec; ++k) v[s][k] = v[s][k - 1] + v[s][k];
    }
    T incl[kSteps];
#pragma unroll
    for (int s = 0; s < kSteps; ++s) incl[s] = warp::inclusive_scan(v[s][kVec - 1], Sum());
    T carry = T(0);
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      T ex = warp::shfl_up(incl[s], 1);
      if (warp::lane() == 0) ex = T(0);
      const T total = warp::shfl_idx(incl[s], warp::kSize - 1);
      const T off = carry + ex;  // elements of the segment before this thread's vector s
      if (kExclusive) {
#pragma unroll
        for (int k = kVec - 1; k > 0; --k) v[s][k] = off + v[s][k - 1];
        v[s][0] = off;
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[s][k] = off + v[s][k];
      }
      carry = carry + total;
    }
    return carry;
  }

  __device__ __forceinline__ void store(T* out, long long base, int valid, bool fast, T prefix) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      T r[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) r[k] = prefix + v[s][k];
      if (fast) {
        Global<T, kVec, 0>::store(out + base + offset(s), r, P::kStore);
      } else {
        const long long os = offset(s);
#pragma unroll
        for (int k = 0; k < kVec; ++k)
          if (os + k < valid) out[base + os + k] = r[k];
      }
    }
  }
};

template <typename T, typename P>
struct Shared {
  T warp_totals[Tile<T, P>::kWarps];
  T block_prefix;
};

// One tile's step of the decoupled look-back, by logical warp 0 (the other warps pass through):
// tile 0 publishes its aggregate as its inclusive prefix; any other tile publishes its aggregate,
// looks back for its exclusive prefix and publishes the inclusive one. Lane 0 writes the exclusive
// prefix (T(0) for tile 0) to *block_prefix; the caller's __syncthreads() makes it visible.
template <typename T, typename P, typename State>
__device__ __forceinline__ void publish_and_look_back(const State& st, long long tile, unsigned epoch, T aggregate,
                                                      T* block_prefix) {
  if (warp::id() == 0) {
    T p = T(0);
    if (tile == 0) {
      if (warp::lane() == 0) st.publish(0, epoch, kPrefix, aggregate);
    } else {
      if (warp::lane() == 0) st.publish(tile, epoch, kAggregate, aggregate);
      p = lookback<T, P>(st, tile, epoch);
      if (warp::lane() == 0) st.publish(tile, epoch, kPrefix, p + aggregate);
    }
    if (warp::lane() == 0) *block_prefix = p;
  }
}

// Scan of one tile whose data is in `t`; the look-back by logical warp 0.
template <typename T, typename P, bool kExclusive, typename State>
__device__ __forceinline__ void finish_tile(Tile<T, P>& t, Shared<T, P>& sh, T* out, long long tile, long long base,
                                            int valid, bool fast, const State& st, unsigned epoch) {
  const T wtotal = t.template scan_warp<kExclusive>();
  if (warp::lane() == 0) sh.warp_totals[warp::id()] = wtotal;
  __syncthreads();
  T wprefix = T(0), aggregate = T(0);
#pragma unroll
  for (int i = 0; i < Tile<T, P>::kWarps; ++i) {
    const T s = sh.warp_totals[i];
    if (i < warp::id()) wprefix = wprefix + s;
    aggregate = aggregate + s;
  }
  publish_and_look_back<T, P>(st, tile, epoch, aggregate, &sh.block_prefix);
  __syncthreads();
  t.store(out, base, valid, fast, sh.block_prefix + wprefix);
}

// Elements per tile (one tile per block): a register tile, or kPasses of them staged in shared memory.
template <typename T, typename P>
struct TileElems {
  enum { value = P::kThreads * P::kItems * ((P::kStage == 1 && MUH_HAS_BULK_COPY) ? P::kPasses : 1) };
};

// 0: register tiles, one per block; 1: one staged tile per block; 2: a pipelined grid of staged tiles
template <typename P>
struct BodyKind {
  enum { value = (P::kStage == 1 && MUH_HAS_BULK_COPY) ? (P::kStages > 1 ? 2 : 1) : 0 };
};

template <typename T>
__device__ __forceinline__ bool aligned16(const T* p) {
  return ((uintptr_t)p & 15u) == 0;
}

#if MUH_HAS_BULK_COPY
// ---- shared-memory staged tiles, filled by the bulk copy engine (sm_90: cp.async.bulk + mbarrier) --
// The whole tile (kPasses register tiles) is requested by one instruction per kBulkChunk bytes as the
// block starts; it lands in shared memory without passing through registers, so the bytes a block
// holds in flight are bounded by shared memory (227 KiB per SM on the H200), not by the register file.
namespace bulk {
__device__ __forceinline__ unsigned addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void init(unsigned long long* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(addr(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void expect(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void copy(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(addr(dst)),
      "l"(src), "r"(bytes), "r"(addr(bar))
      : "memory");
}
__device__ __forceinline__ void wait(unsigned long long* bar, unsigned parity) {
  unsigned done = 0;
  while (!done) {
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(addr(bar)), "r"(parity)
                 : "memory");
  }
}
}  // namespace bulk

template <typename T, typename P>
struct Staged {
  enum {
    kPasses = P::kPasses,
    kWarps = Tile<T, P>::kWarps,
    kPass = Tile<T, P>::kSize,  // elements of one register pass
    kSize = kPass * kPasses,    // elements of one tile
    kChunk = (int)P::kBulkChunk / (int)sizeof(T) < kSize ? (int)P::kBulkChunk / (int)sizeof(T) : kSize
  };
  static_assert(kSize % kChunk == 0, "bulk chunk must divide the tile");
  __align__(128) T data[kSize];
  T totals[kPasses][kWarps];
  T block_prefix;
  unsigned long long bar;
};

// One tile per block, staged in shared memory: bulk copy in, kPasses register passes (scan each
// warp's segment, write it back), block sums, the look-back by warp 0, then each pass read back,
// offset and stored. A partial or unaligned tile is filled element by element instead.
template <typename T, typename P, bool kExclusive>
__device__ __forceinline__ void scan_staged(const T* in, T* out, long long n, void* ws, unsigned epoch) {
  typedef Staged<T, P> S;
  typedef typename Workspace<T, P>::State State;
  __shared__ S sh;
  const long long tiles = (n + S::kSize - 1) / S::kSize;
  const State st = Workspace<T, P>::state(ws, tiles);
  const long long tile = blockIdx.x;
  const long long base = tile * S::kSize;
  const int valid = (int)(n - base < S::kSize ? n - base : S::kSize);
  const bool fast = aligned16(in) && aligned16(out) && valid == S::kSize;
  if (fast) {
    if (threadIdx.x == 0) {
      bulk::init(&sh.bar);
      bulk::expect(&sh.bar, (unsigned)(S::kSize * sizeof(T)));
    }
    if (warp::id() == 0) {
      for (int c = warp::lane(); c < S::kSize / S::kChunk; c += warp::kSize)
        bulk::copy(sh.data + c * S::kChunk, in + base + c * S::kChunk, (unsigned)(S::kChunk * sizeof(T)), &sh.bar);
    }
  } else {
    for (int i = threadIdx.x; i < S::kSize; i += P::kThreads) sh.data[i] = i < valid ? in[base + i] : T(0);
  }
  __syncthreads();  // the barrier's initialisation (or the element-wise fill) is visible to all
  if (fast) bulk::wait(&sh.bar, 0);
#pragma unroll 1
  for (int p = 0; p < S::kPasses; ++p) {
    Tile<T, P> t;
    t.load_shared(sh.data + p * S::kPass);
    const T wtotal = t.template scan_warp<kExclusive>();
#pragma unroll
    for (int s = 0; s < Tile<T, P>::kSteps; ++s)
      Global<T, P::kVec, 0>::store(sh.data + p * S::kPass + t.offset(s), t.v[s], 0);
    if (warp::lane() == 0) sh.totals[p][warp::id()] = wtotal;
  }
  __syncthreads();
  T aggregate = T(0);
  for (int p = 0; p < S::kPasses; ++p)
#pragma unroll
    for (int w = 0; w < S::kWarps; ++w) aggregate = aggregate + sh.totals[p][w];
  publish_and_look_back<T, P>(st, tile, epoch, aggregate, &sh.block_prefix);
  __syncthreads();
  T run = sh.block_prefix;  // block prefix + every (pass, warp) segment before this warp's in pass p
#pragma unroll 1
  for (int p = 0; p < S::kPasses; ++p) {
    T off = run;
#pragma unroll
    for (int w = 0; w < S::kWarps; ++w) {
      const T s = sh.totals[p][w];
      if (w < warp::id()) off = off + s;
      run = run + s;
    }
    Tile<T, P> t;
    t.load_shared(sh.data + p * S::kPass);
    t.store(out, base + p * S::kPass, valid - p * S::kPass, fast, off);
  }
}

// ---- pipelined staged tiles: a resident grid, each block a ring of kStages staged tiles --------------
// The grid is what the device holds at once (the host asks the occupancy); each block keeps kStages
// tiles in shared memory: while it scans one and looks back for another, the bulk copies of the next
// ones are in flight. Tiles are numbered in the order they are scanned: block b first fills its ring
// with tiles b, G + b, …, (kStages - 1) G + b (G blocks; every block scans its stage s at about the
// same time), then refills each stage as it frees with a tile drawn from a counter (drawn one refill
// ahead, so the atomic's latency overlaps a tile; a later draw is scanned later). A ring filled with
// consecutive tiles instead makes the next block's first look-back wait for the last tile of the
// previous block's ring, and so on down the grid: a chain (lab, call 6: 8 ms at 2^28). Every tile is
// held by a block that runs or will run once the SMs it waits for are free (the grid fits the device).
// Iteration k: wait for tile k's data, scan it in kPasses register passes, publish its aggregate; then
// (kLag = 1) look back for tile k-1 — whose aggregate went out one tile earlier, so the look-back skips
// the L2-write wait — store tile k-1 and refill its stage. kLag = 0: look back for tile k itself right
// after its aggregate (tile k+1's aggregate then waits for tile k's look-back). The tiles' data live in
// dynamic shared memory (kStages x the tile).
extern __shared__ __align__(128) unsigned char muh_scan_ring[];

template <typename T, typename P>
struct Ring {
  enum {
    kStages = P::kStages,
    kPasses = P::kPasses,
    kWarps = Tile<T, P>::kWarps,
    kPass = Tile<T, P>::kSize,
    kSize = kPass * kPasses,
    kChunk = (int)P::kBulkChunk / (int)sizeof(T) < kSize ? (int)P::kBulkChunk / (int)sizeof(T) : kSize
  };
  static_assert(kSize % kChunk == 0, "bulk chunk must divide the tile");
  static_assert(kStages >= 2 + (int)P::kLag, "a ring needs a stage in flight beside the tiles being finished");
  T totals[kStages][kPasses][kWarps];
  long long tile[kStages];
  T prefix;
  unsigned long long bar[kStages];
  static __host__ __device__ size_t data_bytes() { return (size_t)kStages * kSize * sizeof(T); }
};

template <typename T, typename P, bool kExclusive>
struct Pipeline {
  typedef Ring<T, P> R;
  typedef typename Workspace<T, P>::State State;
  R& sh;
  T* data;
  const T* in;
  T* out;
  long long n, tiles;
  State st;
  unsigned epoch;
  bool al;

  __device__ int valid_of(long long tile) const {
    const long long base = tile * R::kSize;
    return (int)(n - base < R::kSize ? n - base : R::kSize);
  }
  __device__ bool fast(long long tile) const { return al && valid_of(tile) == R::kSize; }

  // thread 0: request a full tile's bytes into stage s (other tiles are filled element-wise later)
  __device__ void issue(int s, long long tile) {
    if (tile >= tiles || !fast(tile)) return;
    bulk::expect(&sh.bar[s], (unsigned)(R::kSize * sizeof(T)));
    const T* src = in + tile * R::kSize;
    T* dst = data + (long long)s * R::kSize;
    for (int c = 0; c < R::kSize / R::kChunk; ++c)
      bulk::copy(dst + c * R::kChunk, src + c * R::kChunk, (unsigned)(R::kChunk * sizeof(T)), &sh.bar[s]);
  }

  // all threads: tile's data into stage s, scanned in passes (written back), totals; returns the aggregate
  __device__ T scan(int s, long long tile, unsigned& phase) {
    T* d = data + (long long)s * R::kSize;
    if (fast(tile)) {
      bulk::wait(&sh.bar[s], (phase >> s) & 1u);
      phase ^= 1u << s;
    } else {
      const int valid = valid_of(tile);
      const long long base = tile * R::kSize;
      for (int i = threadIdx.x; i < R::kSize; i += P::kThreads) d[i] = i < valid ? in[base + i] : T(0);
      __syncthreads();
    }
#pragma unroll 1
    for (int p = 0; p < R::kPasses; ++p) {
      Tile<T, P> t;
      t.load_shared(d + p * R::kPass);
      const T wtotal = t.template scan_warp<kExclusive>();
#pragma unroll
      for (int q = 0; q < Tile<T, P>::kSteps; ++q)
        Global<T, P::kVec, 0>::store(d + p * R::kPass + t.offset(q), t.v[q], 0);
      if (warp::lane() == 0) sh.totals[s][p][warp::id()] = wtotal;
    }
    __syncthreads();
    T agg = T(0);
    for (int p = 0; p < R::kPasses; ++p)
#pragma unroll
      for (int w = 0; w < R::kWarps; ++w) agg = agg + sh.totals[s][p][w];
    if (threadIdx.x == 0) st.publish(tile, epoch, tile == 0 ? (int)kPrefix : (int)kAggregate, agg);
    return agg;
  }

  // all threads: the look-back for tile (aggregate agg, in stage s), its store, then stage s refilled
  // with the tile thread 0 drew one refill earlier (`drawn`: the atomic's latency overlaps a tile)
  __device__ void finish(int s, long long tile, T agg, bool fresh, unsigned long long* draws, long long drawn_from,
                         long long& drawn) {
    if (warp::id() == 0) {
      T pre = T(0);
      if (tile != 0) {
        pre = lookback<T, P>(st, tile, epoch, fresh);
        if (warp::lane() == 0) st.publish(tile, epoch, kPrefix, pre + agg);
      }
      if (warp::lane() == 0) sh.prefix = pre;
    }
    __syncthreads();
    const T* d = data + (long long)s * R::kSize;
    const long long base = tile * R::kSize;
    const int valid = valid_of(tile);
    const bool f = al && valid == R::kSize;
    T run = sh.prefix;
#pragma unroll 1
    for (int p = 0; p < R::kPasses; ++p) {
      T off = run;
#pragma unroll
      for (int w = 0; w < R::kWarps; ++w) {
        const T x = sh.totals[s][p][w];
        if (w < warp::id()) off = off + x;
        run = run + x;
      }
      Tile<T, P> t;
      t.load_shared(d + p * R::kPass);
      t.store(out, base + p * R::kPass, valid - p * R::kPass, f, off);
    }
    __syncthreads();  // stage s, its totals and the prefix are free
    if (threadIdx.x == 0) {
      const long long next = drawn;
      drawn = drawn_from + (long long)atomicAdd(draws, 1ull);
      sh.tile[s] = next;
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // generic accesses before the async copy
      issue(s, next);
    }
  }
};

template <typename T, typename P, bool kExclusive>
__device__ __forceinline__ void scan_pipelined(const T* in, T* out, long long n, void* ws, unsigned epoch) {
  typedef Ring<T, P> R;
  __shared__ R sh;
  const long long tiles = (n + R::kSize - 1) / R::kSize;
  unsigned long long* ctr = Workspace<T, P>::counters(ws);  // [0] tile draws, [1] block exits
  const bool al = aligned16(in) && aligned16(out);
  T* data = reinterpret_cast<T*>(muh_scan_ring);
  Pipeline<T, P, kExclusive> pl = {sh, data, in, out, n, tiles, Workspace<T, P>::state(ws, tiles), epoch, al};
  // the first fills are tiles [0, drawn_from); thread 0 keeps the tile of the next refill in `drawn`
  const long long grid = gridDim.x, drawn_from = grid * R::kStages;
  long long drawn = 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < R::kStages; ++s) bulk::init(&sh.bar[s]);
    for (int s = 0; s < R::kStages; ++s) {
      sh.tile[s] = s * grid + blockIdx.x;
      pl.issue(s, sh.tile[s]);
    }
    drawn = drawn_from + (long long)atomicAdd(ctr, 1ull);
  }
  __syncthreads();
  unsigned phase = 0;  // bit s: the parity of stage s's next bulk completion
  long long prev = -1;
  T prev_agg = T(0);
  int q = 0;
#pragma unroll 1
  for (int s = 0;; s = s + 1 == R::kStages ? 0 : s + 1) {
    const long long tile = sh.tile[s];  // written by thread 0 before at least one barrier since
    const bool have = tile < tiles;
    T agg = T(0);
    if (have) agg = pl.scan(s, tile, phase);
    if (P::kLag == 0) {
      if (!have) break;
      pl.finish(s, tile, agg, true, ctr, drawn_from, drawn);
      continue;
    }
    if (prev >= 0) pl.finish(q, prev, prev_agg, false, ctr, drawn_from, drawn);
    if (!have) break;
    prev = tile;
    prev_agg = agg;
    q = s;
  }
  if (threadIdx.x == 0) {  // the last block out resets the counters for the next launch
    __threadfence();
    if (atomicAdd(ctr + 1, 1ull) == (unsigned long long)gridDim.x - 1) {
      ctr[0] = 0ull;
      ctr[1] = 0ull;
    }
  }
}
#endif  // MUH_HAS_BULK_COPY

// One tile per block, tile = blockIdx.x (blocks start in index order, as CUB's single-pass scan assumes).
template <typename T, typename P, bool kExclusive>
__device__ __forceinline__ void scan_one(const T* in, T* out, long long n, void* ws, unsigned epoch) {
  typedef typename Workspace<T, P>::State State;
  __shared__ Shared<T, P> sh;
  const long long tiles = (n + Tile<T, P>::kSize - 1) / Tile<T, P>::kSize;
  const State st = Workspace<T, P>::state(ws, tiles);
  const bool al = aligned16(in) && aligned16(out);
  const long long tile = blockIdx.x;
  const long long base = tile * Tile<T, P>::kSize;
  const int valid = (int)(n - base < Tile<T, P>::kSize ? n - base : Tile<T, P>::kSize);
  const bool fast = al && valid == Tile<T, P>::kSize;
  Tile<T, P> t;
  t.load(in, base, valid, fast);
  finish_tile<T, P, kExclusive>(t, sh, out, tile, base, valid, fast, st, epoch);
}

// The kernel body for policy P.
template <int kStaged>  // 0: register tiles; 1: staged tiles (instantiated only for a staged policy)
struct Body {
  template <typename T, typename P, bool kExclusive>
  static __device__ __forceinline__ void run(const T* in, T* out, long long n, void* ws, unsigned epoch) {
    scan_one<T, P, kExclusive>(in, out, n, ws, epoch);
  }
};
#if MUH_HAS_BULK_COPY
template <>
struct Body<1> {
  template <typename T, typename P, bool kExclusive>
  static __device__ __forceinline__ void run(const T* in, T* out, long long n, void* ws, unsigned epoch) {
    scan_staged<T, P, kExclusive>(in, out, n, ws, epoch);
  }
};
template <>
struct Body<2> {
  template <typename T, typename P, bool kExclusive>
  static __device__ __forceinline__ void run(const T* in, T* out, long long n, void* ws, unsigned epoch) {
    scan_pipelined<T, P, kExclusive>(in, out, n, ws, epoch);
  }
};
#endif

template <typename T, typename P, bool kExclusive>
__device__ __forceinline__ void run(const T* in, T* out, long long n, void* ws, unsigned epoch) {
  Body<BodyKind<P>::value>::template run<T, P, kExclusive>(in, out, n, ws, epoch);
}

}  // namespace scan_tile
}  // namespace muh
