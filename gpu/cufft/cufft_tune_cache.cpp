// TuneCache (see cufft_tune_cache.hpp): a ChoiceCache (Note [persistent choices]) of records, whose
// file is {"format": "fftconv-cufft-tune-cache", "version": 1, "entries": {key: record}}.
#include "gpu/cufft/cufft_tune_cache.hpp"

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "gpu/runtime/choice_cache.hpp"

namespace fftconv {
namespace {

constexpr const char* kFormat = "fftconv-cufft-tune-cache";

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

ChoiceCache& choices() {
  static ChoiceCache c(kFormat);
  return c;
}

}  // namespace

TuneCache& TuneCache::instance() {
  static TuneCache c;
  return c;
}

std::optional<TuneRecord> TuneCache::find(const std::string& key, const std::string& file) {
  const std::optional<std::string> text = choices().find(key, file);
  if (!text) return std::nullopt;
  try {
    return from_json(nlohmann::json::parse(*text));
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument("tune_cache: file '" + file + "': entry '" + key + "' is not a cufft tune record: " + e.what());
  }
}

void TuneCache::store(const std::string& key, const TuneRecord& rec, const std::string& file) {
  choices().store(key, to_json(rec).dump(), file);
}

void TuneCache::clear_memory() { choices().clear_memory(); }

}  // namespace fftconv
