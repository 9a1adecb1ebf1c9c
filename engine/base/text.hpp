// Text gpulab keeps (names, lab files) must be UTF-8: run.json is JSON, which holds nothing else,
// and a name that is not would leave a record no reader can load.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

// The longest name a run or a model may have, in bytes: names label charts and file names.
inline constexpr size_t kMaxNameBytes = 256;

// The offset of the first byte that does not belong to valid UTF-8 (overlong forms, surrogates
// and code points past U+10FFFF included), or std::string_view::npos when all of it does.
size_t invalid_utf8_at(std::string_view text);

// "" when `text` is UTF-8; else where it stops being: "byte 0xE9 at column 4" (columns count
// bytes from 1).
std::string utf8_problem(std::string_view text);

// "" for a name gpulab can keep; else what is wrong and what to do, to follow the name's label:
// "is not UTF-8 text (byte 0xE9 at column 4); give a UTF-8 name of at most 256 bytes",
// "is 8388608 bytes long; give ...".
std::string name_problem(std::string_view name);

// `text` as a terminal may be given it: control characters (ESC and the rest below 0x20 but tab,
// DEL, and the C1 controls U+0080 to U+009F) shown as '?', so a lab's title, a learner's or a
// run's name cannot move the cursor, clear the screen or retitle the window it is printed in.
std::string terminal_text(std::string_view text);

// "" unless `text` starts with a UTF-8 byte order mark, which editors on Windows add and no reader
// here skips; else the words for it: "starts with a UTF-8 byte order mark (bytes EF BB BF); save
// the file as UTF-8 without a BOM".
std::string bom_problem(std::string_view text);

// `name` as it may label a row, a chart or a line: cut to at most `max_bytes` bytes at the end of a
// character, with "…" (within the bound) where it was cut, and bytes that are not UTF-8 shown as
// '?'. For names read from files others wrote (a hand-in's learner), so a name of megabytes
// cannot make a chart or a report slow.
std::string bounded_name(std::string_view name, size_t max_bytes = kMaxNameBytes);

// The one of `known` that `name` most likely misspells or abbreviates ("learning_rate" -> "lr",
// "epoch" -> "epochs", "batch_size" -> "batch"), or "" when none is near.
std::string nearest_name(std::string_view name, const std::vector<std::string>& known);

// "" when `key` is one of `known`; else "unknown key \"learning_rate\" (did you mean \"lr\"?); the
// known keys are a, b, c", for a reader that refuses what it would otherwise ignore.
std::string unknown_key_problem(std::string_view key, const std::vector<std::string>& known);

// A CSV field as RFC 4180 writes it: as it is, or in double quotes (quotes doubled) where it holds
// a comma, a quote or a line break. Every CSV gpulab writes quotes its fields with it.
std::string csv_field(std::string_view text);

}  // namespace gpulab
