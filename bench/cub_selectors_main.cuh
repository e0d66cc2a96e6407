// bench/cub_selectors.py's programs: CUB 3.5's public entries on muh's CCCL 3.5 policy selectors against the same
// entries on CUB's own selector. The including file says which families its tree has (MUH_SEL_<FAMILY>) and whether
// the tree's values are CUB's (exact comparisons) or muh's own (MUH_SEL_RACE: float sums within 1e-5, and a race).
// Race rows time the same environment path twice: with muh's selector in the tuning environment and without one
// (CUB's own selector), so both pay the same temporary-storage allocation and only the policy differs.
#include <cuda/std/execution>
#include <cuda/stream_ref>

using namespace bench;

// Time CUB's side and muh's side alternately, kRounds rounds of median_us each, and print the median round of
// each: a side measured first or later in the process (allocator pools, clocks) gets no edge.
template <class C, class M>
static void race(const std::string& what, long long n, long long bytes, C cub_call, M muh_call) {
  constexpr int kRounds = 5;
  std::vector<double> c, m;
  for (int r = 0; r < kRounds; ++r) {
    if (r % 2 == 0) {
      c.push_back(median_us(cub_call, bytes));
      m.push_back(median_us(muh_call, bytes));
    } else {
      m.push_back(median_us(muh_call, bytes));
      c.push_back(median_us(cub_call, bytes));
    }
  }
  std::sort(c.begin(), c.end());
  std::sort(m.begin(), m.end());
  const double cub_us = c[kRounds / 2], muh_us = m[kRounds / 2];
  printf(
      "{\"program\": \"%s\", \"race\": \"%s\", \"n\": %lld, \"cub_us\": %.3f, \"muh_selector_us\": %.3f, "
      "\"cub_over_muh\": %.4f, \"muh_gbs\": %.1f, \"rounds\": %d}\n",
      MUH_SEL_PROGRAM, what.c_str(), n, cub_us, muh_us, cub_us / muh_us, bytes / muh_us / 1e3, kRounds);
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

struct is_odd {
  __host__ __device__ bool operator()(int x) const { return x & 1; }
};
struct is_small {
  __host__ __device__ bool operator()(int x) const { return x < -500; }
};
struct times_three {
  __device__ int operator()(int x) const { return 3 * x; }
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
#if defined(MUH_SEL_RACE)
    if (n >= (1ll << 20)) {
      race(
          "reduce sum float32", n, n * 4, [&] { CK(cub::DeviceReduce::Sum(fin, fa, n, plain_env())); },
          [&] { CK(muh::cub::tune::reduce_sum(fin, fb, n, s0)); });
    }
#endif
    cudaFree(din);
    cudaFree(a);
    cudaFree(b);
    cudaFree(fin);
    cudaFree(fa);
    cudaFree(fb);
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
#if defined(MUH_SEL_RACE)
    if (n >= (1ll << 20)) {
      size_t bytes = 0;
      CK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, df, ha, 65, -1.f, 1.f, n));
      void* t = g_temp.get(bytes);
      size_t mb = 0;
      CK(muh::cub::tune::histogram::even(nullptr, mb, df, hb, 65, -1.f, 1.f, n, s0));
      void* mt = nullptr;
      CK(cudaMalloc(&mt, mb + 1));
      race(
          "histogram even float32 64 bins", n, n * 4,
          [&] { CK(cub::DeviceHistogram::HistogramEven(t, bytes, df, ha, 65, -1.f, 1.f, n, plain_env())); },
          [&] { CK(muh::cub::tune::histogram::even(mt, mb, df, hb, 65, -1.f, 1.f, n, s0)); });
      cudaFree(mt);
    }
#endif
    cudaFree(d8);
    cudaFree(df);
    cudaFree(ha);
    cudaFree(hb);
  }
#endif
#if defined(MUH_SEL_FOR_EACH)
  for (long long n : {1ll, 1000ll, 1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -1000, 1000, 7);
    int *a = to_device(hi), *b = to_device(hi);
    CK(cub::DeviceFor::ForEachN(a, n, twice_plus_one{}));
    CK(muh::cub::tune::for_each_n(b, n, twice_plus_one{}, s0));
    verdict(P, "for_each_n int32 x = 2x + 1", n, same(to_host(a, n), to_host(b, n), why), why);
    cudaFree(a);
    cudaFree(b);
  }
