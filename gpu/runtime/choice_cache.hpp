// What the device tuners chose, kept for the process and, beside a plan's tune cache file, for
// later processes (Note [persistent choices]).
#pragma once
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace fftconv {

// Note [persistent choices]
// Every tuner on the device keeps its winners under a key of device name, problem, pass and
// options: cufft's configurations (cufft-tune.json), and fbfft's transform kernels, products and
// stream fork, and the basis and tile choices timed by fastest_plan (device-choices.json). In
// memory they live for the process; when the plan has a tune cache file (PlanOptions::tune_cache,
// which `auto` points into its plan cache folder) they are also written beside it and read back by
// later processes, so a plan that `auto` chose earlier is built there without timing anything.
// Invariant: a key names the device by its name, never its ordinal, and a file's "format" field
// names the kind of entries it holds; a file of another format is an error, not a cache miss. A plan
// `auto` chose earlier took 2.4-4.2 ms in a new process once its device context existed (H200,
// bench/results/h200/auto-tune.json); before, fbfft tuned again there: 0.13-0.67 s, context included.
class ChoiceCache {
 public:
  // `format`: the "format" field of its files.
  explicit ChoiceCache(std::string format) : format_(std::move(format)) {}
  // The entry of `key` as JSON text: memory first, then `file` unless it is empty or "none" (its
  // entries are then kept in memory too). Throws InvalidArgument naming tune_cache when the file
  // exists but is not a valid file of this format.
  std::optional<std::string> find(const std::string& key, const std::string& file);
  // Stores `json` (one JSON value as text) in memory, and merges it into `file` unless that is empty or
  // "none" (written to a temporary file, then renamed).
  void store(const std::string& key, const std::string& json, const std::string& file);
  // Forgets the in-memory entries (tests use it to prove a file round-trip).
  void clear_memory();

 private:
  std::string format_;
  std::mutex mutex_;
  std::map<std::string, std::string> memory_;
};

// The file of the device tuners' choices beside a tune cache file (device-choices.json in its
// folder), or "" when there is none (empty or "none": memory only).
std::string choices_file(const std::string& tune_cache);

// The name of the current CUDA device, for keys that outlive the process (read once a device).
std::string current_device_name();

// The process's cache of fbfft's tuning and of fastest_plan's choices (format
// "fftconv-device-choices", file choices_file(PlanOptions::tune_cache)).
ChoiceCache& device_choices();

}  // namespace fftconv
