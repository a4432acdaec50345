// `fftconv backends`: every registered backend, where it runs, whether it is usable here, and the
// --opt keys it accepts.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "api/fftconv.hpp"
#include "cli/commands.hpp"

namespace fftconv::cli {

void add_backends_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("backends", "List every registered backend and whether it is usable here");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print a JSON array instead of a table");
  cmd->callback([json, exit_code] {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& b : builtin_registry().all()) {
      const Support s = b->available();
      std::string keys;
      for (std::string_view k : b->option_keys()) keys += (keys.empty() ? "" : ", ") + std::string(k);
      if (*json) {
        out.push_back({{"name", b->name()}, {"location", to_string(b->location())}, {"available", s.ok},
                       {"reason", s.reason}, {"summary", b->summary()}, {"options", b->option_keys()}});
      } else {
        std::printf("%-8s %-5s %-14s %s\n", std::string(b->name()).c_str(), std::string(to_string(b->location())).c_str(),
                    s.ok ? "usable" : "not usable", std::string(b->summary()).c_str());
        if (!s.ok) std::printf("%-29s (%s)\n", "", s.reason.c_str());
        if (!keys.empty()) std::printf("%-29s --opt keys: %s\n", "", keys.c_str());
      }
    }
    if (*json) std::printf("%s\n", out.dump(2).c_str());
    *exit_code = kExitOk;
  });
}

}  // namespace fftconv::cli
