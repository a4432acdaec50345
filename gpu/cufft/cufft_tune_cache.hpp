// The autotuner's cache of winners: an in-memory map shared by every plan of the process, and
// optionally a JSON file (PlanOptions::tune_cache, `--tune-cache PATH`) that survives the process.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace fftconv {

// One autotuned choice for one (device, problem, pass, limit, pins) key.
struct TuneRecord {
  int64_t nh = 0, nw = 0;
  std::string gemm;                 // "batched" | "strided" | "loop" | "3m"
  int64_t chunk = 0;
  std::size_t cublas_workspace = 0;
  std::string layout = "transposed";  // SpectrumLayout; files written before it existed mean transposed
  std::string edges = "copy";         // EdgeMode; likewise
  std::string weights = "fft";        // WeightTransform; likewise
  std::string math = "fp32";          // ProductMath; likewise
  double ms = 0.0;                  // the winner's time when it was tuned
  bool operator==(const TuneRecord&) const = default;
};

class TuneCache {
 public:
  // The process-wide cache (thread-safe).
  static TuneCache& instance();
  // Memory first, then `file` unless it is empty or "none" (its entries are then kept in memory too).
  // Throws InvalidArgument naming tune_cache when the file exists but is not a valid cache.
  std::optional<TuneRecord> find(const std::string& key, const std::string& file);
  // Stores in memory, and merges into `file` unless it is empty or "none" (written to PATH.tmp, then
  // renamed).
  void store(const std::string& key, const TuneRecord& rec, const std::string& file);
  // Forgets the in-memory entries (tests use it to prove a file round-trip).
  void clear_memory();
};

}  // namespace fftconv
