// Validation records as JSON lines and their summary (see report.hpp).
#include "validation/report.hpp"

#include <fftw3.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/errors.hpp"
#include "validation/tolerance.hpp"

#ifdef FFTCONV_HAVE_CUDA
#include <cuda_runtime.h>
#include <cufft.h>
#endif

namespace fftconv {

using nlohmann::json;

std::string Record::key() const { return spec + "|" + pass + "|" + backend + "|" + tile; }

namespace {
// JSON has no infinity or NaN: write them as strings, read them back.
json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
double number_from(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto s = j.get<std::string>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return std::numeric_limits<double>::quiet_NaN();
}
std::string fmt(double v, const char* f = "%.3g") {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
}  // namespace

std::string to_json_line(const Record& r) {
  json j = {{"set", r.set},       {"label", r.label},         {"spec", r.spec},
            {"pass", r.pass},     {"backend", r.backend},     {"tile", r.tile},
            {"status", r.status}, {"reason", r.reason},       {"rel_l2", number(r.rel_l2)},
            {"max_abs_rel", number(r.max_abs_rel)},           {"tol_rel_l2", number(r.tol_rel_l2)},
            {"tol_max_abs_rel", number(r.tol_max_abs_rel)},   {"basis", r.basis},
            {"nonfinite", r.nonfinite},                       {"time_ms", number(r.time_ms)},
            {"plan_ms", number(r.plan_ms)},                   {"ref", r.ref},
            {"ref_ms", number(r.ref_ms)},                     {"describe", r.describe},
            {"data_seed", r.data_seed},                       {"shard", r.shard}};
  if (!r.math.empty()) j["math"] = r.math;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Record record_from_json(const std::string& line) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception& e) {
    throw InvalidArgument(std::string("results: malformed JSON line: ") + e.what());
  }
  if (!j.is_object() || !j.contains("spec") || !j.contains("pass") || !j.contains("backend"))
    throw InvalidArgument("results: line lacks spec/pass/backend: " + line.substr(0, 120));
  auto str = [&](const char* k) { return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string(); };
  auto num = [&](const char* k) { return j.contains(k) ? number_from(j[k]) : 0.0; };
  // Integer fields take JSON integers only: converting a float such as 1.8e26 to an integer is
  // undefined behaviour (found by fuzz_resume).
  auto i64 = [&](const char* k) { return j.contains(k) && j[k].is_number_integer() ? j[k].get<int64_t>() : int64_t(0); };
  Record r;
  r.set = str("set"); r.label = str("label"); r.spec = str("spec"); r.pass = str("pass");
  r.backend = str("backend"); r.tile = j.contains("tile") ? str("tile") : "none";
  r.status = str("status"); r.reason = str("reason");
  r.rel_l2 = num("rel_l2"); r.max_abs_rel = num("max_abs_rel");
  r.tol_rel_l2 = num("tol_rel_l2"); r.tol_max_abs_rel = num("tol_max_abs_rel");
  r.basis = i64("basis"); r.nonfinite = i64("nonfinite");
  r.time_ms = num("time_ms"); r.plan_ms = num("plan_ms"); r.ref_ms = num("ref_ms");
  r.ref = str("ref"); r.describe = str("describe"); r.shard = str("shard"); r.math = str("math");
  r.data_seed = j.contains("data_seed") && j["data_seed"].is_number_unsigned() ? j["data_seed"].get<uint64_t>() : 0;
  return r;
}

std::vector<Record> read_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<Record> out;
  if (!in) return out;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, std::size_t> where;
  for (std::size_t start = 0, number = 1; start < text.size(); ++number) {
    const std::size_t end = text.find('\n', start);
    const bool last_unterminated = end == std::string::npos;
    const std::string line = text.substr(start, last_unterminated ? std::string::npos : end - start);
    start = last_unterminated ? text.size() : end + 1;
    if (line.empty()) continue;
    Record r;
    try {
      r = record_from_json(line);
    } catch (const InvalidArgument&) {
      if (last_unterminated) break;  // cut off mid-write: the resumed run drops it and redoes it
      throw InvalidArgument("results: " + path + ":" + std::to_string(number) + " is not a validation record");
    }
    auto [it, fresh] = where.emplace(r.key(), out.size());
    if (fresh) out.push_back(std::move(r));
    else out[it->second] = std::move(r);
  }
  return out;
}

Summary summarize(const std::vector<Record>& records) {
  Summary s;
  for (const Record& r : records) {
    // tf32 products have their own tolerance (Note [tf32 tolerance]): their own summary line.
    SummaryCell& c =
        s.cells[r.backend + (r.tile != "none" ? " tile=" + r.tile : "") + (r.math == "tf32" ? " math=tf32" : "")][r.pass];
    ++s.records;
    ++c.count;
    if (r.status == "skipped") { ++c.skipped; ++s.skipped; continue; }
    c.total_ms += std::isfinite(r.time_ms) ? r.time_ms : 0;
    if (r.failed()) {
      ++c.failures;
      ++s.failures;
      if (c.worst_fail.empty()) c.worst_fail = r.spec + ": " + r.reason;
    }
    const double e = std::isnan(r.rel_l2) ? std::numeric_limits<double>::infinity() : r.rel_l2;
    if (e > c.worst_rel_l2) { c.worst_rel_l2 = e; c.worst_spec = r.spec; }
    if (r.tol_rel_l2 > 0) c.worst_ratio = std::max(c.worst_ratio, e / r.tol_rel_l2);
  }
  return s;
}

