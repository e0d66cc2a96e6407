// LLM serving ops (rms_norm and its fused forms, silu_and_mul, gate_add, softmax, topk_softmax /
// moe_route) with vLLM 0.6.3's semantics (docs/ops.md), static CUDA: kernels and launchers with no
// numbers of their own. Every number comes from muh::ops::Policy<T, B>, which kernels/ops.cu specialises
// for each element type T and size bucket B (0 when the type has one policy for every size) with the
// values resolved from the spec (printed there with their rules); its C entry points pick B by the
// call's rows × hidden (docs/ops.md), so every launch template here takes (T, B).
// Compiles on its own against the generated common layer (include/muh: host.cuh, types.cuh,
// warp.cuh, and muh/ops/ops.h); C++14, CUDA 10.2 subset. Warp-size generic: every warp operation
// goes through muh/warp.cuh.
//
// Policy<T, B> (enums): kRowThreads (block of the row ops, an upper bound), kVec (elements per vector
// load of the row ops), kItemsMin (vectors in flight per thread before adding threads), kMaxItems
// (vectors cached in registers per thread), kEltThreads / kEltItems / kEltVec (block, vectors per
// thread and elements per vector load of the element-wise ops), kTopkThreads (block of topk_softmax,
// one warp per token), kMaxPerLane (experts per lane).
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "muh/host.cuh"
#include "muh/ops/ops.h"
#include "muh/types.cuh"
#include "muh/warp.cuh"

namespace muh {
namespace ops MUH_LIBRARY_LOCAL {  // host.cuh: library-private linkage

// Specialised per element type and size bucket by kernels/ops.cu (the resolved policy); declared here only.
template <typename T, int B>
struct Policy;

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return Cvt<float, __half>::in(v); }
__device__ __forceinline__ float to_f(bf16 v) { return Cvt<float, bf16>::in(v); }
template <typename T>
__device__ __forceinline__ T from_f(float v) {
  return Cvt<float, T>::out(v);
}
template <>
__device__ __forceinline__ float from_f<float>(float v) {
  return v;
}
// The value as the element type would hold it (vLLM rounds intermediate results to the element type).
template <typename T>
__device__ __forceinline__ float round_to(float v) {
  return to_f(from_f<T>(v));
}

template <typename T, int kVec, bool kLdg>
__device__ __forceinline__ void load_f(const T* p, float (&v)[kVec]) {
  T raw[kVec];
  load_vec<T, kVec, kLdg>(p, raw);
#pragma unroll
  for (int k = 0; k < kVec; ++k) v[k] = to_f(raw[k]);
}

template <typename T, int kVec>
__device__ __forceinline__ void store_f(T* p, const float (&v)[kVec]) {
  T raw[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) raw[k] = from_f<T>(v[k]);
  store_vec<T, kVec>(p, raw);
}

// Block-wide reduction for a block of whole logical warps; every thread gets the result.
// `red` holds one value per warp; the caller gives each reduction its own `red`.
template <typename Op>
__device__ __forceinline__ float block_reduce(float v, Op op, float* red) {
  v = warp::reduce(v, op);
  const int warps = (int)(blockDim.x / warp::kSize);
  if (warps > 1) {
    if (warp::lane() == 0) red[warp::id()] = v;
    __syncthreads();
    v = red[0];
    for (int i = 1; i < warps; ++i) v = op(v, red[i]);
  }
  return v;
}

struct RowArgs {
  void* out;       // rms_norm / softmax: output; fused_add_rms_norm: x (in place)
  const void* in;  // rms_norm / softmax: input; fused_add_rms_norm: x
  void* residual;  // fused forms only
  const void* weight;
  const void* gate;  // gated norm only: out = T(T(norm) * silu(gate))
  int hidden;
  int heads;  // rows = tokens x heads; row r is head r % heads of token r / heads
  long long in_stride, out_stride, res_stride, gate_stride;  // elements between tokens
  long long in_hstride, out_hstride, gate_hstride;           // elements between the heads of a token
  float eps;
  float weight_offset;   // 1 for GemmaRMSNorm's (1 + w), else 0
  float residual_alpha;  // fused: residual is pre-multiplied (rounded) when not 1
  int single_round;      // GemmaRMSNorm: x * inv * (offset + w) in float, rounded once (vLLM rounds x * inv first)
};

// Element offset of row `row` for (token stride, head stride).
__device__ __forceinline__ long long row_offset(const RowArgs& a, long long row, long long stride, long long hstride) {
  if (a.heads == 1) return row * stride;
  return (row / a.heads) * stride + (row % a.heads) * hstride;
}

__device__ __forceinline__ float silu_f(float g) { return g / (1.f + expf(-g)); }

// What a norm kernel computes per element (a template parameter: the plain form keeps its registers).
enum NormKind { kRoundMid = 0, kSingleRound = 1, kGated = 2 };

// The normalised output of one vector: x (float), its weight (float), the row's inverse rms.
template <typename T, int kVec, int kKind>
__device__ __forceinline__ void norm_vec(const RowArgs& a, const T* gate, int j, const float (&x)[kVec],
                                         const float (&w)[kVec], float inv, float (&o)[kVec]) {
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    const float wk = w[k] + a.weight_offset;
    o[k] = kKind == kSingleRound ? x[k] * inv * wk : round_to<T>(x[k] * inv) * wk;
  }
  if (kKind == kGated) {
    float g[kVec];
    load_f<T, kVec, true>(gate + (long long)j * kVec, g);
#pragma unroll
    for (int k = 0; k < kVec; ++k) o[k] = round_to<T>(o[k]) * silu_f(g[k]);
  }
}

