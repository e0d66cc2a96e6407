// MUH_LIBRARY_LOCAL: the one definition every kernel and host header of a generated library uses.
#pragma once

// Library-private linkage for host state. A static local of an inline (or template) function with
// default visibility is an STB_GNU_UNIQUE symbol under GCC: the dynamic loader merges it across
// every shared library in the process, RTLD_LOCAL or not. Two libmuh_kernels.so of different
// specs in one process (the GPU tests load seven) then shared the warp-check verdict, and the
// BI-V100's native kernels ran on the H200 because the H200's library had already said "fine".
// Hidden visibility keeps one copy per library (merged across its objects at link time).
#ifndef MUH_LIBRARY_LOCAL
#if defined(__GNUC__) || defined(__clang__)
#define MUH_LIBRARY_LOCAL __attribute__((visibility("hidden")))
#else
#define MUH_LIBRARY_LOCAL
#endif
#endif
