// Device-wide reduce (sum, max, min) in one launch, static CUDA: each block reduces a grid-stride
// share of full tiles with vector loads, publishes its partial, and the last block to finish
// reduces the partials in block order (deterministic for a given grid) and resets the ticket
// counter. No numbers of its own: kernels/reduce.cu instantiates it with each element type's
// resolved policy P (params.cuh). Compiles on its own against the generated common layer
// (include/muh: block.cuh, host.cuh, types.cuh); C++14, CUDA 10.2 subset.
//
// Policy P (enums): kThreads, kItems, kVec (elements per vector load), kLdg (read-only path),
// kMaxGrid (most first-pass blocks: the workspace holds one partial each).
#pragma once

#include <stdint.h>

#include "muh/block.cuh"
#include "muh/host.cuh"
#include "muh/types.cuh"

namespace muh {
namespace reduce_impl MUH_LIBRARY_LOCAL {  // max_grid's cache stays in this library (host.cuh)

// Workspace: a 16-byte ticket counter, then one partial per block.
constexpr size_t kCounterBytes = 16;

// Workspace bytes for at most P::kMaxGrid partials of accumulator type A.
template <typename A, typename P>
constexpr size_t workspace_bytes() {
  return kCounterBytes + sizeof(A) * (size_t)P::kMaxGrid;
}

template <typename T, typename P, typename Op, int kVec>
__global__ void __launch_bounds__(P::kThreads) reduce_kernel(const T* __restrict__ in, long long n, T* __restrict__ out,
                                                             typename Acc<T>::type* partials, unsigned* counter) {
  typedef typename Acc<T>::type A;
  enum { kThreads = P::kThreads, kItems = P::kItems, kTile = kThreads * kItems, kVecs = kItems / kVec };
  __shared__ A warp_partials[block::Shape<kThreads>::kWarps];
  __shared__ int am_last;
  Op op;
  A acc = Op::template identity<A>();
  const long long full = n / kTile;
  for (long long t = blockIdx.x; t < full; t += gridDim.x) {
    const T* base = in + t * kTile;
    T v[kVecs][kVec];
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
      load_vec<T, kVec, P::kLdg != 0>(base + ((long long)i * kThreads + threadIdx.x) * kVec, v[i]);
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc = op(acc, Cvt<A, T>::in(v[i][j]));
  }
  for (long long i = full * kTile + (long long)blockIdx.x * kThreads + threadIdx.x; i < n;
       i += (long long)gridDim.x * kThreads)
    acc = op(acc, Cvt<A, T>::in(in[i]));

  A r = block::reduce<kThreads>(acc, op, warp_partials);
  if (threadIdx.x == 0) {
    ((volatile A*)partials)[blockIdx.x] = r;
    __threadfence();
    unsigned ticket = atomicAdd(counter, 1u);
    am_last = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (!am_last) return;
  __threadfence();
  A a = Op::template identity<A>();
  const volatile A* vp = partials;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kThreads) a = op(a, (A)vp[i]);
  r = block::reduce<kThreads>(a, op, warp_partials);
  if (threadIdx.x == 0) {
    *out = Cvt<A, T>::out(r);
    *counter = 0u;
  }
}

// First-pass blocks: all that fit on the device at once (cached per device), at most P::kMaxGrid.
template <typename T, typename P, typename Op, int kVec>
int max_grid() {
  static int per_device[host::kMaxDevices];
  int& cached = per_device[host::current_device()];
  if (!cached) {
    int per_sm = 0;
    int rc = host::cuda_check(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_kernel<T, P, Op, kVec>, P::kThreads, 0),
        "occupancy(reduce)");
    if (rc) return -rc;
    long long g = (long long)(per_sm > 0 ? per_sm : 1) * host::sm_count();
    cached = (int)(g < P::kMaxGrid ? g : P::kMaxGrid);
  }
  return cached;
}

template <typename T, typename P, typename Op>
int run(const void* in_, long long n, void* out_, void* ws, size_t ws_bytes, cudaStream_t s) {
  typedef typename Acc<T>::type A;
  enum { kVec = P::kVec, kTile = P::kThreads * P::kItems };
  if (ws_bytes < workspace_bytes<A, P>())
    return host::fail(MUH_ERR_ARGUMENT, "muh_reduce: workspace of %zu bytes is too small", ws_bytes);
  const T* in = static_cast<const T*>(in_);
  unsigned* counter = static_cast<unsigned*>(ws);
  A* partials = reinterpret_cast<A*>(static_cast<char*>(ws) + kCounterBytes);
  const bool vec_ok = kVec > 1 && (reinterpret_cast<uintptr_t>(in) % (sizeof(T) * kVec)) == 0;
  int grid_cap = vec_ok ? max_grid<T, P, Op, kVec>() : max_grid<T, P, Op, 1>();
  if (grid_cap < 0) return -grid_cap;
  // Even share: every block gets the same number of full tiles (or one fewer), no straggler wave.
  long long tiles = (n + kTile - 1) / kTile;
  if (tiles < 1) tiles = 1;
  const long long per_block = (tiles + grid_cap - 1) / grid_cap;
  const int grid = (int)((tiles + per_block - 1) / per_block);
  if (vec_ok)
    reduce_kernel<T, P, Op, kVec><<<grid, P::kThreads, 0, s>>>(in, n, static_cast<T*>(out_), partials, counter);
  else
    reduce_kernel<T, P, Op, 1><<<grid, P::kThreads, 0, s>>>(in, n, static_cast<T*>(out_), partials, counter);
  return host::launch_check("reduce launch");
}

}  // namespace reduce_impl MUH_LIBRARY_LOCAL
}  // namespace muh