// Row value j (a vector): rms_norm reads x; fused_add_rms_norm forms z = T(x + residual), stores it
// to residual and returns it.
template <typename T, int kVec, bool kFused>
__device__ __forceinline__ void row_in(const RowArgs& a, const T* in, T* res, int j, float (&v)[kVec]) {
  if (kFused) {
    float r[kVec];
    load_f<T, kVec, false>(in + (long long)j * kVec, v);
    load_f<T, kVec, false>(res + (long long)j * kVec, r);
    if (a.residual_alpha != 1.f) {
#pragma unroll
      for (int k = 0; k < kVec; ++k) r[k] = round_to<T>(r[k] * a.residual_alpha);
    }
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = round_to<T>(v[k] + r[k]);
    store_f<T, kVec>(res + (long long)j * kVec, v);
  } else {
    load_f<T, kVec, true>(in + (long long)j * kVec, v);
  }
}

template <typename T, int kVec, int kKind>
__device__ __forceinline__ void row_out(const RowArgs& a, T* out, const T* gate, int j, const float (&v)[kVec],
                                        float inv) {
  float w[kVec], o[kVec];
  load_f<T, kVec, true>(static_cast<const T*>(a.weight) + (long long)j * kVec, w);
  norm_vec<T, kVec, kKind>(a, gate, j, v, w, inv, o);
  store_f<T, kVec>(out + (long long)j * kVec, o);
}

