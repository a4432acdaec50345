// Out of device memory is an OutOfMemory error, and the device stays usable (doctest suite "gpu";
// skipped without a device), plus what cuda_device_support() says on a host without one.
#include <doctest/doctest.h>

#include <string>

#include "common/errors.hpp"
#include "gpu/backends.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/test_device.hpp"
#include "validation/data.hpp"

using namespace fftconv;

namespace {
// fprop of `plan` on device tensors, synchronized.
void run_fprop(const Plan& plan, const DeviceBuffer& x, const DeviceBuffer& w, const DeviceBuffer& y) {
  Args a;
  a.input = x.get();
  a.weight = w.get();
  a.result = y.get();
  plan.execute(a);
  FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
}
}  // namespace

TEST_CASE("cuda_device_support: a host without a GPU reads 'no CUDA device'") {
  const Support s = cuda_device_support();
  if (!nvidia_device_node_present()) {
    CHECK_FALSE(s.ok);
    CHECK(s.reason == "no CUDA device");
  } else if (!s.ok) {
    MESSAGE("device node present but not usable: ", s.reason);
  }
}

TEST_SUITE("gpu") {
TEST_CASE("cufft and fbfft: a problem far beyond device memory throws OutOfMemory; the device goes on working") {
  FFTCONV_SKIP_WITHOUT_DEVICE("out-of-memory");
  // Small operands (at most 151 MB each) but weight spectra of fo*f = 2^22 planes of 128x65
  // frequencies: 279 GB, more than any H100 or H200 holds (128x128: a basis both backends plan untiled).
  const ConvProblem big = ConvProblem::parse("S=1,f=2048,fo=2048,n=128,k=3");
  const ConvProblem small = ConvProblem::parse("S=2,f=3,fo=4,n=12,k=3");
  for (const auto& backend : {make_cufft_backend(), make_fbfft_backend()}) {
    INFO(std::string(backend->name()));
    PlanOptions o;
    o.autotune = false;
    bool threw = false;
    try {
      const auto plan = backend->plan(big, Pass::fprop, o);
      const DeviceBuffer x(std::size_t(big.input_elems()) * 4), w(std::size_t(big.weight_elems()) * 4),
          y(std::size_t(big.output_elems()) * 4);
      run_fprop(*plan, x, w, y);
    } catch (const OutOfMemory& e) {
      threw = true;
      MESSAGE(std::string(e.what()));
    }
    CHECK(threw);
    // The context survived: a small problem plans, runs and writes every output.
    PassData d = make_pass_data(small, Pass::fprop, 3);
    const auto plan = backend->plan(small, Pass::fprop, o);
    const DeviceBuffer x = upload(d.input), w = upload(d.weight), y = upload(d.result);
    run_fprop(*plan, x, w, y);
    CHECK(count_nan(download<float>(y, d.result.size())) == 0);
  }
}
}  // TEST_SUITE
