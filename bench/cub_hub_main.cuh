// bench/cub_hub.py's programs: which one this is, the including file says (MUH_ENTRIES_*, MUH_RACE,
// MUH_SEARCH_*). Every result is one JSON line; the exit status counts the cases that differ from CUB.
using namespace bench;

static void row(const char* program, const std::string& what, long long n, double cub_us, double hub_us,
                long long bytes) {
  printf("{\"program\": \"%s\", \"case\": \"%s\", \"n\": %lld, \"cub_us\": %.3f, \"hub_us\": %.3f, "
         "\"cub_over_hub\": %.4f, \"hub_gbs\": %.1f}\n",
         program, what.c_str(), n, cub_us, hub_us, cub_us / hub_us, bytes / hub_us / 1e3);
  fflush(stdout);
}

int main() {
  std::string why;
#if defined(MUH_ENTRIES_REDUCE)
  const char* P = "entries_reduce";
  for (long long n : {1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -100, 100, 1);
    int* din = to_device(hi);
    int *a = empty<int>(1), *b = empty<int>(1);
    call([&](void* t, size_t& s) { return cub::DeviceReduce::Sum(t, s, din, a, n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::reduce_sum(t, s, din, b, n); });
    verdict(P, "reduce_sum int32", n, same(to_host(a, 1), to_host(b, 1), why), why);
    auto hf = floats(n, 2);
    float* fin = to_device(hf);
    float *fa = empty<float>(1), *fb = empty<float>(1);
    call([&](void* t, size_t& s) { return cub::DeviceReduce::Sum(t, s, fin, fa, n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::reduce_sum(t, s, fin, fb, n); });
    float x = to_host(fa, 1)[0], y = to_host(fb, 1)[0];
    verdict(P, "reduce_sum float32 (equal policy: equal bits)", n, x == y, std::to_string(x) + " vs " + std::to_string(y));
    // segmented: segments of 1000 (the last shorter)
    long long segs = (n + 999) / 1000;
    std::vector<int> off(segs + 1);
    for (long long i = 0; i <= segs; ++i) off[i] = (int)std::min(n, i * 1000);
    int* doff = to_device(off);
    int *sa = empty<int>(segs), *sb = empty<int>(segs);
    call([&](void* t, size_t& s) { return cub::DeviceSegmentedReduce::Sum(t, s, din, sa, segs, doff, doff + 1); });
    call([&](void* t, size_t& s) { return muh_nv::cub::segmented_reduce_sum(t, s, din, sb, segs, doff, doff + 1); });
    verdict(P, "segmented_reduce_sum int32 (segments of 1000)", n, same(to_host(sa, segs), to_host(sb, segs), why), why);
    // reduce_by_key: runs of 7 equal keys
    std::vector<int> hk(n);
    for (long long i = 0; i < n; ++i) hk[i] = (int)(i / 7);
    int* dk = to_device(hk);
    int *ua = empty<int>(n), *ub = empty<int>(n), *aa = empty<int>(n), *ab = empty<int>(n);
    int *ra = empty<int>(1), *rb = empty<int>(1);
    call([&](void* t, size_t& s) { return cub::DeviceReduce::ReduceByKey(t, s, dk, ua, din, aa, ra, ::cuda::std::plus<>{}, n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::reduce_by_key::run(t, s, dk, ub, din, ab, rb, ::cuda::std::plus<>{}, n); });
    int runs = to_host(ra, 1)[0];
    bool ok = runs == to_host(rb, 1)[0] && same(to_host(ua, runs), to_host(ub, runs), why) &&
              same(to_host(aa, runs), to_host(ab, runs), why);
    verdict(P, "reduce_by_key int32 (runs of 7)", n, ok, why);
    cudaFree(dk); cudaFree(ua); cudaFree(ub); cudaFree(aa); cudaFree(ab);
    cudaFree(din); cudaFree(fin); cudaFree(doff);
  }
#endif
#if defined(MUH_ENTRIES_SCAN)
  const char* P = "entries_scan";
  for (long long n : {1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -100, 100, 3);
    int* din = to_device(hi);
    int *a = empty<int>(n), *b = empty<int>(n);
    call([&](void* t, size_t& s) { return cub::DeviceScan::InclusiveSum(t, s, din, a, n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::inclusive_sum(t, s, din, b, n); });
    verdict(P, "inclusive_sum int32", n, same(to_host(a, n), to_host(b, n), why), why);
    auto hl = std::vector<long long>(hi.begin(), hi.end());
    long long* dl = to_device(hl);
    long long *la = empty<long long>(n), *lb = empty<long long>(n);
    call([&](void* t, size_t& s) { return cub::DeviceScan::InclusiveSum(t, s, dl, la, n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::inclusive_sum(t, s, dl, lb, n); });
    verdict(P, "inclusive_sum int64", n, same(to_host(la, n), to_host(lb, n), why), why);
    std::vector<int> hk(n);
    for (long long i = 0; i < n; ++i) hk[i] = (int)(i / 100);  // segments of 100 equal keys
    int* dk = to_device(hk);
    call([&](void* t, size_t& s) { return cub::DeviceScan::InclusiveSumByKey(t, s, dk, din, a, n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::scan_by_key::run(t, s, dk, din, b, n); });
    verdict(P, "inclusive_sum_by_key int32 (runs of 100)", n, same(to_host(a, n), to_host(b, n), why), why);
    cudaFree(dk);
    cudaFree(din); cudaFree(a); cudaFree(b); cudaFree(dl); cudaFree(la); cudaFree(lb);
  }
#endif
#if defined(MUH_ENTRIES_SELECT)
  const char* P = "entries_select";
  for (long long n : {1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -100, 100, 4);
    int* din = to_device(hi);
    std::vector<char> hf(n);
    for (long long i = 0; i < n; ++i) hf[i] = (char)(hi[i] % 3 == 0);
    char* dflags = to_device(hf);
    int *a = empty<int>(n), *b = empty<int>(n), *ca = empty<int>(1), *cb = empty<int>(1);
    auto check = [&](const char* what) {
      auto na = to_host(ca, 1)[0], nb = to_host(cb, 1)[0];
      bool ok = na == nb && same(to_host(a, na), to_host(b, nb), why);
      if (na != nb) why = "counts " + std::to_string(na) + " vs " + std::to_string(nb);
      verdict(P, what, n, ok, why);
    };
    call([&](void* t, size_t& s) { return cub::DeviceSelect::If(t, s, din, a, ca, n, LessThan{0}); });
    call([&](void* t, size_t& s) { return muh_nv::cub::select_if::run(t, s, din, b, cb, n, LessThan{0}); });
    check("select_if int32 x < 0");
    call([&](void* t, size_t& s) { return cub::DeviceSelect::Flagged(t, s, din, dflags, a, ca, n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::select_flagged::run(t, s, din, dflags, b, cb, n); });
    check("select_flagged int32");
    call([&](void* t, size_t& s) { return cub::DeviceSelect::Unique(t, s, din, a, ca, n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::unique::run(t, s, din, b, cb, n); });
    check("unique int32");
    call([&](void* t, size_t& s) { return cub::DevicePartition::If(t, s, din, a, ca, n, LessThan{0}); });
    call([&](void* t, size_t& s) { return muh_nv::cub::partition::run(t, s, din, b, cb, n, LessThan{0}); });
    CK(cudaMemcpy(ca, ca, 0, cudaMemcpyDeviceToDevice));
    {
      auto na = to_host(ca, 1)[0], nb = to_host(cb, 1)[0];
      bool ok = na == nb && same(to_host(a, n), to_host(b, n), why);
      verdict(P, "partition int32 x < 0 (whole output)", n, ok, why);
    }
    {  // unique_by_key: keys of the input's runs (x / 16: mostly equal neighbours in sorted data)
      std::vector<int> hk(hi);
      std::sort(hk.begin(), hk.end());
      for (auto& x : hk) x /= 16;
      int* dk = to_device(hk);
      int *ka = empty<int>(n), *kb = empty<int>(n);
      call([&](void* t, size_t& s) { return cub::DeviceSelect::UniqueByKey(t, s, dk, din, ka, a, ca, n); });
      call([&](void* t, size_t& s) { return muh_nv::cub::unique_by_key::run(t, s, dk, din, kb, b, cb, n); });
      auto na = to_host(ca, 1)[0], nb = to_host(cb, 1)[0];
      bool ok = na == nb && same(to_host(ka, na), to_host(kb, nb), why) && same(to_host(a, na), to_host(b, nb), why);
      verdict(P, "unique_by_key int32:int32", n, ok, why);
      cudaFree(dk); cudaFree(ka); cudaFree(kb);
    }
    cudaFree(din); cudaFree(dflags); cudaFree(a); cudaFree(b);
  }
#endif
#if defined(MUH_ENTRIES_RADIX)
  const char* P = "entries_radix";
  for (long long n : {1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -1000000, 1000000, 5);
    int* din = to_device(hi);
    auto hf = floats(n, 6);
    float* fv = to_device(hf);
    int *a = empty<int>(n), *b = empty<int>(n);
    float *va = empty<float>(n), *vb = empty<float>(n);
    call([&](void* t, size_t& s) { return cub::DeviceRadixSort::SortKeys(t, s, din, a, n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::radix_sort::run(t, s, din, b, n); });
    verdict(P, "radix_sort keys int32", n, same(to_host(a, n), to_host(b, n), why), why);
    call([&](void* t, size_t& s) { return cub::DeviceRadixSort::SortPairs(t, s, din, a, fv, va, n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::radix_sort_pairs::run(t, s, din, b, fv, vb, n); });
    verdict(P, "radix_sort_pairs int32:float32", n,
            same(to_host(a, n), to_host(b, n), why) && same(to_host(va, n), to_host(vb, n), why), why);
    long long segs = (n + 4095) / 4096;
    std::vector<int> off(segs + 1);
    for (long long i = 0; i <= segs; ++i) off[i] = (int)std::min(n, i * 4096);
    int* doff = to_device(off);
    call([&](void* t, size_t& s) { return cub::DeviceSegmentedRadixSort::SortKeys(t, s, din, a, (int)n, (int)segs, doff, doff + 1); });
    call([&](void* t, size_t& s) { return muh_nv::cub::segmented_radix_sort::run(t, s, din, b, (int)n, (int)segs, doff, doff + 1); });
    verdict(P, "segmented_radix_sort int32 (segments of 4096)", n, same(to_host(a, n), to_host(b, n), why), why);
    call([&](void* t, size_t& s) { return cub::DeviceMergeSort::SortKeysCopy(t, s, din, a, n, ::cuda::std::less<>{}); });
    call([&](void* t, size_t& s) { return muh_nv::cub::merge_sort::run(t, s, din, b, n, ::cuda::std::less<>{}); });
    verdict(P, "merge_sort keys int32 (less)", n, same(to_host(a, n), to_host(b, n), why), why);
    cudaFree(din); cudaFree(fv); cudaFree(a); cudaFree(b); cudaFree(va); cudaFree(vb); cudaFree(doff);
  }
#endif
#if defined(MUH_ENTRIES_SEGSORT) || defined(MUH_SEARCH_SEGMENTED_SORT)
  // CUB's segmented-sort benchmark shapes: fixed segment sizes and random ones (small, medium, large)
  auto segments = [](long long n, int kind, unsigned seed) {
    std::vector<int> off{0};
    std::mt19937 g(seed);
    while (off.back() < n) {
      int len = kind == 0 ? 8 : kind == 1 ? 200 : kind == 2 ? 5000 : (int)(g() % 3 == 0 ? g() % 20000 : g() % 400);
      off.push_back((int)std::min<long long>(n, off.back() + len));
    }
    return off;
  };
  const char* kinds[] = {"segments of 8", "segments of 200", "segments of 5000", "random segments"};
#endif
#if defined(MUH_ENTRIES_SEGSORT)
  const char* P = "entries_segsort";
  for (long long n : {1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -1000000, 1000000, 7);
    int* din = to_device(hi);
    int *a = empty<int>(n), *b = empty<int>(n);
    for (int k = 0; k < 4; ++k) {
      auto off = segments(n, k, 8);
      int* doff = to_device(off);
      long long segs = (long long)off.size() - 1;
      call([&](void* t, size_t& s) { return cub::DeviceSegmentedSort::SortKeys(t, s, din, a, n, segs, doff, doff + 1); });
      call([&](void* t, size_t& s) { return muh_nv::cub::segmented_sort::run(t, s, din, b, n, segs, doff, doff + 1); });
      verdict(P, std::string("segmented_sort int32 ") + kinds[k], n, same(to_host(a, n), to_host(b, n), why), why);
      cudaFree(doff);
    }
    cudaFree(din); cudaFree(a); cudaFree(b);
  }
#endif
#if defined(MUH_ENTRIES_HISTOGRAM)
  const char* P = "entries_histogram";
  for (long long n : {1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, 0, 255, 9);
    std::vector<unsigned char> hb(hi.begin(), hi.end());
    unsigned char* db = to_device(hb);
    int *a = empty<int>(256), *b = empty<int>(256);
    call([&](void* t, size_t& s) { return cub::DeviceHistogram::HistogramEven(t, s, db, a, 257, 0, 256, (int)n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::histogram::run(t, s, db, b, 257, 0, 256, (int)n); });
    verdict(P, "histogram_even uint8 256 bins", n, same(to_host(a, 256), to_host(b, 256), why), why);
    auto hf = floats(n, 10);
    float* df = to_device(hf);
    call([&](void* t, size_t& s) { return cub::DeviceHistogram::HistogramEven(t, s, df, a, 65, -1.f, 1.f, (int)n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::histogram::run(t, s, df, b, 65, -1.f, 1.f, (int)n); });
    verdict(P, "histogram_even float32 64 bins", n, same(to_host(a, 64), to_host(b, 64), why), why);
    float *ta = empty<float>(n), *tb = empty<float>(n);
    CK(cub::DeviceTransform::Transform(df, ta, n, Twice{}));
    CK(muh_nv::cub::transform::run(df, tb, n, Twice{}));
    verdict(P, "transform float32 2x", n, same(to_host(ta, n), to_host(tb, n), why), why);
    cudaFree(db); cudaFree(df); cudaFree(ta); cudaFree(tb);
  }
#endif
#if defined(MUH_ENTRIES_MORE)
  const char* P = "entries_more";
  for (long long n : {1ll << 16, 1ll << 20, 1ll << 24}) {
    auto hi = ints(n, -100, 100, 16);
    int* din = to_device(hi);
    int *a = empty<int>(n), *b = empty<int>(n);
    call([&](void* t, size_t& s) { return cub::DeviceAdjacentDifference::SubtractLeftCopy(t, s, din, a, n); });
    call([&](void* t, size_t& s) { return muh_nv::cub::adjacent_difference::run(t, s, din, b, n); });
    verdict(P, "adjacent_difference subtract_left_copy int32", n, same(to_host(a, n), to_host(b, n), why), why);
    CK(cudaMemcpy(a, din, n * sizeof(int), cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy(b, din, n * sizeof(int), cudaMemcpyDeviceToDevice));
    CK(cub::DeviceFor::ForEachN(a, n, AddOne{}));
    CK(muh_nv::cub::for_each::run(b, n, AddOne{}));
    verdict(P, "for_each_n int32 x += 1", n, same(to_host(a, n), to_host(b, n), why), why);
    {  // merge: the two sorted halves of the input
      long long n1 = n / 2, n2 = n - n / 2;
      std::vector<int> h1(hi.begin(), hi.begin() + n1), h2(hi.begin() + n1, hi.end());
      std::sort(h1.begin(), h1.end());
      std::sort(h2.begin(), h2.end());
      int *d1 = to_device(h1), *d2 = to_device(h2);
      call([&](void* t, size_t& s) { return cub::DeviceMerge::MergeKeys(t, s, d1, n1, d2, n2, a); });
      call([&](void* t, size_t& s) { return muh_nv::cub::merge::run(t, s, d1, n1, d2, n2, b); });
      verdict(P, "merge keys int32 (two sorted halves, less)", n, same(to_host(a, n), to_host(b, n), why), why);
      cudaFree(d1); cudaFree(d2);
    }
    {  // run-length encoding: runs of 1..8 equal keys (random lengths)
      std::vector<int> hk(n);
      std::mt19937 g(17);
      for (long long i = 0, key = 0; i < n; ++key)
        for (int len = 1 + (int)(g() % 8); len-- && i < n; ++i) hk[i] = (int)(key % 1000003);
      int* dk = to_device(hk);
      int *ua = empty<int>(n), *ub = empty<int>(n), *la = empty<int>(n), *lb = empty<int>(n);
      int *ra = empty<int>(1), *rb = empty<int>(1);
      auto runs_same = [&](const char* what) {
        int na = to_host(ra, 1)[0], nb = to_host(rb, 1)[0];
        bool ok = na == nb && same(to_host(ua, na), to_host(ub, na), why) && same(to_host(la, na), to_host(lb, na), why);
        if (na != nb) why = "runs " + std::to_string(na) + " vs " + std::to_string(nb);
        verdict(P, what, n, ok, why);
      };
      call([&](void* t, size_t& s) { return cub::DeviceRunLengthEncode::Encode(t, s, dk, ua, la, ra, (int)n); });
      call([&](void* t, size_t& s) { return muh_nv::cub::rle_encode::run(t, s, dk, ub, lb, rb, (int)n); });
      runs_same("rle_encode int32 (runs of 1..8)");
      call([&](void* t, size_t& s) { return cub::DeviceRunLengthEncode::NonTrivialRuns(t, s, dk, ua, la, ra, (int)n); });
      call([&](void* t, size_t& s) { return muh_nv::cub::rle_non_trivial_runs::run(t, s, dk, ub, lb, rb, (int)n); });
      runs_same("rle_non_trivial_runs int32 (runs of 1..8)");
      cudaFree(dk); cudaFree(ua); cudaFree(ub); cudaFree(la); cudaFree(lb); cudaFree(ra); cudaFree(rb);
    }
    {  // three-way partition: x < -50, then x < 50, the rest
      int *a2 = empty<int>(n), *b2 = empty<int>(n), *a3 = empty<int>(n), *b3 = empty<int>(n);
      int *ca = empty<int>(2), *cb = empty<int>(2);
      call([&](void* t, size_t& s) {
        return cub::DevicePartition::If(t, s, din, a, a2, a3, ca, n, LessThan{-50}, LessThan{50});
      });
      call([&](void* t, size_t& s) {
        return muh_nv::cub::three_way_partition::run(t, s, din, b, b2, b3, cb, n, LessThan{-50}, LessThan{50});
      });
      auto na = to_host(ca, 2), nb = to_host(cb, 2);
      long long rest = n - na[0] - na[1];
      bool ok = na == nb && same(to_host(a, na[0]), to_host(b, na[0]), why) &&
                same(to_host(a2, na[1]), to_host(b2, na[1]), why) && same(to_host(a3, rest), to_host(b3, rest), why);
      if (na != nb) why = "counts differ";
      verdict(P, "three_way_partition int32 (x < -50, x < 50, rest)", n, ok, why);
      cudaFree(a2); cudaFree(b2); cudaFree(a3); cudaFree(b3); cudaFree(ca); cudaFree(cb);
    }
    {  // batch memcpy: buffers of 1..2000 bytes (random) covering 4n bytes
      std::mt19937 g(18);
      std::vector<size_t> sizes, offs;
      for (size_t off = 0; off < (size_t)(4 * n);) {
        size_t len = std::min<size_t>(1 + g() % 2000, 4 * n - off);
        offs.push_back(off);
        sizes.push_back(len);
        off += len;
      }
      char* src = reinterpret_cast<char*>(din);
      char *da = reinterpret_cast<char*>(a), *db = reinterpret_cast<char*>(b);
      std::vector<const void*> hs;
      std::vector<void*> ha, hb;
      for (size_t i = 0; i < sizes.size(); ++i) {
        hs.push_back(src + offs[i]);
        ha.push_back(da + offs[i]);
        hb.push_back(db + offs[i]);
      }
      const void** ds = to_device(hs);
      void **dda = to_device(ha), **ddb = to_device(hb);
      size_t* dsz = to_device(sizes);
      long long nb = (long long)sizes.size();
      CK(cudaMemset(a, 0, n * sizeof(int)));
      CK(cudaMemset(b, 0, n * sizeof(int)));
      call([&](void* t, size_t& s) { return cub::DeviceMemcpy::Batched(t, s, ds, dda, dsz, nb); });
      call([&](void* t, size_t& s) { return muh_nv::cub::batch_memcpy::run(t, s, ds, ddb, dsz, nb); });
      bool ok = same(to_host(a, n), to_host(b, n), why) && same(hi, to_host(b, n), why);
      verdict(P, "batch_memcpy (buffers of 1..2000 bytes)", n, ok, why);
      cudaFree(ds); cudaFree(dda); cudaFree(ddb); cudaFree(dsz);
    }
    cudaFree(din); cudaFree(a); cudaFree(b);
  }
#endif
#if defined(MUH_RACE)
  // CUB with its own policies vs CUB with the hub generated from specs/h200.muh: same process, same inputs.
  const char* P = "race";
  for (long long n : {1ll << 20, 1ll << 24, 1ll << 28}) {
    auto hf = floats(n, 11);
    float* df = to_device(hf);
    float *a = empty<float>(n), *b = empty<float>(n);
    call([&](void* t, size_t& s) { return cub::DeviceReduce::Sum(t, s, df, a, n); });
    call([&](void* t, size_t& s) { return muh_h200::cub::reduce_sum(t, s, df, b, n); });
    double x = to_host(a, 1)[0], y = to_host(b, 1)[0];
    verdict(P, "reduce_sum float32 (relative 1e-5: other tiles, other order)", n, std::fabs(x - y) <= 1e-5 * (std::fabs(x) + 1));
    double tc = median_us([&] { call([&](void* t, size_t& s) { return cub::DeviceReduce::Sum(t, s, df, a, n); }); }, 4 * n);
    double th = median_us([&] { call([&](void* t, size_t& s) { return muh_h200::cub::reduce_sum(t, s, df, b, n); }); }, 4 * n);
    row(P, "reduce_sum float32", n, tc, th, 4 * n);
    call([&](void* t, size_t& s) { return muh_h200::cub::inclusive_sum(t, s, df, b, n); });
    call([&](void* t, size_t& s) { return cub::DeviceScan::InclusiveSum(t, s, df, a, n); });
    {
      // two float32 scans that sum in other orders (other tiles) differ by rounding that grows with the sum of the
      // magnitudes so far, not with the prefix (which cancels to near 0 on signed inputs: against |x| + 1, CUB's
      // own scan and the hub's, both right, differed by 2.7e-3 at 2^28, H100)
      auto ha = to_host(a, n), hb2 = to_host(b, n);
      double worst = 0, mag = 0;
      for (long long i = 0; i < n; ++i) {
        mag += std::fabs((double)hf[i]);
        if (i % 997 == 0) worst = std::max(worst, (double)std::fabs(ha[i] - hb2[i]) / (1 + mag));
      }
      verdict(P, "inclusive_sum float32 (relative 1e-5 of the sum of |x| so far + 1)", n, worst < 1e-5, std::to_string(worst));
    }
    tc = median_us([&] { call([&](void* t, size_t& s) { return cub::DeviceScan::InclusiveSum(t, s, df, a, n); }); }, 8 * n);
    th = median_us([&] { call([&](void* t, size_t& s) { return muh_h200::cub::inclusive_sum(t, s, df, b, n); }); }, 8 * n);
    row(P, "inclusive_sum float32", n, tc, th, 8 * n);
    CK(cub::DeviceTransform::Transform(df, a, n, Twice{}));
    CK(muh_h200::cub::transform::run(df, b, n, Twice{}));
    verdict(P, "transform float32 2x", n, same(to_host(a, n), to_host(b, n), why), why);
    tc = median_us([&] { CK(cub::DeviceTransform::Transform(df, a, n, Twice{})); }, 8 * n);
    th = median_us([&] { CK(muh_h200::cub::transform::run(df, b, n, Twice{})); }, 8 * n);
    row(P, "transform float32 2x", n, tc, th, 8 * n);
    auto hi = ints(n, 0, 255, 12);
    std::vector<unsigned char> hb(hi.begin(), hi.end());
    unsigned char* db = to_device(hb);
    int *ha = empty<int>(256), *hb3 = empty<int>(256);
    call([&](void* t, size_t& s) { return cub::DeviceHistogram::HistogramEven(t, s, db, ha, 257, 0, 256, (int)n); });
    call([&](void* t, size_t& s) { return muh_h200::cub::histogram::run(t, s, db, hb3, 257, 0, 256, (int)n); });
    verdict(P, "histogram_even uint8 256 bins", n, same(to_host(ha, 256), to_host(hb3, 256), why), why);
    tc = median_us([&] { call([&](void* t, size_t& s) { return cub::DeviceHistogram::HistogramEven(t, s, db, ha, 257, 0, 256, (int)n); }); }, n);
    th = median_us([&] { call([&](void* t, size_t& s) { return muh_h200::cub::histogram::run(t, s, db, hb3, 257, 0, 256, (int)n); }); }, n);
    row(P, "histogram_even uint8 256 bins", n, tc, th, n);
    cudaFree(df); cudaFree(a); cudaFree(b); cudaFree(db);
  }
#endif
#if defined(MUH_SEARCH_SELECT_IF)
  // Candidates (kLabels; 0: muh's hub with CUB's shipped sm_90 values) against CUB's own DeviceSelect::If.
  const char* P = "search_select_if";
  for (long long n : {1ll << 24, 1ll << 27}) {
    auto hi = ints(n, -1000, 1000, 13);
    int* din = to_device(hi);
    int *a = empty<int>(n), *b = empty<int>(n), *ca = empty<int>(1), *cb = empty<int>(1);
    call([&](void* t, size_t& s) { return cub::DeviceSelect::If(t, s, din, a, ca, n, LessThan{0}); });
    int na = to_host(ca, 1)[0];
    auto want = to_host(a, na);
    double tc = median_us([&] { call([&](void* t, size_t& s) { return cub::DeviceSelect::If(t, s, din, a, ca, n, LessThan{0}); }); }, 8 * n);
    for (int v = 0; v < MUH_SEARCH_SELECT_IF; ++v) {
      CK(cudaMemset(b, 0x7b, n * sizeof(int)));
      size_t sb = 0;
      cudaError_t e = search_run(v, nullptr, sb, din, b, cb, n, LessThan{0});
      if (e == cudaSuccess) e = search_run(v, g_temp.get(sb), sb, din, b, cb, n, LessThan{0});
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      bool ok = e == cudaSuccess && to_host(cb, 1)[0] == na && same(want, to_host(b, na), why);
      printf("{\"program\": \"%s\", \"candidate\": %d, \"label\": \"%s\", \"n\": %lld, \"correct\": %s", P, v, kLabels[v], n,
             ok ? "true" : "false");
      if (!ok) { printf(", \"why\": \"%s\"}\n", e != cudaSuccess ? cudaGetErrorString(e) : why.c_str()); continue; }
      double tv = median_us([&] { call([&](void* t, size_t& s) { return search_run(v, t, s, din, b, cb, n, LessThan{0}); }); }, 8 * n);
      printf(", \"cub_us\": %.3f, \"us\": %.3f, \"cub_over_candidate\": %.4f}\n", tc, tv, tc / tv);
      fflush(stdout);
    }
    cudaFree(din); cudaFree(a); cudaFree(b);
  }
#endif
#if defined(MUH_SEARCH_SEGMENTED_SORT)
  const char* P = "search_segmented_sort";
  long long n = 1ll << 24;
  auto hi = ints(n, -1000000, 1000000, 14);
  int* din = to_device(hi);
  int *a = empty<int>(n), *b = empty<int>(n);
  for (int k = 0; k < 4; ++k) {
    auto off = segments(n, k, 15);
    int* doff = to_device(off);
    long long segs = (long long)off.size() - 1;
    call([&](void* t, size_t& s) { return cub::DeviceSegmentedSort::SortKeys(t, s, din, a, n, segs, doff, doff + 1); });
    auto want = to_host(a, n);
    double tc = median_us([&] { call([&](void* t, size_t& s) { return cub::DeviceSegmentedSort::SortKeys(t, s, din, a, n, segs, doff, doff + 1); }); }, 8 * n);
    for (int v = 0; v < MUH_SEARCH_SEGMENTED_SORT; ++v) {
      CK(cudaMemset(b, 0x7b, n * sizeof(int)));
      size_t sb = 0;
      cudaError_t e = search_run(v, nullptr, sb, din, b, n, segs, doff, doff + 1);
      if (e == cudaSuccess) e = search_run(v, g_temp.get(sb), sb, din, b, n, segs, doff, doff + 1);
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      bool ok = e == cudaSuccess && same(want, to_host(b, n), why);
      printf("{\"program\": \"%s\", \"candidate\": %d, \"label\": \"%s\", \"case\": \"%s\", \"n\": %lld, \"correct\": %s", P, v,
             kLabels[v], kinds[k], n, ok ? "true" : "false");
      if (!ok) { printf(", \"why\": \"%s\"}\n", e != cudaSuccess ? cudaGetErrorString(e) : why.c_str()); continue; }
      double tv = median_us([&] { call([&](void* t, size_t& s) { return search_run(v, t, s, din, b, n, segs, doff, doff + 1); }); }, 8 * n);
      printf(", \"cub_us\": %.3f, \"us\": %.3f, \"cub_over_candidate\": %.4f}\n", tc, tv, tc / tv);
      fflush(stdout);
    }
    cudaFree(doff);
  }
#endif
  return g_failed;
}
