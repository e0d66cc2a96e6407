// Histogram with evenly spaced bins (CUB DeviceHistogram::HistogramEven semantics), static CUDA:
// compiles on its own (C++14, CUDA 10.2 subset) and is launched by histogram_host.cuh, which
// kernels/histogram.cu instantiates with the resolved policy of each sample type. A sample x counts
// in bin b when lower <= x < upper, with
//   floating point: b = int((x - lower) * r), r = T(bins / (upper - lower)) computed in T once;
//   integers:       b = (x - lower) * bins / (upper - lower) in exact unsigned arithmetic, integer
//                   levels of a wider type (uint8 samples over [0, 256), as CUB's int levels), the
//                   unsigned-word division by the range as a multiply by its reciprocal (exact, Div32);
// a rounding to `bins` counts in the last bin. Counters are int.
//
// 1-byte samples are counted by value: 256 counters per block indexed by the sample's bits, turned
// into output bins once per block (the bin arithmetic runs 256 times per block, not once per sample;
// CUB's rule for 8-bit samples). A block can keep several copies of its counters ("sub-histograms"),
// interleaved so that copy c of counter i sits at i * copies + c and thread t counts in copy
// t % copies: with one copy per shared-memory bank no two lanes of a warp hit the same bank (nor the
// same word), whatever the samples.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "muh/linkage.cuh"  // MUH_LIBRARY_LOCAL