// One block per row. kItems > 0: the row stays in registers (kItems vectors per thread);
// kItems == 0: streaming, the second pass re-reads the row (fused: the residual it wrote itself).
// rms_norm's register path holds the row in the element type (exact: it is the input), which halves
// the registers of 16-bit rows, and loads the weight vectors together with the row, before the block
// reduction, when they fit in as many registers again (kItems * kVec * sizeof(T) <= 64 bytes): one
// memory round trip per block instead of two (lab H200, 4096 x 8192 float16: 75 % -> 96 % of copy).
// fused_add_rms_norm keeps float rows and the weight read after the reduction: the same change made
// it 0.5-1 % slower there (bench/results/lab-2026-11-30/followup.md).
template <typename T, int B, int kVec, int kItems, bool kFused, int kKind>
__global__ void __launch_bounds__(Policy<T, B>::kRowThreads) rms_norm_kernel(RowArgs a) {
  __shared__ float red[Policy<T, B>::kRowThreads / warp::kSize];
  const long long row = blockIdx.x;
  const T* in = static_cast<const T*>(a.in) + row_offset(a, row, a.in_stride, a.in_hstride);
  T* out = static_cast<T*>(a.out) + row_offset(a, row, a.out_stride, a.out_hstride);
  T* res = kFused ? static_cast<T*>(a.residual) + row * a.res_stride : (T*)0;
  const T* gate =
      kKind == kGated ? static_cast<const T*>(a.gate) + row_offset(a, row, a.gate_stride, a.gate_hstride) : (const T*)0;
  const int nvec = a.hidden / kVec;
  float ss = 0.f;
  if (kItems > 0 && kFused) {
    float v[kItems > 0 ? kItems : 1][kVec];
#pragma unroll
    for (int i = 0; i < (kItems > 0 ? kItems : 1); ++i) {
      const int j = (int)threadIdx.x + i * (int)blockDim.x;
      if (j < nvec) {
        row_in<T, kVec, kFused>(a, in, res, j, v[i]);
#pragma unroll
        for (int k = 0; k < kVec; ++k) ss += v[i][k] * v[i][k];
      }
    }
    ss = block_reduce(ss, Sum(), red);
    const float inv = rsqrtf(ss / (float)a.hidden + a.eps);
#pragma unroll
    for (int i = 0; i < (kItems > 0 ? kItems : 1); ++i) {
      const int j = (int)threadIdx.x + i * (int)blockDim.x;
      if (j < nvec) row_out<T, kVec, kKind>(a, out, gate, j, v[i], inv);
    }
  } else if (kItems > 0) {
    enum { kI = kItems > 0 ? kItems : 1, kEarlyWeight = kI * kVec * (int)sizeof(T) <= 64 };
    const T* weight = static_cast<const T*>(a.weight);
    T x[kI][kVec];
    T w[kEarlyWeight ? kI : 1][kVec];
#pragma unroll
    for (int i = 0; i < kI; ++i) {
      const int j = (int)threadIdx.x + i * (int)blockDim.x;
      if (j < nvec) {
        load_vec<T, kVec, true>(in + (long long)j * kVec, x[i]);
        if (kEarlyWeight) load_vec<T, kVec, true>(weight + (long long)j * kVec, w[kEarlyWeight ? i : 0]);
      }
    }
#pragma unroll
    for (int i = 0; i < kI; ++i) {
      const int j = (int)threadIdx.x + i * (int)blockDim.x;
      if (j < nvec) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) ss += to_f(x[i][k]) * to_f(x[i][k]);
      }
    }
    ss = block_reduce(ss, Sum(), red);
    const float inv = rsqrtf(ss / (float)a.hidden + a.eps);
#pragma unroll
    for (int i = 0; i < kI; ++i) {
      const int j = (int)threadIdx.x + i * (int)blockDim.x;
      if (j < nvec) {
        float wf[kVec], xf[kVec], o[kVec];
        if (kEarlyWeight) {
#pragma unroll
          for (int k = 0; k < kVec; ++k) wf[k] = to_f(w[kEarlyWeight ? i : 0][k]);
        } else {
          load_f<T, kVec, true>(weight + (long long)j * kVec, wf);
        }
#pragma unroll
        for (int k = 0; k < kVec; ++k) xf[k] = to_f(x[i][k]);
        norm_vec<T, kVec, kKind>(a, gate, j, xf, wf, inv, o);
        store_f<T, kVec>(out + (long long)j * kVec, o);
      }
    }
  } else {
    for (int j = threadIdx.x; j < nvec; j += blockDim.x) {
      float v[kVec];
      row_in<T, kVec, kFused>(a, in, res, j, v);
#pragma unroll
      for (int k = 0; k < kVec; ++k) ss += v[k] * v[k];
    }
    ss = block_reduce(ss, Sum(), red);
    const float inv = rsqrtf(ss / (float)a.hidden + a.eps);
    for (int j = threadIdx.x; j < nvec; j += blockDim.x) {
      float v[kVec];
      if (kFused)
        load_f<T, kVec, false>(res + (long long)j * kVec, v);
      else
        load_f<T, kVec, true>(in + (long long)j * kVec, v);
      row_out<T, kVec, kKind>(a, out, gate, j, v, inv);
    }
  }
}