#endif
#if defined(MUH_SEL_RADIX_SORT)
  for (long long n : {1000ll, 1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -(1 << 30), 1 << 30, 11);
    std::vector<unsigned> hu(hi.begin(), hi.end());
    unsigned* du = to_device(hu);
    unsigned *a = empty<unsigned>(n), *b = empty<unsigned>(n);
    call([&](void* t, size_t& s) { return cub::DeviceRadixSort::SortKeys(t, s, du, a, n); });
    CK(muh::cub::tune::radix_sort_keys(du, b, n, 0, 32, s0));
    verdict(P, "radix_sort keys uint32", n, same(to_host(a, n), to_host(b, n), why), why);
    auto hf = floats(n, 12);
    float* df = to_device(hf);
    float *fa = empty<float>(n), *fb = empty<float>(n);
    call([&](void* t, size_t& s) { return cub::DeviceRadixSort::SortKeys(t, s, df, fa, n); });
    CK(muh::cub::tune::radix_sort::sort_keys(df, fb, n, 0, 32, s0));
    verdict(P, "radix_sort keys float32", n, same(to_host(fa, n), to_host(fb, n), why), why);
#if defined(MUH_SEL_RACE)
    if (n >= (1ll << 20)) {
      race(
          "radix_sort keys uint32", n, n * 8, [&] { CK(cub::DeviceRadixSort::SortKeys(du, a, n, 0, 32, plain_env())); },
          [&] { CK(muh::cub::tune::radix_sort_keys(du, b, n, 0, 32, s0)); });
    }
#endif
    cudaFree(du);
    cudaFree(a);
    cudaFree(b);
    cudaFree(df);
    cudaFree(fa);
    cudaFree(fb);
  }
