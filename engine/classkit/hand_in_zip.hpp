// A hand-in as one .zip file (`lab hand-in --zip`) and the class's zips unpacked for grading,
// both through libarchive: nothing is ever written outside the folder a zip is unpacked into.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace gpulab {

// "Ada Lovelace", "cnn-on-gpu" -> "Ada-Lovelace-cnn-on-gpu.zip": the file a course platform takes.
// Spaces, path separators and control characters become '-'; other UTF-8 is kept.
std::string hand_in_zip_name(const std::string& learner, const std::string& lab);

// Packs the folder `dir` into `zip` with the folder (by its own name) as the one top-level entry
// and every regular file under it (links are left out, as a hand-in holds none). Written
// atomically: a reader finds the old zip or the new one. Throws RecordError naming the file.
void write_hand_in_zip(const std::filesystem::path& dir, const std::filesystem::path& zip);

// What a zip may unpack to before it is refused as a zip bomb.
struct ZipLimits {
  uint64_t max_total_bytes = uint64_t(256) << 20;  // every entry together
  double max_ratio = 200;  // unpacked bytes over the zip's size (past 1 MiB unpacked)
  size_t max_entries = 10000;
};

// Unpacks the zip file `zip` into the folder `into` (made when missing). Returns "" when every
// entry was unpacked, else the one reason the zip is refused ("an entry \"../x\" points outside
// the zip's folder"): not a zip, a damaged one, an entry with an absolute path, a "..", a name
// that is not UTF-8, a link (symbolic or hard), or more than `limits` allow. Writes only regular
// files and folders under `into`; on refusal what was unpacked so far stays for the caller to
// remove with `into`.
std::string unpack_hand_in_zip(const std::filesystem::path& zip, const std::filesystem::path& into,
                               const ZipLimits& limits = {});

}  // namespace gpulab