// Row softmax, float accumulation; same register/streaming split as rms_norm.
template <typename T, int B, int kVec, int kItems>
__global__ void __launch_bounds__(Policy<T, B>::kRowThreads) softmax_kernel(RowArgs a) {
  __shared__ float red_max[Policy<T, B>::kRowThreads / warp::kSize];
  __shared__ float red_sum[Policy<T, B>::kRowThreads / warp::kSize];
  const long long row = blockIdx.x;
  const T* in = static_cast<const T*>(a.in) + row * a.in_stride;
  T* out = static_cast<T*>(a.out) + row * a.out_stride;
  const int nvec = a.hidden / kVec;
  float m = Limits<float>::lowest();
  float s = 0.f;
  if (kItems > 0) {
    float v[kItems > 0 ? kItems : 1][kVec];
#pragma unroll
    for (int i = 0; i < (kItems > 0 ? kItems : 1); ++i) {
      const int j = (int)threadIdx.x + i * (int)blockDim.x;
      if (j < nvec) {
        load_f<T, kVec, true>(in + (long long)j * kVec, v[i]);
#pragma unroll
        for (int k = 0; k < kVec; ++k) m = fmaxf(m, v[i][k]);
      }
    }
    m = block_reduce(m, Max(), red_max);
#pragma unroll
    for (int i = 0; i < (kItems > 0 ? kItems : 1); ++i) {
      const int j = (int)threadIdx.x + i * (int)blockDim.x;
      if (j < nvec) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          v[i][k] = expf(v[i][k] - m);
          s += v[i][k];
        }
      }
    }
    s = block_reduce(s, Sum(), red_sum);
    const float inv = 1.f / s;
#pragma unroll
    for (int i = 0; i < (kItems > 0 ? kItems : 1); ++i) {
      const int j = (int)threadIdx.x + i * (int)blockDim.x;
      if (j < nvec) {
        float o[kVec];
#pragma unroll
        for (int k = 0; k < kVec; ++k) o[k] = v[i][k] * inv;
        store_f<T, kVec>(out + (long long)j * kVec, o);
      }
    }
  } else {
    for (int j = threadIdx.x; j < nvec; j += blockDim.x) {
      float v[kVec];
      load_f<T, kVec, true>(in + (long long)j * kVec, v);
#pragma unroll
      for (int k = 0; k < kVec; ++k) m = fmaxf(m, v[k]);
    }
    m = block_reduce(m, Max(), red_max);
    for (int j = threadIdx.x; j < nvec; j += blockDim.x) {
      float v[kVec];
      load_f<T, kVec, true>(in + (long long)j * kVec, v);
#pragma unroll
      for (int k = 0; k < kVec; ++k) s += expf(v[k] - m);
    }
    s = block_reduce(s, Sum(), red_sum);
    const float inv = 1.f / s;
    for (int j = threadIdx.x; j < nvec; j += blockDim.x) {
      float v[kVec];
      load_f<T, kVec, true>(in + (long long)j * kVec, v);
#pragma unroll
      for (int k = 0; k < kVec; ++k) v[k] = expf(v[k] - m) * inv;
      store_f<T, kVec>(out + (long long)j * kVec, v);
    }
  }
}

// Loads of values read once (silu_and_mul's input): evict-first in L1 and L2 (`ld.global.cs`) where
// the ISA has the hint (sm_80+), so the output, which the next kernel reads, keeps its L2 lines;
// elsewhere the read-only path.
template <typename T, int kVec>
__device__ __forceinline__ void load_once_f(const T* p, float (&v)[kVec]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  typedef typename Raw<sizeof(T) * kVec>::type R;
  const R r = __ldcs(reinterpret_cast<const R*>(p));
  T raw[kVec];
  memcpy(raw, &r, sizeof(R));
#pragma unroll
  for (int k = 0; k < kVec; ++k) v[k] = to_f(raw[k]);
#else
  load_f<T, kVec, true>(p, v);
#endif
}

// SiLU with the fast exponential and division (`__expf`: ex2 of x·log2 e; `__fdividef`: reciprocal
// and multiply): a few ulp of float, below half an ulp of fp16/bf16 but for rare ties. The IEEE
// `expf` and `/` cost ~35 instructions an element, which left 16-bit silu_and_mul issue-bound
// (84-89 % of copy at 16-32 MiB on the H200, bench/results/h200-ops-grid-before-silu.md).
__device__ __forceinline__ float silu_fast(float g) { return __fdividef(g, 1.f + __expf(-g)); }

