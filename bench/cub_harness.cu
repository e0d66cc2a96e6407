// The CUB side of bench/kernels.py: CUB 3.0.x device algorithms behind a C interface (ctypes).
// Temporary storage is kept between calls so timed calls never allocate (the first call sizes it).
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda_fp16.h>

namespace {
void* g_temp = nullptr;
size_t g_temp_bytes = 0;

cudaError_t ensure(size_t bytes) {
  if (bytes <= g_temp_bytes) return cudaSuccess;
  if (g_temp) cudaFree(g_temp);
  g_temp_bytes = bytes < 256 ? 256 : bytes;
  return cudaMalloc(&g_temp, g_temp_bytes);
}

template <typename T> int reduce_sum(const void* in, void* out, long long n, cudaStream_t s) {
  size_t bytes = 0;
  cub::DeviceReduce::Sum(nullptr, bytes, (const T*)in, (T*)out, (int)n, s);
  if (ensure(bytes)) return 1;
  return (int)cub::DeviceReduce::Sum(g_temp, bytes, (const T*)in, (T*)out, (int)n, s);
}
template <typename T> int reduce_max(const void* in, void* out, long long n, cudaStream_t s) {
  size_t bytes = 0;
  cub::DeviceReduce::Max(nullptr, bytes, (const T*)in, (T*)out, (int)n, s);
  if (ensure(bytes)) return 1;
  return (int)cub::DeviceReduce::Max(g_temp, bytes, (const T*)in, (T*)out, (int)n, s);
}
template <typename T> int scan_incl(const void* in, void* out, long long n, cudaStream_t s) {
  size_t bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, bytes, (const T*)in, (T*)out, (int)n, s);
  if (ensure(bytes)) return 1;
  return (int)cub::DeviceScan::InclusiveSum(g_temp, bytes, (const T*)in, (T*)out, (int)n, s);
}
template <typename T> int scan_excl(const void* in, void* out, long long n, cudaStream_t s) {
  size_t bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, bytes, (const T*)in, (T*)out, (int)n, s);
  if (ensure(bytes)) return 1;
  return (int)cub::DeviceScan::ExclusiveSum(g_temp, bytes, (const T*)in, (T*)out, (int)n, s);
}
struct ScaleF {
  float a;
  __device__ float operator()(float x) const { return a * x; }
};
struct ScaleH {
  float a;
  __device__ __half operator()(__half x) const { return __float2half_rn(a * __half2float(x)); }
};
}  // namespace

// dtype codes as in muh's api.h: 0 f32, 1 f64, 4 i32, 5 i64
extern "C" int cub_reduce(int op, int dtype, const void* in, void* out, long long n, void* stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (op == 0) {
    switch (dtype) {
      case 0: return reduce_sum<float>(in, out, n, s);
      case 1: return reduce_sum<double>(in, out, n, s);
      case 4: return reduce_sum<int>(in, out, n, s);
      case 5: return reduce_sum<long long>(in, out, n, s);
    }
  } else if (op == 1) {
    switch (dtype) {
      case 0: return reduce_max<float>(in, out, n, s);
      case 1: return reduce_max<double>(in, out, n, s);
    }
  }
  return 99;
}

extern "C" int cub_scan(int exclusive, int dtype, const void* in, void* out, long long n, void* stream) {
  cudaStream_t s = (cudaStream_t)stream;
  switch (dtype) {
    case 0: return exclusive ? scan_excl<float>(in, out, n, s) : scan_incl<float>(in, out, n, s);
    case 1: return exclusive ? scan_excl<double>(in, out, n, s) : scan_incl<double>(in, out, n, s);
    case 4: return exclusive ? scan_excl<int>(in, out, n, s) : scan_incl<int>(in, out, n, s);
    case 5: return exclusive ? scan_excl<long long>(in, out, n, s) : scan_incl<long long>(in, out, n, s);
  }
  return 99;
}

extern "C" int cub_transform_scale(int dtype, const void* in, void* out, long long n, float alpha, void* stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (dtype == 0)
    return (int)cub::DeviceTransform::Transform((const float*)in, (float*)out, (int)n, ScaleF{alpha}, s);
  if (dtype == 2)
    return (int)cub::DeviceTransform::Transform((const __half*)in, (__half*)out, (int)n, ScaleH{alpha}, s);
  return 99;
}

