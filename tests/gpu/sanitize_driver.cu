// Runs every generated kernel once per dtype on small inputs, for compute-sanitizer.
// Built by tests/gpu/test_sanitizer.py with the generated sources; exits non-zero on any error.
// Optional argument: `all` (default), `scan` (the scan kernels only) or `noscan` (all but scan).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/kernels/api.h"

#define CHECK(x)                                                                  \
  do {                                                                            \
    int rc_ = (x);                                                                \
    if (rc_) {                                                                    \
      fprintf(stderr, "%s failed (%d): %s\n", #x, rc_, muh_last_error());         \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

int main(int argc, char** argv) {
  const char* only = argc > 1 ? argv[1] : "all";
  const int do_scan = strcmp(only, "noscan") != 0, do_rest = strcmp(only, "scan") != 0;
  const long long n = 20000;  // several scan tiles for every policy: the look-back runs
  const int rows = 3, cols = 3001, k = 37;
  const int long_rows = 2, long_cols = 40000;  // several slices per row: the split top-k path runs
  size_t elems = (size_t)(n > rows * cols ? n : rows * cols);
  if ((size_t)long_rows * long_cols > elems) elems = (size_t)long_rows * long_cols;
  const size_t bytes = 8 * elems;
  unsigned char* host = (unsigned char*)malloc(bytes);
  for (size_t i = 0; i < bytes; ++i) host[i] = (unsigned char)((i * 2654435761u) >> 7) & 0x3f;
  void *in, *out, *ws, *sws;
  long long* idx;
  cudaMalloc(&in, bytes);
  cudaMalloc(&out, bytes);
  cudaMalloc(&idx, sizeof(long long) * (rows > long_rows ? rows : long_rows) * k);
  cudaMemcpy(in, host, bytes, cudaMemcpyHostToDevice);
  size_t wsb = muh_reduce_workspace_bytes();
  cudaMalloc(&ws, wsb);
  cudaMemset(ws, 0, wsb);
  size_t swsb = 1 << 20;
  cudaMalloc(&sws, swsb);
  cudaMemset(sws, 0, swsb);
  unsigned epoch = 1;
  for (int dt = 0; dt < 6; ++dt) {
    for (int op = 0; do_rest && op < 3; ++op) {
      int rc = muh_reduce(op, dt, in, n, out, ws, wsb, 0);
      if (rc && rc != MUH_ERR_UNSUPPORTED) CHECK(rc);
      rc = muh_transform(op, dt, in, out, n, 0.5f, 0);
      if (rc && rc != MUH_ERR_UNSUPPORTED) CHECK(rc);
    }
    for (int ex = 0; do_scan && ex < 2; ++ex) {
      int rc = muh_scan(ex, dt, in, out, n, sws, swsb, epoch++, 0);
      if (rc && rc != MUH_ERR_UNSUPPORTED) CHECK(rc);
    }
    if (!do_rest) continue;
    int rc = muh_topk(dt, in, rows, cols, k, out, idx, 0);
    if (rc && rc != MUH_ERR_UNSUPPORTED) CHECK(rc);
    rc = muh_topk(dt, in, long_rows, long_cols, k, out, idx, 0);
    if (rc && rc != MUH_ERR_UNSUPPORTED) CHECK(rc);
  }
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    fprintf(stderr, "sync: %s\n", cudaGetErrorString(e));
    return 1;
  }
  printf("sanitize driver: %s kernels ran\n", only);
  return 0;
}
