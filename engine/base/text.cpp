// UTF-8 validation by the Unicode standard's table of well-formed byte sequences.
#include "engine/base/text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>

namespace gpulab {

size_t invalid_utf8_at(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const size_t size = text.size();
  for (size_t i = 0; i < size;) {
    const unsigned char lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the second byte's range (Unicode table 3-7)
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;   // overlong
      if (lead == 0xED) high = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;   // overlong
      if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
    } else {
      return i;
    }
    if (i + length > size) return i;
    if (bytes[i + 1] < low || bytes[i + 1] > high) return i;
    for (size_t k = 2; k < length; ++k)
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xBF) return i;
    i += length;
  }
  return std::string_view::npos;
}

std::string utf8_problem(std::string_view text) {
  const size_t at = invalid_utf8_at(text);
  if (at == std::string_view::npos) return {};
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", unsigned(static_cast<unsigned char>(text[at])));
  return std::string("byte ") + byte + " at column " + std::to_string(at + 1);
}

std::string name_problem(std::string_view name) {
  const std::string wanted =
      "; give a UTF-8 name of at most " + std::to_string(kMaxNameBytes) + " bytes";
  if (name.size() > kMaxNameBytes)
    return "is " + std::to_string(name.size()) + " bytes long" + wanted;
  if (const std::string why = utf8_problem(name); !why.empty())
    return "is not UTF-8 text (" + why + ")" + wanted;
  return {};
}

std::string terminal_text(std::string_view text) {
  std::string shown(text);
  for (size_t i = 0; i < shown.size(); ++i) {
    const auto byte = static_cast<unsigned char>(shown[i]);
    if ((byte < 0x20 && byte != '\t' && byte != '\n') || byte == 0x7F) {
      shown[i] = '?';
    } else if (byte == 0xC2 && i + 1 < shown.size() &&
               static_cast<unsigned char>(shown[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(shown[i + 1]) <= 0x9F) {
      shown.replace(i, 2, "?");  // a C1 control: U+009B alone starts an escape sequence
    }
  }
  return shown;
}

std::string bom_problem(std::string_view text) {
  if (!text.starts_with("\xEF\xBB\xBF")) return {};
  return "starts with a UTF-8 byte order mark (bytes EF BB BF); save the file as UTF-8 without a "
         "BOM";
}

std::string bounded_name(std::string_view name, size_t max_bytes) {
  const std::string mark = "…";
  const bool cut = name.size() > max_bytes;
  std::string text(
      name.substr(0, cut ? max_bytes - std::min(max_bytes, mark.size()) : name.size()));
  for (size_t at = invalid_utf8_at(text); at != std::string::npos; at = invalid_utf8_at(text)) {
    // A character the cut went through is left out; other bytes that are not UTF-8 show as '?'.
    if (cut && text.size() - at < 4 && static_cast<unsigned char>(text[at]) >= 0xC2) {
      text.resize(at);
      break;
    }
    text[at] = '?';
  }
  return cut ? text + mark : text;
}

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "learning_rate" -> "lr": the first letters of the words of a name.
std::string initials(std::string_view name) {
  std::string letters;
  for (size_t i = 0; i < name.size(); ++i)
    if (std::isalpha(static_cast<unsigned char>(name[i])) &&
        (i == 0 || name[i - 1] == '_' || name[i - 1] == '-' || name[i - 1] == ' '))
      letters += char(std::tolower(static_cast<unsigned char>(name[i])));
  return letters;
}

}  // namespace

std::string nearest_name(std::string_view name, const std::vector<std::string>& known) {
  if (name.empty() || name.size() > 64) return {};
  std::string best;
  size_t best_distance = std::string::npos;
  for (const std::string& k : known) {
    if (initials(name).size() > 1 && initials(name) == k) return k;
    // "batch_size" -> "batch": the known name and a word more.
    if (name.size() > k.size() && name.substr(0, k.size()) == k &&
        (name[k.size()] == '_' || name[k.size()] == '-'))
      return k;
    const size_t distance = edit_distance(name, k);
    const size_t allowed = std::max<size_t>(1, std::min(name.size(), k.size()) / 3);
    if (distance <= allowed && distance < best_distance) {
      best = k;
      best_distance = distance;
    }
  }
  return best;
}

std::string unknown_key_problem(std::string_view key, const std::vector<std::string>& known) {
  for (const std::string& k : known)
    if (k == key) return {};
  std::string listed;
  for (const std::string& k : known) listed += (listed.empty() ? "" : ", ") + k;
  const std::string shown = bounded_name(key, 64);
  const std::string near = nearest_name(key, known);
  return "unknown key \"" + shown + "\"" +
         (near.empty() ? "" : " (did you mean \"" + near + "\"?)") + "; the known keys are " +
         listed;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace gpulab