// The element-wise gate ops' tile of one row: grid (rows, chunks of blockDim.x × kItems vectors); thread t
// of block (row, c) takes the row's vectors j = c × blockDim.x × kItems + t + i × blockDim.x (i < kItems).
// Every load first (`load(e, a, b)`: the two inputs' kVec values from element e = j × kVec), then math and
// stores: o[e + k] = T(op(a[k], b[k])).
template <typename T, int kVec, int kItems, typename Load, typename Op>
__device__ __forceinline__ void elt_tile(T* o, int d, const Load& load, const Op& op) {
  const int nvec = d / kVec;
  const int base = (int)blockIdx.y * (int)blockDim.x * kItems + (int)threadIdx.x;
  float av[kItems][kVec], bv[kItems][kVec];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int j = base + i * (int)blockDim.x;
    if (j < nvec) load((long long)j * kVec, av[i], bv[i]);
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int j = base + i * (int)blockDim.x;
    if (j < nvec) {
      float r[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) r[k] = op(av[i][k], bv[i][k]);
      store_f<T, kVec>(o + (long long)j * kVec, r);
    }
  }
}

// silu_and_mul: out[row, :] = T(T(silu(x)) * y), x and y the two halves of in[row, :] (read once).
template <typename T, int B, int kVec, int kItems>
__global__ void __launch_bounds__(Policy<T, B>::kEltThreads)
    silu_and_mul_kernel(T* __restrict__ out, const T* __restrict__ in, int d, long long in_stride,
                        long long out_stride) {
  const long long row = blockIdx.x;
  const T* x = in + row * in_stride;
  const T* y = x + d;
  elt_tile<T, kVec, kItems>(
      out + row * out_stride, d,
      [=](long long e, float (&xv)[kVec], float (&yv)[kVec]) {
        load_once_f<T, kVec>(x + e, xv);
        load_once_f<T, kVec>(y + e, yv);
      },
      [](float xv, float yv) { return round_to<T>(silu_fast(xv)) * yv; });
}

// Shared-expert combine: out = T(routed + T(T(sigmoid(gate[row])) * shared)); same grid as silu_and_mul.
template <typename T, int B, int kVec, int kItems>
__global__ void __launch_bounds__(Policy<T, B>::kEltThreads)
    gate_add_kernel(T* out, const T* routed, const T* __restrict__ shared, const T* __restrict__ gate, int d,
                    long long out_stride, long long routed_stride, long long shared_stride, long long gate_stride) {
  const long long row = blockIdx.x;
  const T* r = routed + row * routed_stride;
  const T* sh = shared + row * shared_stride;
  const float g = round_to<T>(1.f / (1.f + expf(-to_f(gate[row * gate_stride]))));
  elt_tile<T, kVec, kItems>(
      out + row * out_stride, d,
      [=](long long e, float (&rv)[kVec], float (&sv)[kVec]) {
        load_f<T, kVec, false>(r + e, rv);  // out may be routed: not the read-only path
        load_f<T, kVec, true>(sh + e, sv);
      },
      [=](float rv, float sv) { return rv + round_to<T>(g * sv); });
}

