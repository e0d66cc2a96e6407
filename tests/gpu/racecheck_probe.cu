// Does compute-sanitizer racecheck model a named barrier that only part of the block uses?
//
// Every variant below is race-free under the PTX memory model: thread 0 writes `flag` and every
// thread reads it after a __syncthreads() that all 384 threads reach after the write. They differ
// only in what logical warp 0 (threads 0..63, two 32-lane hardware warps, as in the warp-64
// emulation) does before the write — the shape of the scan kernel's decoupled look-back, where
// only logical warp 0 runs warp collectives (named barrier 1, 64 threads) while the other warps
// wait at __syncthreads().
//
//   plain            no named barrier (control)
//   subset           threads 0..63: `barrier.sync 1, 64` x kRounds, converged
//   subset-diverged  as subset, but lane 0 of each hardware warp writes a slot first (ballot_parts)
//   subset-aligned   threads 0..63: `bar.sync 1, 64` (the .aligned form) x kRounds
//   all-warps        every logical warp w: `barrier.sync 1+w, 64` x kRounds (as in the block scan)
//   warp-layer       the generated emulated layer (muh/warp.cuh): logical warp 0 runs warp::all,
//                    first_lane and warp::reduce, then lane 0 writes (exactly the scan's pattern)
//
// Build: nvcc -arch=sm_90 -I <emu64 build>/include racecheck_probe.cu; run: probe <variant>.
// Exit 0 when every block read the right values (the hardware result), 1 otherwise.
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "muh/warp.cuh"

enum { kThreads = 384, kBlocks = 64, kRounds = 4 };

__device__ __forceinline__ void named(int id) { asm volatile("barrier.sync %0, %1;" ::"r"(id), "r"(64) : "memory"); }
__device__ __forceinline__ void named_aligned(int id) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(64) : "memory"); }

template <int kVariant>
__global__ void __launch_bounds__(kThreads) probe(int* out) {
  __shared__ int flag;
  __shared__ int slots[kThreads];
  __shared__ int buf[kThreads];
  const int t = threadIdx.x;
  buf[t] = t + blockIdx.x;
  slots[t] = 0;
  __syncthreads();
  int v = 0;
  if (kVariant == 4) {  // all-warps
    for (int r = 0; r < kRounds; ++r) named(1 + t / 64);
  }
  if (t < 64) {
    if (kVariant == 1) {
      for (int r = 0; r < kRounds; ++r) named(1);
    } else if (kVariant == 2) {
      for (int r = 0; r < kRounds; ++r) {
        if ((t & 31) == 0) slots[t] = r + 1;
        named(1);
        v += slots[0] + slots[32];
        named(1);
      }
    } else if (kVariant == 3) {
      for (int r = 0; r < kRounds; ++r) named_aligned(1);
    } else if (kVariant == 5) {
      bool done = muh::warp::all(buf[t] >= 0);
      int first = muh::warp::first_lane(t == 5);
      v = muh::warp::reduce(done ? first : 1000, [](int a, int b) { return a + b; });
    }
  }
  if (t == 0) flag = 1000 + blockIdx.x + v;
  __syncthreads();
  const int expect_v = kVariant == 2 ? 2 * (kRounds * (kRounds + 1) / 2) : kVariant == 5 ? 64 * 5 : 0;
  const int got = flag + buf[(t + 1) % kThreads];
  const int want = 1000 + blockIdx.x + expect_v + (t + 1) % kThreads + blockIdx.x;
  if (got != want) atomicAdd(out, 1);
}

int main(int argc, char** argv) {
  const char* names[] = {"plain", "subset", "subset-diverged", "subset-aligned", "all-warps", "warp-layer"};
  int variant = -1;
  for (int i = 0; i < 6; ++i)
    if (argc > 1 && !strcmp(argv[1], names[i])) variant = i;
  if (variant < 0) {
    fprintf(stderr, "usage: probe plain|subset|subset-diverged|subset-aligned|all-warps|warp-layer\n");
    return 2;
  }
  int* out;
  if (cudaMalloc(&out, sizeof(int)) != cudaSuccess) return 3;
  cudaMemset(out, 0, sizeof(int));
  switch (variant) {
    case 0: probe<0><<<kBlocks, kThreads>>>(out); break;
    case 1: probe<1><<<kBlocks, kThreads>>>(out); break;
    case 2: probe<2><<<kBlocks, kThreads>>>(out); break;
    case 3: probe<3><<<kBlocks, kThreads>>>(out); break;
    case 4: probe<4><<<kBlocks, kThreads>>>(out); break;
    case 5: probe<5><<<kBlocks, kThreads>>>(out); break;
  }
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  int bad = -1;
  if (e == cudaSuccess) e = cudaMemcpy(&bad, out, sizeof(int), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    fprintf(stderr, "probe %s: %s\n", names[variant], cudaGetErrorString(e));
    return 3;
  }
  printf("probe %s: %d wrong reads in %d threads\n", names[variant], bad, kBlocks * kThreads);
  return bad ? 1 : 0;
}
