// The block shape of fbfft's 1-D register and four-step kernels (Note [1-D block shapes]), a
// knob for experiments: fbfft launches the measured automatic shape unless it is given one; a
// default Shape1d ("plain") is the shape before the knob existed. Host-only and
// free of CUDA headers, so that front ends parse it (and report bad values) in any build.
#pragma once
#include <string>
#include <string_view>

#include "common/errors.hpp"

namespace fftconv::fbfft {

struct Shape1d {
  int pairs = 0;          // four-step kind (n = 64..256): plane pairs per block, 4, 8, 16 or 32 (0: 32)
  bool prefetch = false;  // both kinds: a block loads its next group of planes while it computes
                          // this one (two shared-memory buffers)
  bool fill = false;      // register kind (n <= 32): blocks are halved (down to 32 pairs) while the
                          // grid is under one full wave of resident blocks (default: under two per SM)
  int groups = 0;         // both kinds: the grid is cut so that each block loops over at least this many
                          // groups of planes, 2, 4 or 8, where the cut grid keeps three warps per SM
                          // (0: as many blocks as groups, up to one wave)
  bool operator==(const Shape1d&) const = default;
};

// "plain", or the settings that differ from it joined by commas: "pairs=16,prefetch,fill".
inline std::string to_string(const Shape1d& s) {
  std::string r;
  auto add = [&r](const std::string& part) { r += (r.empty() ? "" : ",") + part; };
  if (s.pairs != 0) add("pairs=" + std::to_string(s.pairs));
  if (s.prefetch) add("prefetch");
  if (s.fill) add("fill");
  if (s.groups != 0) add("groups=" + std::to_string(s.groups));
  return r.empty() ? "plain" : r;
}

// The inverse of to_string: "plain" or comma-separated "pairs=4|8|16|32", "prefetch", "fill", "groups=2|4|8", each
// at most once. Throws InvalidArgument naming `field` and the bad part.
inline Shape1d parse_shape_1d(std::string_view text, const std::string& field) {
  Shape1d s;
  if (text == "plain") return s;
  auto bad = [&](std::string_view part, const std::string& why) {
    throw InvalidArgument(field + ": bad 1-D block shape part '" + std::string(part) + "' in '" + std::string(text) +
                          "' (" + why + "; expected 'plain' or comma-separated pairs=4|8|16|32, prefetch, fill, groups=2|4|8)");
  };
  bool seen_pairs = false, seen_groups = false;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view part = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (part == "prefetch" || part == "fill") {
      bool& flag = part == "prefetch" ? s.prefetch : s.fill;
      if (flag) bad(part, "given twice");
      flag = true;
    } else if (part.substr(0, 6) == "pairs=") {
      const std::string_view v = part.substr(6);
      if (seen_pairs) bad(part, "given twice");
      if (v != "4" && v != "8" && v != "16" && v != "32") bad(part, "pairs must be 4, 8, 16 or 32");
      s.pairs = v == "4" ? 4 : (v == "8" ? 8 : (v == "16" ? 16 : 32));
      seen_pairs = true;
    } else if (part.substr(0, 7) == "groups=") {
      const std::string_view v = part.substr(7);
      if (seen_groups) bad(part, "given twice");
      if (v != "2" && v != "4" && v != "8") bad(part, "groups must be 2, 4 or 8");
      s.groups = v[0] - '0';
      seen_groups = true;
    } else {
      bad(part, part.empty() ? "empty part" : "unknown setting");
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return s;
}

}  // namespace fftconv::fbfft
