// Whole-file replacement that concurrent writers cannot tear (the plan and tune caches).
#pragma once
#include <string>

namespace fftconv {

// Writes `text` to `file` through a temporary file of its own in the same folder (the process id and
// a per-process counter in its name), then renames it over `file`: a reader sees the old contents
// or the new, never a mix, also when several processes write the same file at once (the last rename
// wins). Returns "" on success, else why it failed; the temporary file is then removed.
std::string write_file_atomically(const std::string& file, const std::string& text);

}  // namespace fftconv
