// Host launcher of the radix sort (include/muh/kernels/radix_sort.cuh), static CUDA: no numbers of its own;
// kernels/radix_sort.cu calls sort<U, kKind, V, P> with each key type's resolved policy P (params.cuh).
// Compiles on its own against the generated common layer (include/muh: host.cuh); C++14, CUDA 10.2 subset.
//
// Buffers (CUB's two APIs): out of place, keys_in is read only and the result is written to keys_out,
// with keys_alt (n keys) as the other buffer of the passes (unused by a one-pass or single-tile sort);
// double buffer (selector != 0), keys_in and keys_out are the two buffers, both overwritten, and
// *selector says which one holds the result (0: keys_in, 1: keys_out). Values likewise.
#pragma once

#include <stdint.h>

#include "muh/host.cuh"
#include "muh/kernels/radix_sort.cuh"

#if MUH_WARP_HAS_MATCH
namespace muh {
namespace radix_sort MUH_LIBRARY_LOCAL {

enum { kStaticSmem = 48 * 1024 };  // dynamic shared memory beyond this needs the kernel's opt-in

template <typename P>
struct Shape {
  enum { kRadix = 1 << P::kBits, kTile = P::kThreads * P::kItems, kSingle = P::kSingleThreads * P::kSingleItems };
  static int passes(int begin, int end) { return (end - begin + P::kBits - 1) / P::kBits; }
  static long long tiles(long long n) { return (n + kTile - 1) / kTile; }
};

// Workspace bytes a sort of n keys of this policy needs (counts for kMaxPasses passes: sort()'s fixed layout); of
// `rows` rows of n / rows keys each sorted on its own, every row's counts and tiles.
template <typename U, typename P>
size_t workspace_bytes(long long n, long long rows = 1) {
  typedef Shape<P> S;
  if (rows <= 1) return Workspace::bytes(n > S::kSingle ? S::tiles(n) : 0, kMaxPasses, S::kRadix);
  return Workspace::bytes(rows * S::tiles(n / rows), kMaxPasses * (int)rows, S::kRadix);
}

// The kernel's dynamic shared memory above 48 KiB, asked for once per device (`done`: the caller's
// per-instantiation record, one slot per device).
template <typename K>
int allow_smem(K kernel, int bytes, int* done) {
  if (bytes <= kStaticSmem) return 0;
  int* d = done + host::current_device();
  if (*d == bytes) return 0;
  int rc = host::cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                            "radix sort shared memory opt-in");
  if (!rc) *d = bytes;
  return rc;
}

// The histogram's grid: the blocks resident on the device at once (one wave; the kernel strides over the
// tiles), at most kHistBlocksPerSm per SM (derive's bound). A grid of kHistBlocksPerSm blocks per SM where the
// kernel's registers let fewer stay resident ran the last part as a second, partial wave. Cached per device;
// a negative value is an error code.
template <typename U, int kKind, typename P>
int histogram_grid() {
  static int per_device[host::kMaxDevices];
  int& cached = per_device[host::current_device()];
  if (!cached) {
    int per_sm = 0;
    int rc = host::cuda_check(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, histogram_kernel<U, kKind, P>, P::kHistThreads, 0),
        "occupancy(radix sort histogram)");
    if (rc) return -rc;
    per_sm = per_sm < 1 ? 1 : per_sm < P::kHistBlocksPerSm ? per_sm : P::kHistBlocksPerSm;
    cached = per_sm * host::sm_count();
  }
  return cached;
}

template <typename T>
int copy(T* dst, const T* src, long long n, cudaStream_t s) {
  if (dst == src || n == 0) return 0;
  return host::cuda_check(cudaMemcpyAsync(dst, src, (size_t)n * sizeof(T), cudaMemcpyDeviceToDevice, s),
                          "radix sort copy");
}

