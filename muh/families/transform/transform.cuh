// Element-wise map out[i] = op(in[i]) with vector loads, static CUDA: no numbers of its own;
// kernels/transform.cu instantiates it with each element type's resolved policy P (params.cuh: items
// per thread sized by the spec's bytes in flight per SM). Compiles on its own against the generated
// common layer (include/muh: host.cuh, types.cuh); C++14, CUDA 10.2 subset.
//
// Policy P (enums): kThreads, kItems, kVec (elements per vector access).
#pragma once

#include <stdint.h>

#include "muh/host.cuh"
#include "muh/types.cuh"

namespace muh {
namespace transform_impl MUH_LIBRARY_LOCAL {

__device__ __forceinline__ float exp_of(float x) { return expf(x); }
__device__ __forceinline__ double exp_of(double x) { return exp(x); }

// The operators (muh_transform_op); alpha is the scale's factor, unused by the others.
struct Scale {
  float alpha;
  template <typename A>
  __device__ __forceinline__ A operator()(A x) const {
    return x * (A)alpha;
  }
};
struct Relu {
  float alpha;
  template <typename A>
  __device__ __forceinline__ A operator()(A x) const {
    return x > A(0) ? x : A(0);
  }
};
struct Silu {
  float alpha;
  template <typename A>
  __device__ __forceinline__ A operator()(A x) const {
    return x / (A(1) + exp_of(-x));
  }
};

template <typename T, typename P, typename Op, int kVec>
__global__ void __launch_bounds__(P::kThreads)
    transform_kernel(const T* __restrict__ in, T* __restrict__ out, long long n, Op op) {
  typedef typename Acc<T>::type A;
  enum { kThreads = P::kThreads, kItems = P::kItems, kVecs = kItems / kVec, kTile = kThreads * kItems };
  const long long base = (long long)blockIdx.x * kTile;
  if (base + kTile <= n) {
    T v[kVecs][kVec];
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
      load_vec<T, kVec, false>(in + base + ((long long)i * kThreads + threadIdx.x) * kVec, v[i]);
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
#pragma unroll
      for (int j = 0; j < kVec; ++j) v[i][j] = Cvt<A, T>::out(op(Cvt<A, T>::in(v[i][j])));
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
      store_vec<T, kVec>(out + base + ((long long)i * kThreads + threadIdx.x) * kVec, v[i]);
  } else {
    for (long long i = base + threadIdx.x; i < n; i += kThreads) out[i] = Cvt<A, T>::out(op(Cvt<A, T>::in(in[i])));
  }
}

template <typename T, typename P, typename Op>
int run(const void* in_, void* out_, long long n, Op op, cudaStream_t s) {
  enum { kVec = P::kVec, kTile = P::kThreads * P::kItems };
  if (n == 0) return MUH_OK;
  const T* in = static_cast<const T*>(in_);
  T* out = static_cast<T*>(out_);
  const long long blocks = (n + kTile - 1) / kTile;
  if (blocks > 2147483647LL) return host::fail(MUH_ERR_ARGUMENT, "muh_transform: %lld elements is too many", n);
  const size_t vb = sizeof(T) * kVec;
  const bool vec_ok = (reinterpret_cast<uintptr_t>(in) % vb) == 0 && (reinterpret_cast<uintptr_t>(out) % vb) == 0;
  if (vec_ok)
    transform_kernel<T, P, Op, kVec><<<(unsigned)blocks, P::kThreads, 0, s>>>(in, out, n, op);
  else
    transform_kernel<T, P, Op, 1><<<(unsigned)blocks, P::kThreads, 0, s>>>(in, out, n, op);
  return host::launch_check("transform launch");
}

}  // namespace transform_impl MUH_LIBRARY_LOCAL
}  // namespace muh