namespace {
std::vector<std::vector<std::string>> table_rows(const Summary& s) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"backend", "pass", "count", "failures", "skipped", "worst rel_l2", "worst/tol", "time s",
                  "worst spec"});
  for (const auto& [backend, passes] : s.cells)
    for (const char* pass : {"fprop", "bprop", "accgrad", "adjoint"}) {
      auto it = passes.find(pass);
      if (it == passes.end()) continue;
      const SummaryCell& c = it->second;
      rows.push_back({backend, pass, std::to_string(c.count), std::to_string(c.failures), std::to_string(c.skipped),
                      c.worst_rel_l2 < 0 ? "-" : fmt(c.worst_rel_l2), c.worst_ratio < 0 ? "-" : fmt(c.worst_ratio, "%.2f"),
                      fmt(c.total_ms / 1e3, "%.1f"), c.worst_spec.empty() ? "-" : c.worst_spec});
    }
  return rows;
}
}  // namespace

std::string summary_table(const Summary& s) {
  const auto rows = table_rows(s);
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  std::ostringstream o;
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size(); ++i) {
      o << r[i];
      if (i + 1 < r.size()) o << std::string(width[i] - r[i].size() + 2, ' ');
    }
    o << "\n";
  }
  o << s.records << " records, " << s.failures << " failures, " << s.skipped << " skipped\n";
  return o.str();
}

std::string summary_markdown(const Summary& s, const std::vector<Record>& records, const std::string& title,
                             const std::vector<std::string>& environment) {
  std::ostringstream o;
  o << "# " << title << "\n\n";
  for (const auto& e : environment) o << "- " << e << "\n";
  o << "- tolerance: `" << tolerance_formula() << "`\n";
  o << "- result: " << s.records << " records, " << s.failures << " failures, " << s.skipped << " skipped"
    << (s.ok() ? " — **all checks pass**" : " — **FAILURES**") << "\n\n";
  const auto rows = table_rows(s);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    o << "|";
    for (std::size_t c = 0; c < rows[i].size(); ++c)
      o << " " << (c + 1 == rows[i].size() && i > 0 && rows[i][c] != "-" ? "`" + rows[i][c] + "`" : rows[i][c]) << " |";
    o << "\n";
    if (i == 0) {
      o << "|";
      for (std::size_t c = 0; c < rows[i].size(); ++c) o << (c >= 2 && c <= 7 ? " ---: |" : " --- |");
      o << "\n";
    }
  }
  int shown = 0;
  for (const Record& r : records) {
    if (!r.failed()) continue;
    if (shown == 0) o << "\n## Failures\n\n";
    if (++shown > 50) { o << "- ... (" << s.failures - 50 << " more)\n"; break; }
    o << "- " << r.backend << " " << r.pass << " tile=" << r.tile << " `" << r.spec << "`: " << r.status << ", rel_l2 "
      << fmt(r.rel_l2) << " (tol " << fmt(r.tol_rel_l2) << ")" << (r.reason.empty() ? "" : ", " + r.reason) << "\n";
  }
  return o.str();
}

std::vector<std::string> environment_lines() {
  std::vector<std::string> out;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) out.push_back(std::string("host: ") + host);
#if defined(__clang__)
  out.push_back("compiler: clang " __clang_version__);
#elif defined(__GNUC__)
  out.push_back("compiler: g++ " __VERSION__);
#endif
  out.push_back(std::string("FFTW: ") + fftw_version);
#ifdef FFTCONV_HAVE_CUDA
  int dev = 0, n = 0, drv = 0, rt = 0, cufft = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0 && cudaGetDevice(&dev) == cudaSuccess) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
      out.push_back("device " + std::to_string(dev) + " of " + std::to_string(n) + ": " + prop.name + " (sm_" +
                    std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
                    std::to_string(prop.totalGlobalMem >> 20) + " MiB)");
  } else {
    (void)cudaGetLastError();
    out.push_back("device: none");
  }
  if (cudaDriverGetVersion(&drv) == cudaSuccess) out.push_back("CUDA driver: " + std::to_string(drv));
  if (cudaRuntimeGetVersion(&rt) == cudaSuccess) out.push_back("CUDA runtime: " + std::to_string(rt));
  if (cufftGetVersion(&cufft) == CUFFT_SUCCESS) out.push_back("cuFFT: " + std::to_string(cufft));
#else
  out.push_back("CUDA: not built");
#endif
  return out;
}

std::string markdown_path_for(const std::string& p) {
  const auto dot = p.rfind('.'), slash = p.rfind('/');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) return p.substr(0, dot) + ".md";
  return p + ".md";
}

}  // namespace fftconv
