// Element types, accumulator types, conversions, reduction operators. C++14, CUDA 10.2 subset.
#pragma once

#include <cuda_fp16.h>
#include <climits>
#include <string.h>

namespace muh {

// bfloat16 as plain 16-bit storage (CUDA 10.2 toolchains have no bfloat16 header).
struct bf16 {
  unsigned short bits;
};

template <typename T>
struct Acc {
  typedef T type;
};
template <>
struct Acc<__half> {
  typedef float type;
};
template <>
struct Acc<bf16> {
  typedef float type;
};

template <typename A, typename T>
struct Cvt {
  static __device__ __forceinline__ A in(T v) { return (A)v; }
  static __device__ __forceinline__ T out(A v) { return (T)v; }
};
template <>
struct Cvt<float, __half> {
  static __device__ __forceinline__ float in(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half out(float v) { return __float2half_rn(v); }
};
template <>
struct Cvt<float, bf16> {
  static __device__ __forceinline__ float in(bf16 v) {
    unsigned u = ((unsigned)v.bits) << 16;
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
  }
  static __device__ __forceinline__ bf16 out(float f) {
    bf16 r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    // one instruction (round to nearest even, NaN stays NaN) where the ISA has it: the bit-twiddling
    // below made bfloat16 rms_norm compute-bound on the H200 (66 % of copy vs 97 % for float16)
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.bits) : "f"(f));
    return r;
#endif
    unsigned u;
    memcpy(&u, &f, sizeof(u));
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      r.bits = (unsigned short)((u >> 16) | 0x40u);  // quiet NaN
    } else {
      u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
      r.bits = (unsigned short)(u >> 16);
    }
    return r;
  }
};

template <typename T>
struct Limits;
template <>
struct Limits<float> {
  static __device__ __forceinline__ float lowest() { return -__int_as_float(0x7f800000); }
  static __device__ __forceinline__ float highest() { return __int_as_float(0x7f800000); }
};
template <>
struct Limits<double> {
  static __device__ __forceinline__ double lowest() { return -__longlong_as_double(0x7ff0000000000000LL); }
  static __device__ __forceinline__ double highest() { return __longlong_as_double(0x7ff0000000000000LL); }
};
template <>
struct Limits<int> {
  static __device__ __forceinline__ int lowest() { return INT_MIN; }
  static __device__ __forceinline__ int highest() { return INT_MAX; }
};
template <>
struct Limits<long long> {
  static __device__ __forceinline__ long long lowest() { return LLONG_MIN; }
  static __device__ __forceinline__ long long highest() { return LLONG_MAX; }
};

struct Sum {
  template <typename A>
  static __device__ __forceinline__ A identity() {
    return A(0);
  }
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a + b;
  }
};
struct Max {
  template <typename A>
  static __device__ __forceinline__ A identity() {
    return Limits<A>::lowest();
  }
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return b > a ? b : a;
  }
};
struct Min {
  template <typename A>
  static __device__ __forceinline__ A identity() {
    return Limits<A>::highest();
  }
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return b < a ? b : a;
  }
};

// Raw loads of kBytes (1 element or a vector of elements) with or without the read-only path.
template <int kBytes>
struct Raw;
template <>
struct Raw<2> {
  typedef unsigned short type;
};
template <>
struct Raw<4> {
  typedef unsigned type;
};
template <>
struct Raw<8> {
  typedef uint2 type;
};
template <>
struct Raw<16> {
  typedef uint4 type;
};

template <typename T, int kVec, bool kLdg>
__device__ __forceinline__ void load_vec(const T* p, T (&out)[kVec]) {
  typedef typename Raw<sizeof(T) * kVec>::type R;
  R r = kLdg ? __ldg(reinterpret_cast<const R*>(p)) : *reinterpret_cast<const R*>(p);
  memcpy(out, &r, sizeof(R));
}

template <typename T, int kVec>
__device__ __forceinline__ void store_vec(T* p, const T (&in)[kVec]) {
  typedef typename Raw<sizeof(T) * kVec>::type R;
  R r;
  memcpy(&r, in, sizeof(R));
  *reinterpret_cast<R*>(p) = r;
}

}  // namespace muh
