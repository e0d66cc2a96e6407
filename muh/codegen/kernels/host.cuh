// Host-side helpers shared by the kernel sources: errors, device checks, occupancy.
#pragma once

#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>

#include "muh/kernels/api.h"
#include "muh/warp.cuh"

#include "muh/linkage.cuh"  // MUH_LIBRARY_LOCAL

namespace muh {
namespace host MUH_LIBRARY_LOCAL {

constexpr int kMaxDevices = 64;

constexpr const char* kSpecName = MUH_SPEC_NAME;  // api.h: the spec the library was built from

inline char* error_buffer() {
  static char buf[512];
  return buf;
}

inline int fail(int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(error_buffer(), 512, fmt, ap);
  va_end(ap);
  return code;
}

inline int cuda_check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return MUH_OK;
  return fail(MUH_ERR_CUDA, "muh: %s: %s", what, cudaGetErrorString(e));
}

// The device's warp width must be the hardware warp these kernels were generated for. The attribute is
// asked once per device and process: a match and a mismatch are both remembered (a mismatch answers every
// later call with the same error, without asking the driver again).
inline int check_device() {
  static int seen[kMaxDevices];  // per library and device: 0 unknown, else the device's warp width
  int dev = 0;
  int rc = cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  if (rc) return rc;
  int ws = dev < kMaxDevices ? seen[dev] : 0;
  if (ws == warp::kPhysicalSize) return MUH_OK;
  if (ws == 0) {
    rc = cuda_check(cudaDeviceGetAttribute(&ws, cudaDevAttrWarpSize, dev), "cudaDeviceGetAttribute(warp size)");
    if (rc) return rc;
    if (dev < kMaxDevices) seen[dev] = ws;
  }
  if (ws != warp::kPhysicalSize) {
    return fail(MUH_ERR_WARP,
                "muh: kernels of `%s` were generated for a %d-lane hardware warp (logical warp %d%s), "
                "but device %d has %d-lane warps; regenerate them for this GPU's hardware spec, or build an "
                "emulation variant (--emulate-warp)",
                kSpecName, warp::kPhysicalSize, warp::kSize, warp::kEmulated ? ", emulated" : "", dev, ws);
  }
  return MUH_OK;
}

// Cache slot of the current device (devices beyond kMaxDevices share the last slot's cache only
// for the SM count and grid sizes, never for the warp check, which then asks every time).
inline int current_device() {
  int dev = 0;
  cudaGetDevice(&dev);
  return dev >= 0 && dev < kMaxDevices ? dev : kMaxDevices - 1;
}

// SMs of the current device (cached per device).
inline int sm_count() {
  static int cached[kMaxDevices];
  int dev = 0;
  cudaGetDevice(&dev);
  const int slot = dev >= 0 && dev < kMaxDevices ? dev : kMaxDevices - 1;
  if (cached[slot] <= 0 || slot != dev) {
    int n = 0;
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    cached[slot] = n > 0 ? n : 1;
  }
  return cached[slot];
}

inline int launch_check(const char* what) { return cuda_check(cudaGetLastError(), what); }

}  // namespace host MUH_LIBRARY_LOCAL
}  // namespace muh
