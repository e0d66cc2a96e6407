// Scan design lab (issue 17): variants of muh/codegen/kernels/static/scan_tile.cuh vs the generated
// spec kernel (C API), CUB 3.0.1 and a device copy, in one process on one GPU.
//   lab [--ncu TYPE VARIANT LOG2N]     (no args: correctness + timing table on stdout, TSV on fd 3)
// Inputs: integer-valued random values in [-8, 8] (exact in every type at every size used), so
// every variant's output must equal CUB's bit for bit; it is checked before timing.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include <cub/device/device_scan.cuh>

__device__ unsigned long long g_stats[3];  // look-backs, polls, window steps (variants with kStats)
#define MUH_SCAN_LOOKBACK_HOOK(P, polls, steps)                                \
  if (P::kStats && muh::warp::lane() == 0) {                                    \
    atomicAdd(&g_stats[0], 1ull);                                               \
    atomicAdd(&g_stats[1], (unsigned long long)(polls));                        \
    atomicAdd(&g_stats[2], (unsigned long long)(steps));                        \
  }
#include "muh/scan_tile.cuh"
#include "muh/kernels/api.h"

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));        \
      exit(2);                                                                                  \
    }                                                                                           \
  } while (0)

using namespace muh;

template <int T_, int I_, int V_, int W_, int L_, int S_, int Pe_, int P16_, int L2W_, int D_, int Mode_ = 1, int St_ = 0, int MinB_ = 1,
          int Stage_ = 0, int Passes_ = 1, int Chunk_ = 4096, int Stages_ = 1, int Lag_ = 1>
struct Pol {
  enum {
    kStats = St_, kMinBlocks = MinB_, kStage = Stage_, kPasses = Passes_, kBulkChunk = Chunk_,
    kStages = Stages_, kLag = Lag_,
    kThreads = T_, kItems = I_, kVec = V_, kWindow = W_, kLoad = L_, kStore = S_, kPersistent = Pe_,
    kPacked16 = P16_, kL2WriteNs = L2W_, kDelayMode = Mode_, kDelayJitter = 0, kDelayStartNs = D_,
    kDelayMinNs = 1, kDelayMaxNs = D_ > 0 ? D_ : 1, kSpinCyclesPerNsX16 = 24, kStriped = 1
  };
};

template <typename T, typename P, bool kExcl>
__global__ void __launch_bounds__(P::kThreads, P::kMinBlocks) lab_kernel(const T* in, T* out, long long n, void* ws, unsigned epoch) {
  scan_tile::run<T, P, kExcl>(in, out, n, ws, epoch);
}

__global__ void fill(void* p, long long n, int size, unsigned seed, int isfloat) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
    int v = (int)(h % 17u) - 8;
    if (size == 4) { if (isfloat) ((float*)p)[i] = (float)v; else ((int*)p)[i] = v; }
    else { if (isfloat) ((double*)p)[i] = (double)v; else ((long long*)p)[i] = v; }
  }
}
__global__ void count_diff(const unsigned* a, const unsigned* b, long long words, unsigned long long* bad) {
  unsigned long long c = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < words; i += (long long)gridDim.x * blockDim.x)
    c += a[i] != b[i];
  if (c) atomicAdd(bad, c);
}
__global__ void spin(long long ns) {
  long long t0 = clock64();
  while (clock64() - t0 < ns * 2) { }
}

struct Ctx {
  void* in; void* out; void* ref; void* ws; size_t ws_bytes; void* cub_tmp; size_t cub_bytes;
  unsigned long long* bad; long long cap; int size; unsigned epoch;
};
static Ctx g;
static int g_sms;

typedef void (*LaunchFn)(int excl, const void* in, void* out, long long n);