// MoE routing: one logical warp per token; lane l holds experts l, l + kSize, ...; softmax over all
// experts, then k rounds of a warp arg-max (ties: lower expert), the winner's owner removes it.
template <typename T, int B, int kPer>
__global__ void __launch_bounds__(Policy<T, B>::kTopkThreads)
    topk_softmax_kernel(float* __restrict__ weights, void* __restrict__ ids, int ids64, int* __restrict__ src,
                        const T* __restrict__ gating, long long gating_stride, long long rows, int experts, int k,
                        int renormalize) {
  const long long row = (long long)blockIdx.x * (blockDim.x / warp::kSize) + warp::id();
  if (row >= rows) return;  // uniform over the logical warp
  const int lane = warp::lane();
  const T* g = gating + row * gating_stride;
  float p[kPer];
  float m = Limits<float>::lowest();
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int e = i * warp::kSize + lane;
    p[i] = e < experts ? to_f(g[e]) : Limits<float>::lowest();
    m = fmaxf(m, p[i]);
  }
  m = warp::reduce(m, Max());
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int e = i * warp::kSize + lane;
    p[i] = e < experts ? expf(p[i] - m) : 0.f;
    s += p[i];
  }
  s = warp::reduce(s, Sum());
  const float inv = 1.f / s;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int e = i * warp::kSize + lane;
    p[i] = e < experts ? p[i] * inv : -1.f;  // probabilities are >= 0: padding is never picked
  }
  float mine = 0.f;
  int mine_id = 0;
  for (int j = 0; j < k; ++j) {
    float bv = -3.f;
    int bi = 0x7fffffff;
#pragma unroll
    for (int i = 0; i < kPer; ++i)
      if (p[i] > bv) {
        bv = p[i];
        bi = i * warp::kSize + lane;
      }
#pragma unroll
    for (int o = warp::kSize / 2; o > 0; o >>= 1) {
      const float ov = warp::shfl_xor(bv, o);
      const int oi = warp::shfl_xor(bi, o);
      if (ov > bv || (ov == bv && oi < bi)) {
        bv = ov;
        bi = oi;
      }
    }
    if (lane == (bi & (warp::kSize - 1))) {
      const int slot = bi >> warp::kLog2Size;
#pragma unroll
      for (int i = 0; i < kPer; ++i)
        if (i == slot) p[i] = -2.f;  // removed
    }
    if (lane == j) {
      mine = bv;
      mine_id = bi;
    }
  }
  if (renormalize) {
    const float tot = warp::reduce(lane < k ? mine : 0.f, Sum());
    mine = mine / tot;
  }
  if (lane < k) {
    weights[row * k + lane] = mine;
    if (ids64)
      static_cast<long long*>(ids)[row * k + lane] = mine_id;
    else
      static_cast<int*>(ids)[row * k + lane] = mine_id;
    if (src) src[row * k + lane] = (int)((long long)lane * rows + row);
  }
}

// ---- host side ---------------------------------------------------------------------------------

inline bool aligned(const void* p, int bytes) { return ((uintptr_t)p % (uintptr_t)bytes) == 0; }
inline int round_warp(int n) { return (n + warp::kSize - 1) / warp::kSize * warp::kSize; }
inline int ceil_div(long long a, long long b) { return (int)((a + b - 1) / b); }

// Threads and cached vectors per thread for a row of `nvec` vectors: at least kItemsMin vectors per
// thread before a warp is added, at most kRowThreads threads.
template <typename T, int B>
inline void row_shape(int nvec, int& threads, int& items) {
  threads = round_warp(ceil_div(nvec, Policy<T, B>::kItemsMin));
  if (threads > Policy<T, B>::kRowThreads) threads = Policy<T, B>::kRowThreads;
  items = ceil_div(nvec, threads);
}

// Calls F::template go<kItems>() for the smallest power of two kItems >= items, up to kMax;
// kItems = 0 (streaming) beyond.
template <int kItems, int kMax, bool kPast = (kItems > kMax)>
struct Ladder {
  template <typename F>
  static void run(int items, F& f) {
    if (items <= kItems)
      f.template go<kItems>();
    else
      Ladder<kItems * 2, kMax>::run(items, f);
  }
};
template <int kItems, int kMax>
struct Ladder<kItems, kMax, true> {
  template <typename F>
  static void run(int, F& f) {
    f.template go<0>();
  }
};

// The launch of a row op (rms_norm's forms, softmax): a block of `threads` per row (row_shape), kVec-wide
// loads when `vec`, and the least power-of-two kItems vectors per thread that hold the row (Ladder; 0:
// streaming). K::launch<kVec, kItems>(a, rows, threads, s) starts the op's kernel.
template <typename K, int kVec>
struct RowLaunch {
  const RowArgs& a;
  long long rows;
  int threads;
  cudaStream_t s;
  template <int kItems>
  void go() {
    K::template launch<kVec, kItems>(a, rows, threads, s);
  }
};

