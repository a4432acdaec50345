// Eigen for the CPU backends' products. GCC 12 reports '__Y may be used uninitialized' inside its
// own AVX-512 intrinsics (the unpack and permute instructions of Eigen's GEMM packing take a
// deliberately undefined register) when ref/ is built with AVX-512 (Note [AVX-512 in ref],
// ref/CMakeLists.txt): a false positive located in the compiler's header, silenced here only.
// Include this file from .cpp files only: Eigen's packet width and alignment follow the flags of
// ref/, which other targets do not share.
#pragma once
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // GCC's name; clang (the sanitizer build) knows no such group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Core>
#pragma GCC diagnostic pop