namespace muh {
namespace histogram_impl MUH_LIBRARY_LOCAL {

template <typename T>
struct IsFloat {
  enum { value = 0 };
};
template <>
struct IsFloat<float> {
  enum { value = 1 };
};
template <>
struct IsFloat<double> {
  enum { value = 1 };
};

template <typename T, bool kFloat = IsFloat<T>::value != 0>
struct Even;

// Floating point samples: levels of the sample type, one multiply per sample by a reciprocal
// computed once (on the host). make() says why the levels cannot be used (0: fine).
template <typename T>
struct Even<T, true> {
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

// Division of an unsigned word (W = 8 * sizeof(unsigned) bits) by a divisor fixed at launch, as a
// multiply-high, an add and two shifts (Granlund & Montgomery, "Division by invariant integers using
// multiplication", PLDI 1994, fig. 4.1: exact for every W-bit numerator): with l = ceil(log2 d),
// m = floor(2^W (2^l - d) / d) + 1,  q = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0),  t = (m * n) >> W.
struct Div32 {
  enum { kBits = 8 * sizeof(unsigned) };
  unsigned m, s1, s2;
  __host__ static Div32 make(unsigned d) {
    unsigned l = 0;
    while (l < kBits && (1ull << l) < d) ++l;
    Div32 r;
    r.m = static_cast<unsigned>((((1ull << l) - d) << kBits) / d + 1);
    r.s1 = l < 1 ? l : 1;
    r.s2 = l > 1 ? l - 1 : 0;
    return r;
  }
  __host__ __device__ __forceinline__ unsigned div(unsigned n) const {
#ifdef __CUDA_ARCH__
    const unsigned t = __umulhi(m, n);
#else
    const unsigned t = static_cast<unsigned>((static_cast<unsigned long long>(m) * n) >> kBits);
#endif
    return (t + ((n - t) >> s1)) >> s2;
  }
};

// Integer samples (up to 4 bytes): integer levels of a wider type (CUB's LevelT int: [0, 256) for
// bytes), exact arithmetic: 4-byte unsigned when range x bins fits in it, else 8-byte.
template <typename T>
struct Even<T, false> {
  long long lower, upper;
  unsigned long long range;
  int bins;
  bool narrow;  // range x bins fits in an unsigned word: word arithmetic, the division by `div`
  Div32 div;
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
    e->div = Div32::make(e->narrow ? static_cast<unsigned>(e->range) : 1u);
    return 0;
  }
  __host__ __device__ __forceinline__ int bin(T x) const {
    const long long v = static_cast<long long>(x);
    if (!(v >= lower && v < upper)) return -1;
    const unsigned long long d = static_cast<unsigned long long>(v - lower);
    if (narrow) {
      return static_cast<int>(div.div(static_cast<unsigned>(d) * static_cast<unsigned>(bins)));
    }
    return static_cast<int>(d * static_cast<unsigned long long>(bins) / range);
  }
};

// Vector loads of kVec samples (up to 16 bytes) where the pointer allows it.
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec) Vec {
  T v[kVec];
};

// 1-byte samples are counted by value (see the top of this file).
template <typename T>
struct ByValue {
  enum { value = sizeof(T) == 1 };
};

// The counter a sample goes to in a block's privatized histogram (copy 0; -1: not counted).
template <typename T, bool kByValue = ByValue<T>::value != 0>
struct Slot;
template <typename T>
struct Slot<T, true> {
  __device__ __forceinline__ static int of(T x, const Even<T>&) { return static_cast<unsigned char>(x); }
  __device__ __forceinline__ static int bin(int slot, const Even<T>& e) {
    return e.bin(static_cast<T>(static_cast<unsigned char>(slot)));
  }
  __device__ __forceinline__ static int slots(const Even<T>&) { return 256; }
};
template <typename T>
struct Slot<T, false> {
  __device__ __forceinline__ static int of(T x, const Even<T>& e) { return e.bin(x); }
  __device__ __forceinline__ static int bin(int slot, const Even<T>&) { return slot; }
  __device__ __forceinline__ static int slots(const Even<T>& e) { return e.bins; }
};

// Counters a block needs in shared memory (its dynamic shared memory is 4 bytes each).
template <typename T>
__host__ __device__ inline long long smem_counters(int bins, int copies) {
  return static_cast<long long>(ByValue<T>::value ? 256 : bins) * copies;
}

// One pass: each block counts a grid-stride share of tiles (kThreads x kItems samples) into kCopies
// interleaved copies of a shared-memory histogram, then adds their sum to the global one. kSmem
// false (only for samples not counted by value, kCopies 1): counts go straight to global memory
// (more bins than shared memory holds).
template <typename T, int kThreads, int kItems, int kVec, int kCopies, bool kSmem>
__global__ void __launch_bounds__(kThreads)
    histogram_kernel(const T* __restrict__ in, long long n, Even<T> even, int* __restrict__ out) {
  static_assert(kSmem || (!ByValue<T>::value && kCopies == 1), "global counters: one copy, not by value");
  extern __shared__ int smem_counts[];
  typedef Slot<T> S;
  int* counts = kSmem ? smem_counts : out;
  const int copy = kCopies > 1 ? static_cast<int>(threadIdx.x % kCopies) : 0;
  if (kSmem) {
    const int total = S::slots(even) * kCopies;
    for (int i = threadIdx.x; i < total; i += kThreads) counts[i] = 0;
    __syncthreads();
  }
  int* mine = counts + copy;
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
        const int s = S::of(v[i].v[j], even);
        if (s >= 0) atomicAdd(mine + s * kCopies, 1);
      }
  }
  if (blockIdx.x == full % gridDim.x) {
    for (long long i = full * kTile + threadIdx.x; i < n; i += kThreads) {
      const int s = S::of(in[i], even);
      if (s >= 0) atomicAdd(mine + s * kCopies, 1);
    }
  }
  if (kSmem) {
    __syncthreads();
    const int slots = S::slots(even);
    for (int i = threadIdx.x; i < slots; i += kThreads) {
      int c = 0;
#pragma unroll
      for (int k = 0; k < kCopies; ++k) c += counts[i * kCopies + (k + i) % kCopies];  // rotated: no bank conflicts
      const int b = S::bin(i, even);
      if (c && b >= 0) atomicAdd(out + b, c);
    }
  }
}

}  // namespace histogram_impl MUH_LIBRARY_LOCAL
}  // namespace muh
