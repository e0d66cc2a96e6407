// The CUB side of bench/radix_sort.py: cub::DeviceRadixSort::SortKeys / SortPairs (CUB 3.0.x of the toolkit)
// behind a C interface (ctypes). Temporary storage is kept between calls so timed calls never allocate.
#include <cub/device/device_radix_sort.cuh>

namespace {
void* g_temp = nullptr;
size_t g_temp_bytes = 0;

cudaError_t ensure(size_t bytes) {
  if (bytes <= g_temp_bytes) return cudaSuccess;
  if (g_temp) cudaFree(g_temp);
  g_temp_bytes = bytes < 256 ? 256 : bytes;
  return cudaMalloc(&g_temp, g_temp_bytes);
}

template <typename K, typename V>
int sort(const void* ki, void* ko, const void* vi, void* vo, long long n, cudaStream_t s) {
  size_t bytes = 0;
  if (vi) {
    cub::DeviceRadixSort::SortPairs(nullptr, bytes, (const K*)ki, (K*)ko, (const V*)vi, (V*)vo, (int)n, 0,
                                    8 * (int)sizeof(K), s);
    if (ensure(bytes)) return 1;
    return (int)cub::DeviceRadixSort::SortPairs(g_temp, bytes, (const K*)ki, (K*)ko, (const V*)vi, (V*)vo, (int)n, 0,
                                                8 * (int)sizeof(K), s);
  }
  cub::DeviceRadixSort::SortKeys(nullptr, bytes, (const K*)ki, (K*)ko, (int)n, 0, 8 * (int)sizeof(K), s);
  if (ensure(bytes)) return 1;
  return (int)cub::DeviceRadixSort::SortKeys(g_temp, bytes, (const K*)ki, (K*)ko, (int)n, 0, 8 * (int)sizeof(K), s);
}
}  // namespace

// key_bytes 4 or 8 (unsigned keys); values (if given) are 4-byte.
extern "C" int cub_radix_sort(int key_bytes, const void* ki, void* ko, const void* vi, void* vo, long long n,
                              void* stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (key_bytes == 4) return sort<unsigned, unsigned>(ki, ko, vi, vo, n, s);
  if (key_bytes == 8) return sort<unsigned long long, unsigned>(ki, ko, vi, vo, n, s);
  return 2;
}
