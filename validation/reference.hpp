// The reference ladder on the host: `direct` in double where affordable, else the fftw pipeline in
// double (itself tested against direct). The GPU rung (a double direct kernel) lives in gpu/.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/problem.hpp"
#include "validation/data.hpp"

namespace fftconv {

enum class RefKind { automatic, direct, fftw64, none };
RefKind parse_ref_kind(std::string_view s);  // "auto" | "direct" | "fftw64" | "none"
std::string_view to_string(RefKind k);
// direct when the time-domain work is at most kDirectMaxMadds multiply-adds, else fftw64.
inline constexpr double kDirectMaxMadds = 2e9;
RefKind resolve_ref(RefKind k, const ConvProblem& p);

// The float64 result of the pass on d's operands (promoted to double), computed with `k`
// (automatic resolved first). Returns empty for RefKind::none.
std::vector<double> reference_result(const ConvProblem& p, Pass pass, const PassData& d, RefKind k);

}  // namespace fftconv
