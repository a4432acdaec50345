// ChoiceCache (see choice_cache.hpp): an in-memory map under a mutex plus a JSON file
// {"format": F, "version": 1, "entries": {key: value}}.
#include "gpu/runtime/choice_cache.hpp"

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "common/atomic_write.hpp"
#include "common/backend.hpp"
#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/launch_shape.hpp"

namespace fftconv {
namespace {

constexpr int kVersion = 1;
constexpr const char* kChoicesFile = "device-choices.json";

bool has_file(const std::string& file) { return !file.empty() && file != "none"; }

// Entries of `file` as JSON texts; empty when the file does not exist. Throws InvalidArgument when
// it is malformed or of another format.
std::map<std::string, std::string> load(const std::string& file, const std::string& format) {
  std::map<std::string, std::string> out;
  std::ifstream in(file);
  if (!in) return out;
  std::stringstream text;
  text << in.rdbuf();
  try {
    const auto j = nlohmann::json::parse(text.str());
    if (j.at("format").get<std::string>() != format || j.at("version").get<int>() != kVersion)
      throw InvalidArgument("tune_cache: file '" + file + "' has an unknown format or version (expected " + format +
                            " version " + std::to_string(kVersion) + ")");
    for (const auto& [key, value] : j.at("entries").items()) out[key] = value.dump();
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument("tune_cache: file '" + file + "' is not a valid " + format + " file: " + e.what());
  }
  return out;
}

}  // namespace

std::optional<std::string> ChoiceCache::find(const std::string& key, const std::string& file) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = memory_.find(key); it != memory_.end()) return it->second;
  if (!has_file(file)) return std::nullopt;
  const auto entries = load(file, format_);
  for (const auto& [k, v] : entries) memory_.emplace(k, v);
  if (auto it = entries.find(key); it != entries.end()) return it->second;
  return std::nullopt;
}

void ChoiceCache::store(const std::string& key, const std::string& json, const std::string& file) {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_[key] = json;
  if (!has_file(file)) return;
  auto entries = load(file, format_);
  entries[key] = json;
  nlohmann::json doc{{"format", format_}, {"version", kVersion}, {"entries", nlohmann::json::object()}};
  for (const auto& [k, v] : entries) doc["entries"][k] = nlohmann::json::parse(v);
  if (const std::string why = write_file_atomically(file, doc.dump(2) + "\n"); !why.empty())
    throw InvalidArgument("tune_cache: " + why);
}

void ChoiceCache::clear_memory() {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_.clear();
}

std::string choices_file(const std::string& tune_cache) { return beside_tune_cache(tune_cache, kChoicesFile); }

ChoiceCache& device_choices() {
  static ChoiceCache c("fftconv-device-choices");
  return c;
}

std::string current_device_name() {
  // cudaGetDeviceProperties reads every attribute: once a device for the process.
  return once_per_device<std::string>([](int dev) {
    cudaDeviceProp prop{};
    FFTCONV_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    return std::string(prop.name);
  });
}

}  // namespace fftconv