// DeviceHistogram::HistogramEven, one channel, int counters: dtype is muh's code (muh/runtime/dtypes.py).
template <typename T, typename L>
int histogram_even(const void* in, int* hist, long long n, int bins, L lower, L upper, cudaStream_t s) {
  size_t bytes = 0;
  cub::DeviceHistogram::HistogramEven(nullptr, bytes, (const T*)in, hist, bins + 1, lower, upper, (int)n, s);
  if (ensure(bytes)) return 1;
  return (int)cub::DeviceHistogram::HistogramEven(g_temp, bytes, (const T*)in, hist, bins + 1, lower, upper, (int)n, s);
}

extern "C" int cub_histogram_even(int dtype, const void* in, long long n, int bins, double lower, double upper,
                                  int* hist, void* stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (dtype == 0) return histogram_even<float, float>(in, hist, n, bins, (float)lower, (float)upper, s);
  if (dtype == 7) return histogram_even<unsigned char, int>(in, hist, n, bins, (int)lower, (int)upper, s);
  if (dtype == 4) return histogram_even<int, int>(in, hist, n, bins, (int)lower, (int)upper, s);
  return 99;
}

// ---- CUB with muh's hub: the same calls through the hubs generated from specs/h200.muh (include path
// generated/h200/include; bench/kernels.py's column "CUB with muh's hub"). float32 and the histogram's codes.
#if __has_include("muh/cub/reduce.cuh") && __has_include("muh/cub/histogram.cuh")
#include "muh/cub/histogram.cuh"
#include "muh/cub/reduce.cuh"
#include "muh/cub/scan.cuh"
#include "muh/cub/transform.cuh"

extern "C" int hub_reduce(int op, int dtype, const void* in, void* out, long long n, void* stream) {
  if (op != 0 || dtype != 0) return 99;
  size_t bytes = 0;
  muh::cub::reduce_sum(nullptr, bytes, (const float*)in, (float*)out, (int)n, (cudaStream_t)stream);
  if (ensure(bytes)) return 1;
  return (int)muh::cub::reduce_sum(g_temp, bytes, (const float*)in, (float*)out, (int)n, (cudaStream_t)stream);
}

extern "C" int hub_scan(int exclusive, int dtype, const void* in, void* out, long long n, void* stream) {
  if (exclusive || dtype != 0) return 99;
  size_t bytes = 0;
  muh::cub::inclusive_sum(nullptr, bytes, (const float*)in, (float*)out, (int)n, (cudaStream_t)stream);
  if (ensure(bytes)) return 1;
  return (int)muh::cub::inclusive_sum(g_temp, bytes, (const float*)in, (float*)out, (int)n, (cudaStream_t)stream);
}

extern "C" int hub_transform_scale(int dtype, const void* in, void* out, long long n, float alpha, void* stream) {
  if (dtype != 0) return 99;
  return (int)muh::cub::transform::run((const float*)in, (float*)out, (int)n, ScaleF{alpha}, (cudaStream_t)stream);
}

template <typename T, typename L>
int hub_histogram(const void* in, int* hist, long long n, int bins, L lower, L upper, cudaStream_t s) {
  size_t bytes = 0;
  muh::cub::histogram::run(nullptr, bytes, (const T*)in, hist, bins + 1, lower, upper, (int)n, s);
  if (ensure(bytes)) return 1;
  return (int)muh::cub::histogram::run(g_temp, bytes, (const T*)in, hist, bins + 1, lower, upper, (int)n, s);
}

extern "C" int hub_histogram_even(int dtype, const void* in, long long n, int bins, double lower, double upper,
                                  int* hist, void* stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (dtype == 0) return hub_histogram<float, float>(in, hist, n, bins, (float)lower, (float)upper, s);
  if (dtype == 7) return hub_histogram<unsigned char, int>(in, hist, n, bins, (int)lower, (int)upper, s);
  if (dtype == 4) return hub_histogram<int, int>(in, hist, n, bins, (int)lower, (int)upper, s);
  return 99;
}
#endif