#endif
#if defined(MUH_SEL_RADIX_SORT_PAIRS)
  for (long long n : {1000ll, 1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hk = ints(n, 0, 1000, 13);  // many equal keys: the values' order shows stability
    std::vector<int> hv(n);
    for (long long i = 0; i < n; ++i) hv[i] = (int)i;
    int *dk = to_device(hk), *dv = to_device(hv);
    int *ka = empty<int>(n), *kb = empty<int>(n), *va = empty<int>(n), *vb = empty<int>(n);
    call([&](void* t, size_t& s) { return cub::DeviceRadixSort::SortPairs(t, s, dk, ka, dv, va, n); });
    CK(muh::cub::tune::radix_sort_by_key(dk, kb, dv, vb, n, 0, 32, s0));
    const bool ok = same(to_host(ka, n), to_host(kb, n), why) && same(to_host(va, n), to_host(vb, n), why);
    verdict(P, "radix_sort_pairs int32 keys int32 values", n, ok, why);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(ka);
    cudaFree(kb);
    cudaFree(va);
    cudaFree(vb);
  }
#endif
#if defined(MUH_SEL_SEGMENTED_SORT) || defined(MUH_SEL_SEGMENTED_RADIX_SORT)
  for (long long n : {1000ll, 1ll << 16, 1ll << 20}) {
    // segments of 0 .. 2999 elements (small, medium and large ones), the offsets as CUB's entries take them
    std::vector<int> off{0};
    auto sizes = ints(n, 0, 2999, 14);
    for (long long i = 0; off.back() < n; ++i) off.push_back((int)std::min<long long>(n, off.back() + sizes[i]));
    const long long segs = (long long)off.size() - 1;
    int* doff = to_device(off);
    auto hk = ints(n, -(1 << 20), 1 << 20, 15);
    int* dk = to_device(hk);
    int *a = empty<int>(n), *b = empty<int>(n);
#if defined(MUH_SEL_SEGMENTED_SORT)
    call([&](void* t, size_t& s) { return cub::DeviceSegmentedSort::SortKeys(t, s, dk, a, n, segs, doff, doff + 1); });
    CK(muh::cub::tune::segmented_sort_keys(dk, b, n, segs, doff, doff + 1, s0));
    verdict(P, "segmented_sort keys int32 (segments of 0-2999)", n, same(to_host(a, n), to_host(b, n), why), why);
#endif
#if defined(MUH_SEL_SEGMENTED_RADIX_SORT)
    call([&](void* t, size_t& s) {
      return cub::DeviceSegmentedRadixSort::SortKeys(t, s, dk, a, n, segs, doff, doff + 1);
    });
    CK(muh::cub::tune::segmented_radix_sort_keys(dk, b, n, segs, doff, doff + 1, 0, 32, s0));
    verdict(P, "segmented_radix_sort keys int32 (segments of 0-2999)", n, same(to_host(a, n), to_host(b, n), why), why);
#endif
    cudaFree(doff);
    cudaFree(dk);
    cudaFree(a);
    cudaFree(b);
  }
#endif
#if defined(MUH_SEL_MERGE_SORT) || defined(MUH_SEL_MERGE)
  for (long long n : {1000ll, 1ll << 16, 1ll << 20}) {
    auto hk = ints(n, -(1 << 20), 1 << 20, 16);
#if defined(MUH_SEL_MERGE_SORT)
    int *a = to_device(hk), *b = to_device(hk);
    call([&](void* t, size_t& s) { return cub::DeviceMergeSort::SortKeys(t, s, a, n, ::cuda::std::less<>{}); });
    CK(muh::cub::tune::merge_sort_keys(b, n, ::cuda::std::less<>{}, s0));
    verdict(P, "merge_sort keys int32", n, same(to_host(a, n), to_host(b, n), why), why);
    cudaFree(a);
    cudaFree(b);
#endif
#if defined(MUH_SEL_MERGE)
    std::vector<int> h1(hk.begin(), hk.begin() + n / 2), h2(hk.begin() + n / 2, hk.end());
    std::sort(h1.begin(), h1.end());
    std::sort(h2.begin(), h2.end());
    int *d1 = to_device(h1), *d2 = to_device(h2), *ma = empty<int>(n), *mb = empty<int>(n);
    const long long n1 = (long long)h1.size(), n2 = (long long)h2.size();
    call([&](void* t, size_t& s) {
      return cub::DeviceMerge::MergeKeys(t, s, d1, n1, d2, n2, ma, ::cuda::std::less<>{});
    });
    CK(muh::cub::tune::merge_keys(d1, n1, d2, n2, mb, ::cuda::std::less<>{}, s0));
    verdict(P, "merge keys int32", n, same(to_host(ma, n), to_host(mb, n), why), why);
    cudaFree(d1);
    cudaFree(d2);
    cudaFree(ma);
    cudaFree(mb);
#endif
  }
#endif
#if defined(MUH_SEL_TRANSFORM)
  for (long long n : {1ll, 1000ll, 1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -1000, 1000, 21);
    int *din = to_device(hi), *a = empty<int>(n), *b = empty<int>(n);
    CK(cub::DeviceTransform::Transform(din, a, n, times_three{}));
    CK(muh::cub::tune::transform_unary(din, b, n, times_three{}, s0));
    verdict(P, "transform int32 x = 3x", n, same(to_host(a, n), to_host(b, n), why), why);
#if defined(MUH_SEL_RACE)
    if (n >= (1ll << 20)) {
      race(
          "transform int32 x = 3x", n, n * 8,
          [&] { CK(cub::DeviceTransform::Transform(din, a, n, times_three{}, plain_env())); },
          [&] { CK(muh::cub::tune::transform_unary(din, b, n, times_three{}, s0)); });
    }
#endif
    cudaFree(din);
    cudaFree(a);
    cudaFree(b);
  }
#endif
#if defined(MUH_SEL_SEGMENTED_REDUCE)
  for (long long n : {1000ll, 1ll << 16, 1ll << 20, 1ll << 24}) {
    const long long segs = (n + 999) / 1000;  // segments of 1000, the last shorter
    std::vector<int> off(segs + 1);
    for (long long i = 0; i <= segs; ++i) off[i] = (int)std::min(n, i * 1000);
    int* doff = to_device(off);
    auto hi = ints(n, -100, 100, 22);
    int *din = to_device(hi), *a = empty<int>(segs), *b = empty<int>(segs);
    call([&](void* t, size_t& s) { return cub::DeviceSegmentedReduce::Sum(t, s, din, a, segs, doff, doff + 1); });
    CK(muh::cub::tune::segmented_reduce_sum(din, b, segs, doff, doff + 1, s0));
    verdict(P, "segmented_reduce sum int32 (segments of 1000)", n, same(to_host(a, segs), to_host(b, segs), why), why);
    cudaFree(doff);
    cudaFree(din);
    cudaFree(a);
    cudaFree(b);
  }
#if defined(MUH_SEL_RACE)
  {  // the logits rows: 64 x 151936 float32
    const long long rows = 64, cols = 151936, n = rows * cols;
    std::vector<int> off(rows + 1);
    for (long long i = 0; i <= rows; ++i) off[i] = (int)(i * cols);
    int* doff = to_device(off);
    auto hf = floats(n, 23);
    float *df = to_device(hf), *a = empty<float>(rows), *b = empty<float>(rows);
    size_t bytes = 0;
    CK(cub::DeviceSegmentedReduce::Sum(nullptr, bytes, df, a, rows, doff, doff + 1));
    void* t = g_temp.get(bytes);
    CK(cub::DeviceSegmentedReduce::Sum(t, bytes, df, a, rows, doff, doff + 1));
    CK(muh::cub::tune::segmented_reduce_sum(df, b, rows, doff, doff + 1, s0));
    auto ha = to_host(a, rows), hb = to_host(b, rows);
    bool ok = true;
    for (long long r = 0; r < rows && ok; ++r) ok = close_float(ha[r], hb[r], why);
    verdict(P, "segmented_reduce sum float32 (64 rows of 151936)", n, ok, why);
    race(
        "segmented_reduce sum float32 (64 rows of 151936)", n, n * 4,
        [&] { CK(cub::DeviceSegmentedReduce::Sum(df, a, rows, doff, doff + 1, plain_env())); },
        [&] { CK(muh::cub::tune::segmented_reduce_sum(df, b, rows, doff, doff + 1, s0)); });
    cudaFree(doff);
    cudaFree(df);
    cudaFree(a);
    cudaFree(b);
  }
#endif
#endif
#if defined(MUH_SEL_ADJACENT_DIFFERENCE)
  for (long long n : {1ll, 1000ll, 1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -1000, 1000, 24);
    int *din = to_device(hi), *a = empty<int>(n), *b = empty<int>(n);
    call([&](void* t, size_t& s) { return cub::DeviceAdjacentDifference::SubtractLeftCopy(t, s, din, a, n); });
    CK(muh::cub::tune::subtract_left_copy(din, b, n, ::cuda::std::minus<>{}, s0));
    verdict(P, "adjacent_difference subtract_left_copy int32", n, same(to_host(a, n), to_host(b, n), why), why);
    cudaFree(din);
    cudaFree(a);
    cudaFree(b);
  }
#endif
#if defined(MUH_SEL_BATCH_MEMCPY)
  for (long long n : {1000ll, 1ll << 16, 1ll << 20}) {  // n buffers of 1 .. 128 bytes
    auto sz = ints(n, 1, 128, 25);
    std::vector<long long> at(n + 1, 0);
    for (long long i = 0; i < n; ++i) at[i + 1] = at[i] + sz[i];
    const long long total = at[n];
    std::vector<unsigned char> src(total);
    for (long long i = 0; i < total; ++i) src[i] = (unsigned char)(i * 131 + 7);
    unsigned char *dsrc = to_device(src), *a = empty<unsigned char>(total), *b = empty<unsigned char>(total);
    std::vector<void*> hin(n), ha(n), hb(n);
    std::vector<unsigned> hs(n);
    for (long long i = 0; i < n; ++i) {
      hin[i] = dsrc + at[i];
      ha[i] = a + at[i];
      hb[i] = b + at[i];
      hs[i] = (unsigned)sz[i];
    }
    void **din = to_device(hin), **da = to_device(ha), **db = to_device(hb);
    unsigned* ds = to_device(hs);
    call([&](void* t, size_t& s) { return cub::DeviceMemcpy::Batched(t, s, din, da, ds, n); });
    CK(muh::cub::tune::memcpy_batched(din, db, ds, n, s0));
    verdict(P, "batch_memcpy buffers of 1-128 bytes", n, same(to_host(a, total), to_host(b, total), why), why);
    cudaFree(dsrc);
    cudaFree(a);
    cudaFree(b);
    cudaFree(din);
    cudaFree(da);
    cudaFree(db);
    cudaFree(ds);
  }
#endif
#if defined(MUH_SEL_SCAN)
  for (long long n : {1ll, 1000ll, 1ll << 16, 1ll << 20, 1ll << 24, 1ll << 26}) {
    auto hi = ints(n, -100, 100, 31);
    int *din = to_device(hi), *a = empty<int>(n), *b = empty<int>(n);
    call([&](void* t, size_t& s) { return cub::DeviceScan::InclusiveSum(t, s, din, a, n); });
    CK(muh::cub::tune::inclusive_sum(din, b, n, s0));
    verdict(P, "scan inclusive_sum int32", n, same(to_host(a, n), to_host(b, n), why), why);
#if defined(MUH_SEL_RACE)
    if (n >= (1ll << 20)) {
      race(
          "scan inclusive_sum int32", n, n * 8, [&] { CK(cub::DeviceScan::InclusiveSum(din, a, n, plain_env())); },
          [&] { CK(muh::cub::tune::inclusive_sum(din, b, n, s0)); });
    }
#endif
    cudaFree(din);
    cudaFree(a);
    cudaFree(b);
  }
#endif
#if defined(MUH_SEL_SCAN_BY_KEY) || defined(MUH_SEL_REDUCE_BY_KEY) || defined(MUH_SEL_RLE_ENCODE) || \
    defined(MUH_SEL_RLE_NON_TRIVIAL_RUNS)
  for (long long n : {1000ll, 1ll << 16, 1ll << 20, 1ll << 24}) {
    auto len = ints(n, 1, 9, 32);  // runs of 1 .. 9 equal keys
    std::vector<int> hk(n);
    for (long long i = 0, k = 0, r = 0; i < n; ++i) {
      if (r == len[k]) {
        ++k;
        r = 0;
      }
      hk[i] = (int)(k * 7 % 1000);
      ++r;
    }
    auto hv = ints(n, -100, 100, 33);
    int *dk = to_device(hk), *dv = to_device(hv);
    int *a = empty<int>(n), *b = empty<int>(n), *ua = empty<int>(n), *ub = empty<int>(n);
    int *ra = empty<int>(1), *rb = empty<int>(1);
    std::string w2;
#if defined(MUH_SEL_SCAN_BY_KEY)
    call([&](void* t, size_t& s) { return cub::DeviceScan::InclusiveSumByKey(t, s, dk, dv, a, n); });
    CK(muh::cub::tune::inclusive_sum_by_key(dk, dv, b, n, s0));
    verdict(P, "scan_by_key inclusive_sum int32 (runs of 1-9)", n, same(to_host(a, n), to_host(b, n), why), why);
#endif
#if defined(MUH_SEL_REDUCE_BY_KEY)
    call([&](void* t, size_t& s) {
      return cub::DeviceReduce::ReduceByKey(t, s, dk, ua, dv, a, ra, ::cuda::std::plus<>{}, n);
    });
    CK(muh::cub::tune::reduce_values_by_key(dk, ub, dv, b, rb, ::cuda::std::plus<>{}, n, s0));
    {
      const int runs = to_host(ra, 1)[0];
      const bool ok = runs == to_host(rb, 1)[0] && same(to_host(ua, runs), to_host(ub, runs), why) &&
                      same(to_host(a, runs), to_host(b, runs), why);
      verdict(P, "reduce_by_key sum int32 (runs of 1-9)", n, ok, why);
    }
#endif
#if defined(MUH_SEL_RLE_ENCODE)
    call([&](void* t, size_t& s) { return cub::DeviceRunLengthEncode::Encode(t, s, dk, ua, a, ra, n); });
    CK(muh::cub::tune::run_length_encode(dk, ub, b, rb, n, s0));
    {
      const int runs = to_host(ra, 1)[0];
      const bool ok = runs == to_host(rb, 1)[0] && same(to_host(ua, runs), to_host(ub, runs), why) &&
                      same(to_host(a, runs), to_host(b, runs), why);
      verdict(P, "rle_encode int32 (runs of 1-9)", n, ok, why);
    }
#endif
#if defined(MUH_SEL_RLE_NON_TRIVIAL_RUNS)
    call([&](void* t, size_t& s) { return cub::DeviceRunLengthEncode::NonTrivialRuns(t, s, dk, ua, a, ra, n); });
    CK(muh::cub::tune::non_trivial_runs(dk, ub, b, rb, n, s0));
    {
      const int runs = to_host(ra, 1)[0];
      const bool ok = runs == to_host(rb, 1)[0] && same(to_host(ua, runs), to_host(ub, runs), why) &&
                      same(to_host(a, runs), to_host(b, runs), why);
      verdict(P, "rle_non_trivial_runs int32 (runs of 1-9)", n, ok, why);
    }
#endif
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(a);
    cudaFree(b);
    cudaFree(ua);
    cudaFree(ub);
    cudaFree(ra);
    cudaFree(rb);
  }
#endif
#if defined(MUH_SEL_SELECT_IF) || defined(MUH_SEL_SELECT_FLAGGED) || defined(MUH_SEL_UNIQUE) || \
    defined(MUH_SEL_PARTITION) || defined(MUH_SEL_THREE_WAY_PARTITION) || defined(MUH_SEL_UNIQUE_BY_KEY)
  for (long long n : {1ll, 1000ll, 1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -1000, 1000, 41);
    for (long long i = 1; i < n; i += 3) hi[i] = hi[i - 1];  // runs of equal neighbours for the unique calls
    int *din = to_device(hi), *a = empty<int>(n), *b = empty<int>(n), *a2 = empty<int>(n), *b2 = empty<int>(n);
    int *na = empty<int>(2), *nb = empty<int>(2);
    auto counted = [&](int* x, int* y, int* cx, int* cy, int k, std::string& w) {
      auto hx = to_host(cx, k), hy = to_host(cy, k);
      if (!same(hx, hy, w)) return false;
      long long m = 0;
      for (int j = 0; j < k; ++j) m += hx[j];
      return same(to_host(x, (size_t)std::min(n, m)), to_host(y, (size_t)std::min(n, m)), w);
    };
#if defined(MUH_SEL_SELECT_IF)
    call([&](void* t, size_t& s) { return cub::DeviceSelect::If(t, s, din, a, na, n, is_odd{}); });
    CK(muh::cub::tune::select_if::run(din, b, nb, n, is_odd{}, s0));
    verdict(P, "select_if int32 odd", n, counted(a, b, na, nb, 1, why), why);
#endif
#if defined(MUH_SEL_SELECT_FLAGGED)
    {
      std::vector<char> hf(n);
      for (long long i = 0; i < n; ++i) hf[i] = (char)(hi[i] % 3 == 0);
      char* df = to_device(hf);
      call([&](void* t, size_t& s) { return cub::DeviceSelect::Flagged(t, s, din, df, a, na, n); });
      CK(muh::cub::tune::select_flagged::run(din, df, b, nb, n, s0));
      verdict(P, "select_flagged int32 char flags", n, counted(a, b, na, nb, 1, why), why);
      cudaFree(df);
    }
#endif
#if defined(MUH_SEL_UNIQUE)
    call([&](void* t, size_t& s) { return cub::DeviceSelect::Unique(t, s, din, a, na, n); });
    CK(muh::cub::tune::unique::run(din, b, nb, n, s0));
    verdict(P, "unique int32", n, counted(a, b, na, nb, 1, why), why);
#endif
#if defined(MUH_SEL_PARTITION)
    call([&](void* t, size_t& s) { return cub::DevicePartition::If(t, s, din, a, na, n, is_odd{}); });
    CK(muh::cub::tune::partition::run(din, b, nb, n, is_odd{}, s0));
    verdict(P, "partition int32 odd", n,
            same(to_host(na, 1), to_host(nb, 1), why) && same(to_host(a, n), to_host(b, n), why), why);
#endif
#if defined(MUH_SEL_THREE_WAY_PARTITION)
    {
      int *ua = empty<int>(n), *ub = empty<int>(n);
      call([&](void* t, size_t& s) {
        return cub::DevicePartition::If(t, s, din, a, a2, ua, na, n, is_odd{}, is_small{});
      });
      CK(muh::cub::tune::three_way_partition::run(din, b, b2, ub, nb, n, is_odd{}, is_small{}, s0));
      auto ca = to_host(na, 2);
      const long long rest = n - ca[0] - ca[1];
      const bool ok = same(ca, to_host(nb, 2), why) && same(to_host(a, ca[0]), to_host(b, ca[0]), why) &&
                      same(to_host(a2, ca[1]), to_host(b2, ca[1]), why) &&
                      same(to_host(ua, rest), to_host(ub, rest), why);
      verdict(P, "three_way_partition int32 odd / small", n, ok, why);
      cudaFree(ua);
      cudaFree(ub);
    }
#endif
#if defined(MUH_SEL_UNIQUE_BY_KEY)
    {
      auto hv = ints(n, -5, 5, 42);
      int* dv = to_device(hv);
      call([&](void* t, size_t& s) { return cub::DeviceSelect::UniqueByKey(t, s, din, dv, a, a2, na, n); });
      CK(muh::cub::tune::unique_by_key::run(din, dv, b, b2, nb, n, s0));
      verdict(P, "unique_by_key int32 keys int32 values", n,
              counted(a, b, na, nb, 1, why) && counted(a2, b2, na, nb, 1, why), why);
      cudaFree(dv);
    }
#endif
    cudaFree(din);
    cudaFree(a);
    cudaFree(b);
    cudaFree(a2);
    cudaFree(b2);
    cudaFree(na);
    cudaFree(nb);
  }
#endif
  printf("{\"program\": \"%s\", \"failed\": %d}\n", P, g_failed);
  return g_failed;
}
