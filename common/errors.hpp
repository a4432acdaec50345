// The error hierarchy of fftconv: every host-side failure is one of these, and
// each message names the field or call and the offending value.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

namespace fftconv {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A ConvProblem (or spec string) that describes no valid convolution.
class InvalidProblem : public Error {
 public:
  using Error::Error;
};

// A malformed option or argument that is not part of the problem (tile spec, backend name, ...).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A valid request that this backend/plan cannot serve (with the reason).
class Unsupported : public Error {
 public:
  using Error::Error;
};

// An allocation failed; bytes() is what was asked for.
class OutOfMemory : public Error {
 public:
  OutOfMemory(const std::string& what, std::size_t bytes) : Error(what), bytes_(bytes) {}
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
};

// A CUDA, cuFFT, cuBLAS or cuDNN call failed.
class CudaError : public Error {
 public:
  using Error::Error;
};

// Throws InvalidArgument("<who>: <field>=<value> <why>"), the message form of every argument check.
[[noreturn]] inline void throw_invalid_argument(const std::string& who, const std::string& field, long long value,
                                                const std::string& why) {
  throw InvalidArgument(who + ": " + field + "=" + std::to_string(value) + " " + why);
}

}  // namespace fftconv
