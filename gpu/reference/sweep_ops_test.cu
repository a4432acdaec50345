// Tests of the validation sweep's device helpers (gpu/sweep_ops) against their host counterparts.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/reference/sweep_ops.hpp"
#include "gpu/runtime/test_device.hpp"
#include "validation/compare.hpp"
#include "validation/data.hpp"

using namespace fftconv;

namespace {

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("fill_normal_device draws the host's counter-based normals") {
    FFTCONV_SKIP_WITHOUT_DEVICE("sweep_ops");
    for (int64_t n : {int64_t(1), int64_t(7), int64_t(1000), int64_t(1) << 20}) {
      std::vector<float> host(static_cast<std::size_t>(n));
      fill_normal_parallel(host, 1234 + uint64_t(n));
      DeviceBuffer d(std::size_t(n) * sizeof(float));
      fill_normal_device(d.as<float>(), n, 1234 + uint64_t(n));
      const std::vector<float> dev = download<float>(d, std::size_t(n));
      int64_t differ = 0;
      double sum = 0, sq = 0;
      for (std::size_t i = 0; i < host.size(); ++i) {
        // Device and host libm may differ in the last bit of log/sin/cos (counter_rng.hpp).
        if (dev[i] != host[i]) {
          ++differ;
          CHECK(std::abs(dev[i] - host[i]) <= 2 * std::numeric_limits<float>::epsilon() * std::abs(host[i]));
        }
        sum += dev[i], sq += double(dev[i]) * dev[i];
      }
      INFO("n=", n, " differing=", differ);
      CHECK(differ <= 1 + n / 100000);
      if (n >= 1000) {
        CHECK(std::abs(sum / double(n)) < 5.0 / std::sqrt(double(n)));
        CHECK(std::abs(sq / double(n) - 1.0) < 0.2);
      }
    }
  }

  TEST_CASE("error_sums_device and dot_device equal the host comparison, bit for bit on repeat") {
    FFTCONV_SKIP_WITHOUT_DEVICE("sweep_ops");
    const int64_t n = 300007;
    std::vector<float> out(static_cast<std::size_t>(n));
    fill_normal_parallel(out, 5);
    std::vector<double> ref(out.begin(), out.end());
    for (std::size_t i = 0; i < ref.size(); i += 3) ref[i] += 1e-3 * double(i % 7);
    out[10] = std::numeric_limits<float>::quiet_NaN();  // an unwritten element
    ref[20] = std::numeric_limits<double>::infinity();  // a non-finite reference value
    const DeviceBuffer dout = upload(out), dref = upload(ref);
    const DeviceErrorSums a = error_sums_device(dout.as<float>(), dref.as<double>(), n);
    const DeviceErrorSums b = error_sums_device(dout.as<float>(), dref.as<double>(), n);
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
    CHECK(a.counts[0] == 1);
    CHECK(a.counts[1] == 1);
    ErrorSums s;
    s.sq_diff = a.sums[0], s.sq_ref = a.sums[1], s.max_diff = a.sums[2], s.max_ref = a.sums[3];
    s.nonfinite = a.counts[0], s.ref_nonfinite = a.counts[1];
    const ErrorStats dev = error_stats(s), host = compare(out.data(), ref.data(), n);
    CHECK(dev.nonfinite == host.nonfinite);
    CHECK(dev.ref_nonfinite == host.ref_nonfinite);
    CHECK(dev.rel_l2 == doctest::Approx(host.rel_l2).epsilon(1e-12));
    CHECK(dev.max_abs_rel == host.max_abs_rel);
    CHECK(dev.ref_norm == doctest::Approx(host.ref_norm).epsilon(1e-12));

    std::vector<float> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
    fill_normal_parallel(x, 8);
    fill_normal_parallel(y, 9);
    const DeviceBuffer dx = upload(x), dy = upload(y);
    const double d1 = dot_device(dx.as<float>(), dy.as<float>(), n), d2 = dot_device(dx.as<float>(), dy.as<float>(), n);
    CHECK(std::memcmp(&d1, &d2, sizeof d1) == 0);
    CHECK(d1 == doctest::Approx(dot(x.data(), y.data(), n)).epsilon(1e-12));
    CHECK(dot_device(dx.as<float>(), dx.as<float>(), 0) == 0.0);
  }
}