template <typename T, int B, typename K>
void launch_rows(const RowArgs& a, long long rows, bool vec, cudaStream_t s) {
  int threads, items;
  row_shape<T, B>(a.hidden / (vec ? (int)Policy<T, B>::kVec : 1), threads, items);
  if (vec) {
    RowLaunch<K, Policy<T, B>::kVec> f = {a, rows, threads, s};
    Ladder<1, Policy<T, B>::kMaxItems>::run(items, f);
  } else {
    RowLaunch<K, 1> f = {a, rows, threads, s};
    Ladder<1, Policy<T, B>::kMaxItems>::run(items, f);
  }
}

template <typename T, int B, bool kFused, int kKind>
struct RmsKernel {
  template <int kVec, int kItems>
  static void launch(const RowArgs& a, long long rows, int threads, cudaStream_t s) {
    rms_norm_kernel<T, B, kVec, kItems, kFused, kKind><<<(unsigned)rows, threads, 0, s>>>(a);
  }
};

template <typename T, int B>
struct SoftmaxKernel {
  template <int kVec, int kItems>
  static void launch(const RowArgs& a, long long rows, int threads, cudaStream_t s) {
    softmax_kernel<T, B, kVec, kItems><<<(unsigned)rows, threads, 0, s>>>(a);
  }
};

// Whether the row ops may use kVec-wide loads: every row start and the weight 16-byte aligned.
template <typename T, int B>
inline bool row_vectorizable(const RowArgs& a, bool fused, bool weight) {
  const int v = Policy<T, B>::kVec;
  const int bytes = v * (int)sizeof(T);
  if (v == 1) return false;
  if (a.hidden % v || a.in_stride % v || a.out_stride % v) return false;
  if (!aligned(a.in, bytes) || !aligned(a.out, bytes)) return false;
  if (fused && (a.res_stride % v || !aligned(a.residual, bytes))) return false;
  if (weight && !aligned(a.weight, bytes)) return false;
  if (a.heads > 1 && (a.in_hstride % v || a.out_hstride % v)) return false;
  if (a.gate && (a.gate_stride % v || (a.heads > 1 && a.gate_hstride % v) || !aligned(a.gate, bytes))) return false;
  return true;
}

template <typename T, int B, bool kFused, int kKind>
int rms_norm_t(const RowArgs& a, long long rows, cudaStream_t s) {
  launch_rows<T, B, RmsKernel<T, B, kFused, kKind>>(a, rows, row_vectorizable<T, B>(a, kFused, true), s);
  return host::launch_check(kFused ? "fused_add_rms_norm" : "rms_norm");
}

template <typename T, int B>
int norm_t(const RowArgs& a, long long rows, cudaStream_t s) {
  if (a.residual) {
    return a.single_round ? rms_norm_t<T, B, true, kSingleRound>(a, rows, s)
                          : rms_norm_t<T, B, true, kRoundMid>(a, rows, s);
  }
  if (a.gate) return rms_norm_t<T, B, false, kGated>(a, rows, s);
  return a.single_round ? rms_norm_t<T, B, false, kSingleRound>(a, rows, s)
                        : rms_norm_t<T, B, false, kRoundMid>(a, rows, s);
}

template <typename T, int B>
int softmax_t(const RowArgs& a, long long rows, cudaStream_t s) {
  launch_rows<T, B, SoftmaxKernel<T, B>>(a, rows, row_vectorizable<T, B>(a, false, false), s);
  return host::launch_check("softmax");
}

// The element-wise gate ops' launch over `rows` rows of `nvec` vectors: at least kEltItems vectors per
// thread before a warp is added, at most kEltThreads threads; grid (rows, chunks of threads × kEltItems).
template <typename T, int B>
inline dim3 elt_grid(long long rows, int nvec, int& threads) {
  threads = round_warp(ceil_div(nvec, Policy<T, B>::kEltItems));
  if (threads > Policy<T, B>::kEltThreads) threads = Policy<T, B>::kEltThreads;
  return dim3((unsigned)rows, (unsigned)ceil_div(nvec, (long long)threads * Policy<T, B>::kEltItems));
}

template <typename T, int B, int kVec>
void silu_launch(T* out, const T* in, long long rows, int d, long long is, long long os, cudaStream_t s) {
  int threads;
  const dim3 grid = elt_grid<T, B>(rows, d / kVec, threads);
  silu_and_mul_kernel<T, B, kVec, Policy<T, B>::kEltItems><<<grid, threads, 0, s>>>(out, in, d, is, os);
}

