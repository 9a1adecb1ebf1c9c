// Reading a run folder's files as untrusted input: only regular files up to a stated size, every
// field of run.json checked for its type and range, and step numbers a run can reach.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace gpulab {

// The largest run.json and CSV file a record is read from; a larger one is refused with a
// message (a run of a million steps writes a metrics.csv of about 150 MB).
inline constexpr std::uintmax_t kMaxRunJsonBytes = std::uintmax_t(16) << 20;
inline constexpr std::uintmax_t kMaxRecordCsvBytes = std::uintmax_t(2) << 30;

// The highest step a record may name: past 2^53 a double (the charts' and exports' number)
// no longer holds every step.
inline constexpr int64_t kMaxRecordStep = int64_t(1) << 53;

// The contents of `path`, which must be a regular file (or a link to one) of at most `limit`
// bytes: io's read_input_file, with RecordError. A FIFO, a device, a folder or a link loop is
// refused at once, never opened for reading that blocks. Returns false when the file does not
// exist; throws RecordError naming the file otherwise.
bool read_record_file(const std::filesystem::path& path, std::uintmax_t limit, std::string* text);

// Checks every field gpulab writes in run.json for its JSON type (and whole numbers for their
// range); fields it does not know are left alone. Throws RecordError:
// `<file>: field "model.name": expected a string, found a number`.
void check_run_info(const nlohmann::json& info, const std::filesystem::path& file);

// A step number read from a record: a whole number from 0 to kMaxRecordStep, else
// std::out_of_range with what it is and what is allowed.
int64_t record_step(double value, const std::string& text);

}  // namespace gpulab
