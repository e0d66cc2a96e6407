// Histogram with evenly spaced bins (CUB DeviceHistogram::HistogramEven semantics), static CUDA:
// compiles on its own (C++14, CUDA 10.2 subset) and is instantiated by kernels/histogram.cu with the
// resolved policy of each sample type. A sample x counts in bin b when lower <= x < upper, with
//   floating point: b = int((x - lower) * r), r = T(bins / (upper - lower)) computed in T once;
//   integers:       b = (x - lower) * bins / (upper - lower) in exact unsigned arithmetic, integer
//                   levels of a wider type (uint8 samples over [0, 256), as CUB's int levels);
// a rounding to `bins` counts in the last bin. Counters are int.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

// Library-private linkage (as host.cuh says why: template host stubs of two generated libraries in
// one process must not bind to each other). Same definition as host.cuh's.
#ifndef MUH_LIBRARY_LOCAL
#if defined(__GNUC__) || defined(__clang__)
#define MUH_LIBRARY_LOCAL __attribute__((visibility("hidden")))
#else
#define MUH_LIBRARY_LOCAL
#endif
#endif

namespace muh {
namespace histogram_impl MUH_LIBRARY_LOCAL {

template <typename T> struct IsFloat { enum { value = 0 }; };
template <> struct IsFloat<float> { enum { value = 1 }; };
template <> struct IsFloat<double> { enum { value = 1 }; };

template <typename T, bool kFloat = IsFloat<T>::value != 0> struct Even;

// Floating point samples: levels of the sample type, one multiply per sample by a reciprocal
// computed once (on the host). make() says why the levels cannot be used (0: fine).
template <typename T> struct Even<T, true> {
  T lower, upper, scale;
  int bins;
  __host__ static const char* make(double lo, double hi, int bins, Even* e) {
    e->lower = static_cast<T>(lo);
    e->upper = static_cast<T>(hi);
    if (!(e->lower < e->upper)) return "lower must be below upper (in the sample type)";
    e->scale = static_cast<T>(static_cast<T>(bins) / static_cast<T>(e->upper - e->lower));
    e->bins = bins;
    return 0;
  }
  __host__ __device__ __forceinline__ int bin(T x) const {
    if (!(x >= lower && x < upper)) return -1;
    const int b = static_cast<int>((x - lower) * scale);
    return b < bins ? b : bins - 1;
  }
};

// Integer samples (up to 4 bytes): integer levels of a wider type (CUB's LevelT int: [0, 256) for
// bytes), exact arithmetic: 4-byte unsigned when range x bins fits in it, else 8-byte.
template <typename T> struct Even<T, false> {
  long long lower, upper;
  unsigned long long range;
  int bins;
  bool narrow;
  __host__ static const char* make(double lo, double hi, int bins, Even* e) {
    const double lim = 4611686018427387904.0;  // 2^62: levels and their difference fit in long long
    if (!(lo >= -lim && lo <= lim && hi >= -lim && hi <= lim) ||
        lo != static_cast<double>(static_cast<long long>(lo)) || hi != static_cast<double>(static_cast<long long>(hi)))
      return "levels of integer samples must be integers (below 2^62 in magnitude)";
    e->lower = static_cast<long long>(lo);
    e->upper = static_cast<long long>(hi);
    if (!(e->lower < e->upper)) return "lower must be below upper";
    e->range = static_cast<unsigned long long>(e->upper - e->lower);
    e->bins = bins;
    // The bin arithmetic cannot overflow (CUB refuses the same ranges with cudaErrorInvalidValue).
    if (e->range > ~0ull / static_cast<unsigned long long>(bins)) return "range x bins overflows 64 bits";
    e->narrow = e->range * static_cast<unsigned long long>(bins) <= 0xffffffffull;
    return 0;
  }
  __host__ __device__ __forceinline__ int bin(T x) const {
    const long long v = static_cast<long long>(x);
    if (!(v >= lower && v < upper)) return -1;
    const unsigned long long d = static_cast<unsigned long long>(v - lower);
    if (narrow) {
      return static_cast<int>(static_cast<unsigned>(d) * static_cast<unsigned>(bins) / static_cast<unsigned>(range));
    }
    return static_cast<int>(d * static_cast<unsigned long long>(bins) / range);
  }
};

// 16-byte loads where the pointer allows it.
template <typename T, int kVec> struct alignas(sizeof(T) * kVec) Vec {
  T v[kVec];
};

// One pass: each block counts a grid-stride share of tiles (kThreads x kItems samples) into a
// shared-memory histogram, then adds it to the global one. kSmem false: counts go straight to
// global memory (more bins than shared memory holds).
template <typename T, int kThreads, int kItems, int kVec, bool kSmem>
__global__ void __launch_bounds__(kThreads)
    histogram_kernel(const T* __restrict__ in, long long n, Even<T> even, int* __restrict__ out) {
  extern __shared__ int smem_counts[];
  int* counts = kSmem ? smem_counts : out;
  if (kSmem) {
    for (int i = threadIdx.x; i < even.bins; i += kThreads) counts[i] = 0;
    __syncthreads();
  }
  enum { kVecs = kItems / kVec, kTile = kThreads * kItems };
  const long long full = n / kTile;
  for (long long t = blockIdx.x; t < full; t += gridDim.x) {
    const Vec<T, kVec>* tile = reinterpret_cast<const Vec<T, kVec>*>(in + t * kTile);
    Vec<T, kVec> v[kVecs];
#pragma unroll
    for (int i = 0; i < kVecs; ++i) v[i] = tile[i * kThreads + threadIdx.x];
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const int b = even.bin(v[i].v[j]);
        if (b >= 0) atomicAdd(counts + b, 1);
      }
  }
  if (blockIdx.x == full % gridDim.x) {
    for (long long i = full * kTile + threadIdx.x; i < n; i += kThreads) {
      const int b = even.bin(in[i]);
      if (b >= 0) atomicAdd(counts + b, 1);
    }
  }
  if (kSmem) {
    __syncthreads();
    for (int i = threadIdx.x; i < even.bins; i += kThreads) {
      const int c = counts[i];
      if (c) atomicAdd(out + i, c);
    }
  }
}

}  // namespace histogram_impl
}  // namespace muh
