// Host launcher of the histogram (include/muh/kernels/histogram.cuh), static CUDA: no numbers of its
// own; kernels/histogram.cu calls run<T, P> with each sample type's resolved policy P (params.cuh), one
// per size bucket where the type has them. Compiles on its own against the generated common layer
// (include/muh: host.cuh); C++14, CUDA 10.2 subset.
//
// Policy P (enums): kThreads, kItems (samples per thread and tile), kVec (samples per load), kCopies
// (sub-histograms per block), kSmemBins (counters that fit in a block's shared memory).
#pragma once

#include <stdint.h>

#include "muh/host.cuh"
#include "muh/kernels/histogram.cuh"

namespace muh {
namespace histogram_impl MUH_LIBRARY_LOCAL {

// Resident blocks of one instantiation for its shared memory (cached per device and size).
template <typename T, typename P, int kVec, int kCopies, bool kSmem>
int grid_cap(int smem_bytes) {
  static int per_device[host::kMaxDevices][2];  // {smem bytes + 1, blocks}
  int* cached = per_device[host::current_device()];
  if (cached[0] != smem_bytes + 1) {
    int per_sm = 0;
    int rc = host::cuda_check(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, histogram_kernel<T, P::kThreads, P::kItems, kVec, kCopies, kSmem>, P::kThreads, smem_bytes),
        "occupancy(histogram)");
    if (rc) return -rc;
    cached[1] = (per_sm > 0 ? per_sm : 1) * host::sm_count();
    cached[0] = smem_bytes + 1;
  }
  return cached[1];
}

template <typename T, typename P, int kVec, int kCopies, bool kSmem>
int launch(const T* in, long long n, const Even<T>& even, int* out, cudaStream_t s) {
  enum { kTile = P::kThreads * P::kItems };
  const int smem_bytes = kSmem ? (int)(smem_counters<T>(even.bins, kCopies) * sizeof(int)) : 0;
  const int cap = grid_cap<T, P, kVec, kCopies, kSmem>(smem_bytes);
  if (cap < 0) return -cap;
  long long tiles = n / kTile + 1;
  const int grid = (int)(tiles < cap ? tiles : cap);
  histogram_kernel<T, P::kThreads, P::kItems, kVec, kCopies, kSmem>
      <<<grid, P::kThreads, smem_bytes, s>>>(in, n, even, out);
  return host::launch_check("histogram launch");
}

template <bool B>
struct Tag {};

// 1-byte samples: by value, the policy's copies (their counters fit: checked when generated).
template <typename T, typename P, int kVec>
int pick(const T* in, long long n, const Even<T>& even, int* out, cudaStream_t s, Tag<true>) {
  return launch<T, P, kVec, P::kCopies, true>(in, n, even, out, s);
}

// Others: the policy's copies where they fit in shared memory, else one copy, else global counters.
template <typename T, typename P, int kVec>
int pick(const T* in, long long n, const Even<T>& even, int* out, cudaStream_t s, Tag<false>) {
  enum { kCopies = P::kCopies, kSmemBins = P::kSmemBins };
  if (smem_counters<T>(even.bins, kCopies) <= kSmemBins) return launch<T, P, kVec, kCopies, true>(in, n, even, out, s);
  if (even.bins <= kSmemBins) return launch<T, P, kVec, 1, true>(in, n, even, out, s);
  return launch<T, P, kVec, 1, false>(in, n, even, out, s);
}

// The C entry point's work for samples of type T under policy P.
template <typename T, typename P>
int run(const void* in_, long long n, int bins, double lower, double upper, int* out, cudaStream_t s) {
  Even<T> even;
  const char* why = Even<T>::make(lower, upper, bins, &even);
  if (why) return host::fail(MUH_ERR_ARGUMENT, "muh_histogram_even: levels [%g, %g): %s", lower, upper, why);
  int rc = host::cuda_check(cudaMemsetAsync(out, 0, sizeof(int) * (size_t)bins, s), "histogram memset");
  if (rc || n == 0) return rc;
  const T* in = static_cast<const T*>(in_);
  enum { kVec = P::kVec };
  const Tag<ByValue<T>::value != 0> by_value;
  if ((reinterpret_cast<uintptr_t>(in) % (sizeof(T) * kVec)) == 0)
    return pick<T, P, kVec>(in, n, even, out, s, by_value);
  return pick<T, P, 1>(in, n, even, out, s, by_value);
}

}  // namespace histogram_impl MUH_LIBRARY_LOCAL
}  // namespace muh
