// TuneCache (see cufft_tune_cache.hpp): in-memory map under a mutex plus a JSON file
// {"format": "fftconv-cufft-tune-cache", "version": 1, "entries": {key: record}}.
#include "gpu/cufft/cufft_tune_cache.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "common/atomic_write.hpp"
#include "common/errors.hpp"

namespace fftconv {
namespace {

constexpr const char* kFormat = "fftconv-cufft-tune-cache";
constexpr int kVersion = 1;

std::mutex g_mutex;
std::map<std::string, TuneRecord>& memory() {
  static std::map<std::string, TuneRecord> m;
  return m;
}

nlohmann::json to_json(const TuneRecord& r) {
  return {{"nh", r.nh}, {"nw", r.nw}, {"gemm", r.gemm}, {"chunk", r.chunk},
          {"cublas_workspace", r.cublas_workspace}, {"layout", r.layout}, {"edges", r.edges}, {"weights", r.weights}, {"math", r.math},
          {"ms", r.ms}};
}

TuneRecord from_json(const nlohmann::json& j) {
  TuneRecord r;
  r.nh = j.at("nh").get<int64_t>();
  r.nw = j.at("nw").get<int64_t>();
  r.gemm = j.at("gemm").get<std::string>();
  r.chunk = j.at("chunk").get<int64_t>();
  r.cublas_workspace = j.at("cublas_workspace").get<std::size_t>();
  if (j.contains("layout")) r.layout = j.at("layout").get<std::string>();
  if (j.contains("edges")) r.edges = j.at("edges").get<std::string>();
  if (j.contains("weights")) r.weights = j.at("weights").get<std::string>();
  if (j.contains("math")) r.math = j.at("math").get<std::string>();
  r.ms = j.at("ms").get<double>();
  return r;
}

// Whether `file` names a cache file: empty and "none" keep the winners in memory only.
bool has_file(const std::string& file) { return !file.empty() && file != "none"; }

// Entries of `file`; empty when the file does not exist. Throws InvalidArgument when malformed.
std::map<std::string, TuneRecord> load(const std::string& file) {
  std::map<std::string, TuneRecord> out;
  std::ifstream in(file);
  if (!in) return out;
  std::stringstream text;
  text << in.rdbuf();
  try {
    const auto j = nlohmann::json::parse(text.str());
    if (j.at("format").get<std::string>() != kFormat || j.at("version").get<int>() != kVersion)
      throw InvalidArgument("tune_cache: file '" + file + "' has an unknown format or version");
    for (const auto& [key, rec] : j.at("entries").items()) out[key] = from_json(rec);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument("tune_cache: file '" + file + "' is not a valid tune cache: " + e.what());
  }
  return out;
}

void save(const std::string& file, const std::map<std::string, TuneRecord>& entries) {
  nlohmann::json j{{"format", kFormat}, {"version", kVersion}, {"entries", nlohmann::json::object()}};
  for (const auto& [key, rec] : entries) j["entries"][key] = to_json(rec);
  if (const std::string why = write_file_atomically(file, j.dump(2) + "\n"); !why.empty())
    throw InvalidArgument("tune_cache: " + why);
}

}  // namespace

TuneCache& TuneCache::instance() {
  static TuneCache c;
  return c;
}

std::optional<TuneRecord> TuneCache::find(const std::string& key, const std::string& file) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& mem = memory();
  if (auto it = mem.find(key); it != mem.end()) return it->second;
  if (!has_file(file)) return std::nullopt;
  const auto entries = load(file);
  for (const auto& [k, rec] : entries) mem.emplace(k, rec);
  if (auto it = entries.find(key); it != entries.end()) return it->second;
  return std::nullopt;
}

void TuneCache::store(const std::string& key, const TuneRecord& rec, const std::string& file) {
  std::lock_guard<std::mutex> lock(g_mutex);
  memory()[key] = rec;
  if (!has_file(file)) return;
  auto entries = load(file);
  entries[key] = rec;
  save(file, entries);
}

void TuneCache::clear_memory() {
  std::lock_guard<std::mutex> lock(g_mutex);
  memory().clear();
}

}  // namespace fftconv
