// bench/cub_selectors.py's programs: CUB 3.5's public entries on muh's CCCL 3.5 policy selectors against the same
// entries on CUB's own selector. The including file says which families its tree has (MUH_SEL_<FAMILY>) and whether
// the tree's values are CUB's (exact comparisons) or muh's own (MUH_SEL_RACE: float sums within 1e-5, and a race).
// Race rows time the same environment path twice: with muh's selector in the tuning environment and without one
// (CUB's own selector), so both pay the same temporary-storage allocation and only the policy differs.
#include <cuda/std/execution>
#include <cuda/stream_ref>

using namespace bench;

static void race_row(const std::string& what, long long n, double cub_us, double muh_us, long long bytes) {
  printf("{\"program\": \"%s\", \"race\": \"%s\", \"n\": %lld, \"cub_us\": %.3f, \"muh_selector_us\": %.3f, "
         "\"cub_over_muh\": %.4f, \"muh_gbs\": %.1f}\n",
         MUH_SEL_PROGRAM, what.c_str(), n, cub_us, muh_us, cub_us / muh_us, bytes / muh_us / 1e3);
  fflush(stdout);
}

static bool close_float(float a, float b, std::string& why) {
#if defined(MUH_SEL_RACE)
  const bool ok = std::fabs(a - b) <= 1e-5f * std::max(1.f, std::fabs(a));  // another policy: another order
#else
  const bool ok = a == b;  // CUB's own values: the same order, the same bits
#endif
  why = std::to_string(a) + " vs " + std::to_string(b);
  return ok;
}

// CUB's own selector through the same environment path the muh entries take (no tuning in the environment).
static auto plain_env(cudaStream_t s = nullptr) { return ::cuda::std::execution::env{::cuda::stream_ref{s}}; }

struct twice_plus_one {
  __device__ void operator()(int& x) const { x = 2 * x + 1; }
};

int main() {
  std::string why;
  const char* P = MUH_SEL_PROGRAM;
  const cudaStream_t s0 = nullptr;
  (void)s0;
#if defined(MUH_SEL_REDUCE)
  for (long long n : {1ll, 1000ll, 1ll << 16, 1ll << 20, 1ll << 24, 1ll << 26}) {
    auto hi = ints(n, -100, 100, 1);
    int* din = to_device(hi);
    int *a = empty<int>(1), *b = empty<int>(1);
    call([&](void* t, size_t& s) { return cub::DeviceReduce::Sum(t, s, din, a, n); });
    CK(muh::cub::tune::reduce_sum(din, b, n, s0));
    verdict(P, "reduce sum int32", n, same(to_host(a, 1), to_host(b, 1), why), why);
    auto hf = floats(n, 2);
    float* fin = to_device(hf);
    float *fa = empty<float>(1), *fb = empty<float>(1);
    call([&](void* t, size_t& s) { return cub::DeviceReduce::Sum(t, s, fin, fa, n); });
    CK(muh::cub::tune::reduce::sum(fin, fb, n));
    verdict(P, "reduce sum float32", n, close_float(to_host(fa, 1)[0], to_host(fb, 1)[0], why), why);
#  if defined(MUH_SEL_RACE)
    if (n >= (1ll << 20)) {
      const double c = median_us([&] { CK(cub::DeviceReduce::Sum(fin, fa, n, plain_env())); }, n * 4);
      const double m = median_us([&] { CK(muh::cub::tune::reduce_sum(fin, fb, n, s0)); }, n * 4);
      race_row("reduce sum float32", n, c, m, n * 4);
    }
#  endif
    cudaFree(din); cudaFree(a); cudaFree(b); cudaFree(fin); cudaFree(fa); cudaFree(fb);
  }
#endif
#if defined(MUH_SEL_HISTOGRAM)
  for (long long n : {1000ll, 1ll << 16, 1ll << 20, 1ll << 24}) {
    std::vector<unsigned char> h8(n);
    auto r = ints(n, 0, 255, 5);
    for (long long i = 0; i < n; ++i) h8[i] = (unsigned char)r[i];
    unsigned char* d8 = to_device(h8);
    int *ha = empty<int>(256), *hb = empty<int>(256);
    call([&](void* t, size_t& s) { return cub::DeviceHistogram::HistogramEven(t, s, d8, ha, 257, 0, 256, n); });
    call([&](void* t, size_t& s) { return muh::cub::tune::histogram_even(t, s, d8, hb, 257, 0, 256, n, s0); });
    verdict(P, "histogram even uint8 256 bins", n, same(to_host(ha, 256), to_host(hb, 256), why), why);
    auto hf = floats(n, 6);
    float* df = to_device(hf);
    call([&](void* t, size_t& s) { return cub::DeviceHistogram::HistogramEven(t, s, df, ha, 65, -1.f, 1.f, n); });
    call([&](void* t, size_t& s) { return muh::cub::tune::histogram::even(t, s, df, hb, 65, -1.f, 1.f, n, s0); });
    verdict(P, "histogram even float32 64 bins", n, same(to_host(ha, 64), to_host(hb, 64), why), why);
#  if defined(MUH_SEL_RACE)
    if (n >= (1ll << 20)) {
      size_t bytes = 0;
      CK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, df, ha, 65, -1.f, 1.f, n));
      void* t = g_temp.get(bytes);
      const double c = median_us(
        [&] { CK(cub::DeviceHistogram::HistogramEven(t, bytes, df, ha, 65, -1.f, 1.f, n, plain_env())); }, n * 4);
      size_t mb = 0;
      CK(muh::cub::tune::histogram::even(nullptr, mb, df, hb, 65, -1.f, 1.f, n, s0));
      void* mt = nullptr;
      CK(cudaMalloc(&mt, mb + 1));
      const double m = median_us([&] { CK(muh::cub::tune::histogram::even(mt, mb, df, hb, 65, -1.f, 1.f, n, s0)); },
                                 n * 4);
      race_row("histogram even float32 64 bins", n, c, m, n * 4);
      cudaFree(mt);
    }
#  endif
    cudaFree(d8); cudaFree(df); cudaFree(ha); cudaFree(hb);
  }
#endif
#if defined(MUH_SEL_FOR_EACH)
  for (long long n : {1ll, 1000ll, 1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -1000, 1000, 7);
    int *a = to_device(hi), *b = to_device(hi);
    CK(cub::DeviceFor::ForEachN(a, n, twice_plus_one{}));
    CK(muh::cub::tune::for_each_n(b, n, twice_plus_one{}, s0));
    verdict(P, "for_each_n int32 x = 2x + 1", n, same(to_host(a, n), to_host(b, n), why), why);
    cudaFree(a); cudaFree(b);
  }
#endif
  printf("{\"program\": \"%s\", \"failed\": %d}\n", P, g_failed);
  return g_failed;
}