// The per-row onesweep kernel (sort_rows): instantiated for 4-byte values only (the rows' positions), so a build
// compiles twelve more onesweep kernels, not sixty.
template <typename U, int kKind, typename V, typename P, bool kFour = Payload<V>::kBytes == 4>
struct RowsKernel {
  typedef void (*K)(const U*, U*, const V*, V*, long long, unsigned, Digits<U, kKind>, const unsigned*, int,
                    unsigned long long*, unsigned*, const unsigned*, int, int);
  static K get() { return onesweep_kernel<U, kKind, V, P, true>; }
};
template <typename U, int kKind, typename V, typename P>
struct RowsKernel<U, kKind, V, P, false> {
  typedef void (*K)(const U*, U*, const V*, V*, long long, unsigned, Digits<U, kKind>, const unsigned*, int,
                    unsigned long long*, unsigned*, const unsigned*, int, int);
  static K get() { return 0; }
};

template <typename U, int kKind, typename V, typename P>
int sort(const U* keys_in, U* keys_out, U* keys_alt, const V* vals_in, V* vals_out, V* vals_alt, long long n, int begin,
         int end, bool descending, void* ws, size_t ws_bytes, int* selector, cudaStream_t s, long long rows = 1,
         bool columns = false) {
  // rows > 1: n / rows keys a row, each row sorted on its own (sort_rows): a tile never straddles two rows, each
  // row has its own digit counts and its look-back stops at its first tile.
  // columns (rows > 1, 4-byte values, out of place): the values are each key's column in its row, made by the
  // first pass (vals_in unread), and the last pass writes them as 64-bit integers to vals_out, which holds n of
  // them (the passes before use it as a buffer of n 4-byte values: the last pass never reads it)
  typedef Shape<P> S;
  const bool pairs = Payload<V>::kBytes != 0;
  Digits<U, kKind> dg;
  dg.flip = descending ? (U) ~(U)0 : (U)0;
  dg.shift = 0;
  dg.mask = 0;
  const int passes = S::passes(begin, end);
  if (selector) *selector = 0;
  if (n == 0) return 0;
  if (columns && (rows <= 1 || selector || Payload<V>::kBytes != 4 || passes == 0))
    return host::fail(MUH_ERR_ARGUMENT,
                      "muh_argsort_rows: %lld rows, bits [%d, %d): made columns need two rows or "
                      "more and at least one bit",
                      rows, begin, end);
  if (passes == 0) {  // no bits to sort by: the keys as they are
    if (selector) return 0;
    int rc = copy(keys_out, keys_in, n, s);
    return rc || !pairs ? rc : copy(vals_out, vals_in, n, s);
  }
  const long long cols = rows > 1 ? n / rows : n;
  const int row_passes = passes * (int)(rows > 1 ? rows : 1);  // counts blocks: a pass of a row each
  // where the look-back words start: after counts for kMaxPasses passes a row, whatever this sort's bits, so that
  // the words of every sort on this workspace (of any key type or bit range, of this row count) lie in one place
  // and never where another sort's counts were (a count read as a look-back word could carry a valid epoch)
  const int layout = kMaxPasses * (int)(rows > 1 ? rows : 1);
  if (rows <= 1 && n <= S::kSingle) {  // one block, every pass (digits of the single-tile policy's bits)
    typedef SingleSmem<U, V, P::kSingleThreads, P::kSingleItems, P::kSingleBits> Smem;
    const int single_passes = (end - begin + P::kSingleBits - 1) / P::kSingleBits;
    void (*k)(const U*, U*, const V*, V*, int, Digits<U, kKind>, int, int, int) = single_tile_kernel<U, kKind, V, P>;
    static int done_single[host::kMaxDevices];
    int rc = allow_smem(k, (int)Smem::kBytes, done_single);
    if (rc) return rc;
    k<<<1, P::kSingleThreads, Smem::kBytes, s>>>(keys_in, keys_out, vals_in, vals_out, (int)n, dg, begin, end,
                                                 single_passes);
    if (selector) *selector = 1;
    return host::launch_check("radix sort (single tile)");
  }
  if (!selector && passes > 1 && (!keys_alt || (pairs && !vals_alt)))
    return host::fail(MUH_ERR_ARGUMENT, "muh_radix_sort: %d passes need the alternate buffer(s) of %lld elements",
                      passes, n);
  const long long tiles_per_row = S::tiles(cols), tiles = tiles_per_row * (rows > 1 ? rows : 1);
  if (ws_bytes < Workspace::bytes(tiles, layout, S::kRadix))
    return host::fail(MUH_ERR_ARGUMENT, "muh_radix_sort: workspace of %zu bytes, need %zu (muh_radix_sort_workspace)",
                      ws_bytes, Workspace::bytes(tiles, layout, S::kRadix));
  int rc = host::cuda_check(
      cudaMemsetAsync(static_cast<char*>(ws) + 64, 0, Workspace::status_offset(layout, S::kRadix) - 64, s),
      "radix sort workspace clear");
  if (rc) return rc;
  unsigned* counts = Workspace::counts(ws);
  {
    enum { kHistTile = P::kHistThreads * P::kHistItems };
    // one wave of resident blocks striding over the tiles
    const int cap = histogram_grid<U, kKind, P>();
    if (cap < 0) return -cap;
    const long long want = (cols + kHistTile - 1) / kHistTile, nrows = rows > 1 ? rows : 1;
    const long long per_row = cap / nrows > 0 ? cap / nrows : 1;
    const dim3 grid((unsigned)(want < per_row ? want : per_row), (unsigned)nrows);
    histogram_kernel<U, kKind, P><<<grid, P::kHistThreads, 0, s>>>(keys_in, cols, dg, begin, end, passes, counts);
    if ((rc = host::launch_check("radix sort histogram"))) return rc;
    exclusive_sum_kernel<P><<<row_passes, P::kScanThreads, 0, s>>>(counts, Workspace::epoch(ws), passes, cols);
    if ((rc = host::launch_check("radix sort exclusive sum"))) return rc;
  }
  typedef OnesweepSmem<U, V, P::kThreads, P::kItems, P::kBits> Smem;
  typedef typename RowsKernel<U, kKind, V, P>::K Kernel;
  const Kernel k = rows > 1 ? RowsKernel<U, kKind, V, P>::get() : onesweep_kernel<U, kKind, V, P, false>;
  if (!k)
    return host::fail(MUH_ERR_ARGUMENT, "muh_radix_sort_rows: values of %d bytes (a sort of rows moves 4-byte values)",
                      (int)Payload<V>::kBytes);
  static int done[host::kMaxDevices], done_rows[host::kMaxDevices];
  if ((rc = allow_smem(k, (int)Smem::kBytes, rows > 1 ? done_rows : done))) return rc;
  // pass p writes to the buffer that makes the last pass land in keys_out (out of place), or alternates
  // (double buffer)
  const U* src = keys_in;
  const V* vsrc = vals_in;
  for (int p = 0; p < passes; ++p) {
    U* dst;
    V* vdst;
    if (selector) {
      const bool to_out = (p & 1) == 0;
      dst = to_out ? keys_out : const_cast<U*>(keys_in);
      vdst = to_out ? vals_out : const_cast<V*>(vals_in);
    } else {
      const bool to_out = ((passes - 1 - p) & 1) == 0;
      dst = to_out ? keys_out : keys_alt;
      vdst = to_out ? vals_out : vals_alt;
    }
    k<<<(unsigned)tiles, P::kThreads, Smem::kBytes, s>>>(
        src, dst, vsrc, vdst, cols, (unsigned)tiles_per_row, dg.template pass<P::kBits>(begin, end, p),
        counts + (size_t)p * S::kRadix, passes * S::kRadix, Workspace::status(ws, layout, S::kRadix),
        Workspace::counters(ws) + p, Workspace::epoch(ws), passes - 1 - p,
        (columns && p == 0 ? kMadeColumns : 0) | (columns && p == passes - 1 ? kWideOut : 0));
    if ((rc = host::launch_check("radix sort onesweep"))) return rc;
    src = dst;
    vsrc = vdst;
  }
  if (selector) *selector = (passes & 1) ? 1 : 0;
  return 0;
}

}  // namespace radix_sort MUH_LIBRARY_LOCAL
}  // namespace muh
#endif  // MUH_WARP_HAS_MATCH
