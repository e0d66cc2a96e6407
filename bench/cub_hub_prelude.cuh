// bench/cub_hub.py's shared helpers: checked CUDA calls, a temporary-storage pool, host-side random
// inputs, device-event timing (median of repeats, each several calls), one JSON line per result.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                          \
  do {                                                                                                 \
    cudaError_t e_ = (x);                                                                              \
    if (e_ != cudaSuccess) {                                                                           \
      printf("{\"status\": \"cuda_error\", \"what\": \"%s\", \"line\": %d}\n", cudaGetErrorString(e_), __LINE__); \
      exit(1);                                                                                         \
    }                                                                                                  \
  } while (0)

namespace bench {
struct Temp {
  void* p = nullptr;
  size_t n = 0;
  void* get(size_t b) {
    if (b > n) {
      if (p) CK(cudaFree(p));
      n = b < 256 ? 256 : b;
      CK(cudaMalloc(&p, n));
    }
    return p;
  }
};
static Temp g_temp;

template <class T>
T* to_device(const std::vector<T>& h) {
  T* d = nullptr;
  CK(cudaMalloc(&d, h.size() * sizeof(T) + 16));
  CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <class T>
std::vector<T> to_host(const T* d, size_t n) {
  std::vector<T> h(n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
template <class T>
T* empty(size_t n, int poison = 0x7b) {
  T* d = nullptr;
  CK(cudaMalloc(&d, n * sizeof(T) + 16));
  CK(cudaMemset(d, poison, n * sizeof(T) + 16));
  return d;
}
static std::vector<int> ints(size_t n, int lo, int hi, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int> v(n);
  for (auto& x : v) x = d(g);
  return v;
}
static std::vector<float> floats(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}
// Run f() (one call, returns cudaError_t via CK inside) `calls` times between two events; median ms per call.
template <class F>
double median_us(F f, long long bytes_per_call, int reps = 15) {
  int calls = (int)std::max<long long>(1, std::min<long long>(50, (256ll << 20) / std::max<long long>(1, bytes_per_call)));
  for (int i = 0; i < 3; ++i) f();
  CK(cudaDeviceSynchronize());
  std::vector<double> t;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a));
    for (int c = 0; c < calls; ++c) f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(1000.0 * ms / calls);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
static int g_failed = 0;
static void verdict(const char* program, const std::string& what, long long n, bool ok, const std::string& why = "") {
  if (!ok) ++g_failed;
  printf("{\"program\": \"%s\", \"case\": \"%s\", \"n\": %lld, \"status\": \"%s\"%s%s%s}\n", program, what.c_str(), n,
         ok ? "same as CUB" : "DIFFERS", why.empty() ? "" : ", \"why\": \"", why.c_str(), why.empty() ? "" : "\"");
  fflush(stdout);
}
template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b, std::string& why) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) {
      why = "first difference at " + std::to_string(i);
      return false;
    }
  return true;
}
}  // namespace bench

// Call f(temp, bytes) twice, as CUB's entry points want: size the temporary storage, then run.
template <class F>
void call(F f) {
  size_t b = 0;
  CK(f(nullptr, b));
  void* t = bench::g_temp.get(b);
  CK(f(t, b));
}

struct LessThan {
  int v;
  __host__ __device__ bool operator()(int x) const { return x < v; }
};
struct AddOne {
  __device__ void operator()(int& x) const { x += 1; }
};
struct Twice {
  __host__ __device__ float operator()(float x) const { return 2.f * x; }
};