template <typename T, typename P>
void run_variant(int excl, const void* in, void* out, long long n) {
  const long long tile_elems = scan_tile::TileElems<T, P>::value;
  const long long tiles = (n + tile_elems - 1) / tile_elems;
  if (n == 0) return;
  static bool attr = false;
  static int per_sm = 0;
  const int ring = scan_tile::BodyKind<P>::value == 2;
  const size_t dyn = ring ? (size_t)P::kStages * tile_elems * sizeof(T) : 0;
  if (!attr && P::kStage == 1) {  // shared-memory staged tiles: ask for the largest carve-out
    attr = true;
    CK(cudaFuncSetAttribute(lab_kernel<T, P, true>, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    CK(cudaFuncSetAttribute(lab_kernel<T, P, false>, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    if (ring) {
      CK(cudaFuncSetAttribute(lab_kernel<T, P, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn));
      CK(cudaFuncSetAttribute(lab_kernel<T, P, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn));
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, lab_kernel<T, P, false>, P::kThreads, dyn));
      fprintf(stderr, "ring %dx%dx%d stages %d lag %d: %zu B dynamic, %d blocks per SM\n", P::kThreads, P::kItems,
              P::kPasses, P::kStages, P::kLag, dyn, per_sm);
    }
  }
  const long long grid = ring ? std::min<long long>(tiles, (long long)per_sm * g_sms) : tiles;
  ++g.epoch;
  if (excl)
    lab_kernel<T, P, true><<<(unsigned)grid, P::kThreads, dyn>>>((const T*)in, (T*)out, n, g.ws, g.epoch);
  else
    lab_kernel<T, P, false><<<(unsigned)grid, P::kThreads, dyn>>>((const T*)in, (T*)out, n, g.ws, g.epoch);
}

template <typename T> int code();
template <> int code<float>() { return MUH_FLOAT32; }
template <> int code<double>() { return MUH_FLOAT64; }
template <> int code<int>() { return MUH_INT32; }
template <> int code<long long>() { return MUH_INT64; }

static unsigned g_spec_epoch = 0;
template <typename T>
void run_spec(int excl, const void* in, void* out, long long n) {
  ++g_spec_epoch;
  int rc = muh_scan(excl, code<T>(), in, out, n, (char*)g.ws + (g.ws_bytes / 2), g.ws_bytes / 2, g_spec_epoch, 0);
  if (rc) { fprintf(stderr, "muh_scan rc %d: %s\n", rc, muh_last_error()); exit(3); }
}
template <typename T>
void run_cub(int excl, const void* in, void* out, long long n) {
  size_t b = g.cub_bytes;
  if (excl) CK(cub::DeviceScan::ExclusiveSum(g.cub_tmp, b, (const T*)in, (T*)out, (long long)n));
  else CK(cub::DeviceScan::InclusiveSum(g.cub_tmp, b, (const T*)in, (T*)out, (long long)n));
}
template <typename T>
void run_copy(int, const void* in, void* out, long long n) {
  CK(cudaMemcpyAsync(out, in, (size_t)n * sizeof(T), cudaMemcpyDeviceToDevice));
}

struct Variant { const char* type; std::string name; LaunchFn fn; int check; };
static std::vector<Variant> g_vars;
template <typename T, typename P>
void add(const char* type, const char* name) { g_vars.push_back({type, name, run_variant<T, P>, 1}); }

// policy: threads, items, vec, window, load(0 plain,1 ldg,2 cs), store(0,1 cs), persistent (unused since the
// persistent variant was removed after call 1: bench/results/scan-h200.md), packed16, l2w ns, delay ns[, mode, stats, min blocks]
// Variants measured on 2026-12-01 (bench/results/scan-h200.md) are in git history; this list is the
// final call's cross-check: the generated kernel (spec, through the C interface) against the same
// code with one policy value changed, CUB and a copy.
// Staged (stage 1: the tile in shared memory, filled by cp.async.bulk): threads x items x passes.
#define ST(T_, I_, PA_, W_, L2W_, D_, CH_, ST_) Pol<T_, I_, 16 / sizeof(float) , W_, 0, 1, 0, 1, L2W_, D_, 1, ST_, 1, 1, PA_, CH_>
#define ST8(T_, I_, PA_, L2W_, D_) Pol<T_, I_, 2, 32, 0, 1, 0, 1, L2W_, D_, 1, 0, 1, 1, PA_, 4096>
// Pipelined (issue 17, calls 6-7): a resident grid of blocks with rings of SG_ staged tiles, look-back lag LG_.
#define PI(T_, I_, PA_, SG_, LG_, W_, D_, ST_) Pol<T_, I_, 4, W_, 0, 1, 0, 1, 1140, D_, 1, ST_, 1, 1, PA_, 4096, SG_, LG_>
#define PI8(T_, I_, PA_, SG_, LG_) Pol<T_, I_, 2, 32, 0, 1, 0, 1, 1215, 576, 1, 0, 1, 1, PA_, 4096, SG_, LG_>
static void register_all() {
  // call 5 (final): the generated kernel (stage ublkcp 128x16x4 from 64 MiB, register 128x16 below),
  // the previous spec's register kernel, the staged kernel in the lab, a few more staged shapes
  // call 7: the generated kernel (ring 128x16x2, 3 stages, window 128 from 2^24; register 128x16 below),
  // the previous spec's one-tile staged kernel, ring shapes, windows, lag 0
  g_vars.push_back({"f32", "spec (generated, C API)", run_spec<float>, 1});
  add<float, ST(128, 16, 4, 32, 1140, 688, 4096, 0)>("f32", "bulk 128x16x4 (32K)");
  add<float, PI(128, 16, 2, 3, 1, 32, 688, 0)>("f32", "pipe 128x16x2 s3 win32");
  add<float, PI(128, 16, 2, 3, 1, 64, 688, 0)>("f32", "pipe 128x16x2 s3 win64");
  add<float, PI(128, 16, 2, 3, 1, 128, 688, 0)>("f32", "pipe 128x16x2 s3 win128");
  add<float, PI(128, 16, 2, 3, 1, 256, 688, 0)>("f32", "pipe 128x16x2 s3 win256");
  add<float, PI(128, 16, 2, 3, 0, 128, 688, 0)>("f32", "pipe 128x16x2 s3 win128 lag0");
  add<float, PI(128, 16, 2, 4, 1, 128, 688, 0)>("f32", "pipe 128x16x2 s4 win128");
  add<float, PI(128, 16, 3, 3, 1, 128, 688, 0)>("f32", "pipe 128x16x3 s3 win128");
  add<float, PI(128, 16, 4, 3, 1, 32, 688, 0)>("f32", "pipe 128x16x4 s3 win32");
  add<float, PI(128, 16, 4, 3, 1, 128, 688, 0)>("f32", "pipe 128x16x4 s3 win128");
  add<float, PI(128, 16, 4, 4, 1, 128, 688, 0)>("f32", "pipe 128x16x4 s4 win128");
  add<float, PI(128, 16, 1, 6, 1, 128, 688, 0)>("f32", "pipe 128x16x1 s6 win128");
  add<float, PI(256, 16, 2, 3, 1, 128, 688, 0)>("f32", "pipe 256x16x2 s3 win128");
  add<float, PI(128, 16, 2, 3, 1, 128, 350, 0)>("f32", "pipe 128x16x2 s3 win128 d350");
  add<float, PI(128, 16, 2, 3, 1, 128, 688, 1)>("f32", "STATS pipe 128x16x2 s3 win128");
  add<float, PI(128, 16, 2, 3, 1, 32, 688, 1)>("f32", "STATS pipe 128x16x2 s3 win32");
  add<float, PI(128, 16, 4, 3, 1, 128, 688, 1)>("f32", "STATS pipe 128x16x4 s3 win128");
  add<float, ST(128, 16, 4, 32, 1140, 688, 4096, 1)>("f32", "STATS bulk 128x16x4");
  g_vars.push_back({"f32", "CUB", run_cub<float>, 0});
  g_vars.push_back({"f32", "copy", run_copy<float>, 0});
  g_vars.push_back({"i32", "spec (generated, C API)", run_spec<int>, 1});
  add<int, PI(128, 16, 2, 3, 1, 32, 688, 0)>("i32", "pipe 128x16x2 s3 win32");
  add<int, PI(128, 16, 4, 3, 1, 128, 688, 0)>("i32", "pipe 128x16x4 s3 win128");
  g_vars.push_back({"i32", "CUB", run_cub<int>, 0});
  g_vars.push_back({"i32", "copy", run_copy<int>, 0});
  g_vars.push_back({"f64", "spec (generated, C API)", run_spec<double>, 1});
  add<double, PI8(128, 8, 2, 3, 1)>("f64", "pipe 128x8x2 s3 win32");
  add<double, PI8(128, 8, 4, 3, 1)>("f64", "pipe 128x8x4 s3 win32");
  g_vars.push_back({"f64", "CUB", run_cub<double>, 0});
  g_vars.push_back({"f64", "copy", run_copy<double>, 0});
}

static float g_spin_ms = 0.5f;
static double time_fn(LaunchFn fn, int excl, long long n, int size, int iters, int reps) {
  long long slots = std::max<long long>(1, g.cap / n);
  auto ptr = [&](void* base, long long i) { return (char*)base + (size_t)((i * 7) % slots) * n * size; };
  for (int i = 0; i < 3; ++i) fn(excl, ptr(g.in, i), ptr(g.out, i), n);
  CK(cudaDeviceSynchronize());
  std::vector<double> per;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  long long call = 3;
  for (int r = 0; r < reps; ++r) {
    spin<<<1, 1>>>((long long)(g_spin_ms * 1e6));
    CK(cudaEventRecord(a));
    for (int i = 0; i < iters; ++i, ++call) fn(excl, ptr(g.in, call), ptr(g.out, call), n);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    per.push_back(ms * 1e3 / iters);
  }
  CK(cudaGetLastError());
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

static int size_of(const char* t) { return (t[1] == '6') ? 8 : 4; }
static int isfloat(const char* t) { return t[0] == 'f'; }

static long long check(const Variant& v, int excl, long long n) {
  int size = size_of(v.type);
  // reference: CUB into g.ref
  for (auto& c : g_vars)
    if (!strcmp(c.type, v.type) && c.name == "CUB") c.fn(excl, g.in, g.ref, n);
  CK(cudaMemset(g.out, 0xff, (size_t)n * size));
  v.fn(excl, g.in, g.out, n);
  v.fn(excl, g.in, g.out, n);  // twice: the second launch sees the first one's tile status
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemset(g.bad, 0, 8));
  count_diff<<<1024, 256>>>((const unsigned*)g.ref, (const unsigned*)g.out, n * size / 4, g.bad);
  unsigned long long bad;
  CK(cudaMemcpy(&bad, g.bad, 8, cudaMemcpyDeviceToHost));
  return (long long)bad;
}

int main(int argc, char** argv) {
  register_all();
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  g.cap = 1ll << 30;
  CK(cudaMalloc(&g.in, (size_t)g.cap * 8));
  CK(cudaMalloc(&g.out, (size_t)g.cap * 8));
  CK(cudaMalloc(&g.ref, (size_t)g.cap * 8));
  g.ws_bytes = 64 << 20;
  CK(cudaMalloc(&g.ws, g.ws_bytes));
  CK(cudaMemset(g.ws, 0, g.ws_bytes));
  CK(cudaMalloc(&g.bad, 8));
  g.cub_bytes = 0;
  {
    size_t b = 0;
    cub::DeviceScan::InclusiveSum(nullptr, b, (const double*)nullptr, (double*)nullptr, (long long)g.cap);
    g.cub_bytes = std::max(g.cub_bytes, b);
    cub::DeviceScan::ExclusiveSum(nullptr, b, (const double*)nullptr, (double*)nullptr, (long long)g.cap);
    g.cub_bytes = std::max(g.cub_bytes, b) + 1024;
    CK(cudaMalloc(&g.cub_tmp, g.cub_bytes));
  }
  if (argc >= 5 && !strcmp(argv[1], "--ncu")) {
    const char* type = argv[2];
    long long n = 1ll << atoi(argv[4]);
    fill<<<4096, 256>>>(g.in, n, size_of(type), 1234u, isfloat(type));
    for (auto& v : g_vars)
      if (!strcmp(v.type, type) && v.name == argv[3]) { v.fn(0, g.in, g.out, n); v.fn(0, g.in, g.out, n); }
    CK(cudaDeviceSynchronize());
    return 0;
  }
  FILE* tsv = fdopen(3, "w");
  const char* types[] = {"f32", "i32", "f64"};
  int logs[] = {16, 20, 24, 28, 30};
  int failures = 0;
  for (const char* type : types) {
    int size = size_of(type);
    long long cap = (1ll << 30);
    fill<<<4096, 256>>>(g.in, cap, size, 1234u, isfloat(type));
    CK(cudaDeviceSynchronize());
    // correctness at odd sizes and big ones, incl and excl, before timing
    long long csz[] = {1, 4097, 65537, (1ll << 20) + 3, (1ll << 24) + 5, (1ll << 28) - 7};
    for (auto& v : g_vars) {
      if (strcmp(v.type, type) || !v.check) continue;
      for (long long n : csz)
        for (int excl = 0; excl < 2; ++excl) {
          long long bad = check(v, excl, n);
          if (bad) { ++failures; printf("FAIL %s %s n=%lld excl=%d: %lld words differ\n", type, v.name.c_str(), n, excl, bad); }
        }
    }
    printf("\n%s: us per call (median of 7), inclusive; %% of copy in ()\n%-34s", type, "variant");
    for (int l : logs) printf("  2^%-10d", l);
    printf("\n");
    std::vector<double> copy_t(5), cub_t(5);
    std::vector<std::vector<double>> all;
    for (auto& v : g_vars) {
      if (strcmp(v.type, type)) continue;
      std::vector<double> ts;
      for (int li = 0; li < 5; ++li) {
        long long n = 1ll << logs[li];
        int iters = logs[li] <= 20 ? 100 : logs[li] == 24 ? 20 : logs[li] == 28 ? 4 : 2;
        ts.push_back(time_fn(v.fn, 0, n, size, iters, 7));
      }
      if (v.name.compare(0, 5, "STATS") == 0) {
        // one launch at 2^28 with fresh counters
        unsigned long long z[3] = {0, 0, 0}, st[3];
        CK(cudaMemcpyToSymbol(g_stats, z, sizeof(z)));
        v.fn(0, g.in, g.out, 1ll << 28);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpyFromSymbol(st, g_stats, sizeof(st)));
        printf("# %s at 2^28: %llu look-backs, %.2f polls and %.2f window steps per look-back\n", v.name.c_str(), st[0],
               (double)st[1] / st[0], (double)st[2] / st[0]);
      }
      if (v.name == "copy") copy_t = ts;
      if (v.name == "CUB") cub_t = ts;
      all.push_back(ts);
    }
    int k = 0;
    for (auto& v : g_vars) {
      if (strcmp(v.type, type)) continue;
      auto& ts = all[k++];
      printf("%-34s", v.name.c_str());
      for (int li = 0; li < 5; ++li) printf("  %7.1f(%3.0f%%)", ts[li], 100.0 * copy_t[li] / ts[li]);
      printf("\n");
      fprintf(tsv, "%s\t%s", type, v.name.c_str());
      for (int li = 0; li < 5; ++li) fprintf(tsv, "\t%.2f\t%.4f\t%.4f", ts[li], copy_t[li] / ts[li], cub_t[li] / ts[li]);
      fprintf(tsv, "\n");
    }
    fflush(stdout);
    fflush(tsv);
  }
  printf("correctness failures: %d\n", failures);
  return failures ? 1 : 0;
}