template <typename T, int B>
int silu_and_mul_t(void* out, const void* in, long long rows, int d, long long is, long long os, cudaStream_t s) {
  const int v = Policy<T, B>::kEltVec;
  const int bytes = v * (int)sizeof(T);
  const bool vec = v > 1 && d % v == 0 && is % v == 0 && os % v == 0 && aligned(in, bytes) && aligned(out, bytes);
  if (vec)
    silu_launch<T, B, Policy<T, B>::kEltVec>(static_cast<T*>(out), static_cast<const T*>(in), rows, d, is, os, s);
  else
    silu_launch<T, B, 1>(static_cast<T*>(out), static_cast<const T*>(in), rows, d, is, os, s);
  return host::launch_check("silu_and_mul");
}

template <typename T, int B, int kVec>
void gate_add_launch(const muh_op_gate_add_args& g, cudaStream_t s) {
  int threads;
  const dim3 grid = elt_grid<T, B>(g.rows, g.d / kVec, threads);
  gate_add_kernel<T, B, kVec, Policy<T, B>::kEltItems><<<grid, threads, 0, s>>>(
      static_cast<T*>(g.out), static_cast<const T*>(g.routed), static_cast<const T*>(g.shared),
      static_cast<const T*>(g.gate), g.d, g.out_stride, g.routed_stride, g.shared_stride, g.gate_stride);
}

template <typename T, int B>
int gate_add_t(const muh_op_gate_add_args& g, cudaStream_t s) {
  const int v = Policy<T, B>::kEltVec;
  const int bytes = v * (int)sizeof(T);
  const bool vec = v > 1 && g.d % v == 0 && g.out_stride % v == 0 && g.routed_stride % v == 0 &&
                   g.shared_stride % v == 0 && aligned(g.out, bytes) && aligned(g.routed, bytes) &&
                   aligned(g.shared, bytes);
  if (vec)
    gate_add_launch<T, B, Policy<T, B>::kEltVec>(g, s);
  else
    gate_add_launch<T, B, 1>(g, s);
  return host::launch_check("gate_add");
}

template <typename T, int B>
struct TopkLaunch {
  float* w;
  void* ids;
  int ids64;
  int* src;
  const T* g;
  long long gs;
  long long rows;
  int experts, k, renorm;
  cudaStream_t s;
  template <int kPer>
  void go() {
    launch<(kPer > 0 ? kPer : 1)>();
  }
  template <int kPer>
  void launch() {
    long long threads = rows * warp::kSize;
    if (threads > Policy<T, B>::kTopkThreads) threads = Policy<T, B>::kTopkThreads;
    const long long per_block = threads / warp::kSize;
    topk_softmax_kernel<T, B, kPer><<<(unsigned)((rows + per_block - 1) / per_block), (unsigned)threads, 0, s>>>(
        w, ids, ids64, src, g, gs, rows, experts, k, renorm);
  }
};

template <typename T, int B>
int topk_softmax_t(float* w, void* ids, int ids64, int* src, const void* g, long long gs, long long rows, int experts,
                   int k, int renorm, cudaStream_t s) {
  const int per = ceil_div(experts, warp::kSize);
  if (per > Policy<T, B>::kMaxPerLane)
    return host::fail(MUH_ERR_UNSUPPORTED, "muh: topk_softmax: %d experts exceed %d (%d per lane x %d lanes)", experts,
                      Policy<T, B>::kMaxPerLane * warp::kSize, (int)Policy<T, B>::kMaxPerLane, warp::kSize);
  TopkLaunch<T, B> f = {w, ids, ids64, src, static_cast<const T*>(g), gs, rows, experts, k, renorm, s};
  Ladder<1, Policy<T, B>::kMaxPerLane>::run(per, f);
  return host::launch_check("topk_softmax");
}

inline int check_rows(long long rows, const char* op) {
  if (rows < 0 || rows > 2147483647LL)
    return host::fail(MUH_ERR_ARGUMENT, "muh: %s: %lld rows (0 .. 2^31-1 supported)", op, rows);
  return MUH_OK;
}

}  // namespace ops MUH_LIBRARY_LOCAL
}  // namespace muh
