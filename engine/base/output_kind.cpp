// Kinds of file by content: gpulab's own outputs, and any other file said in words.
#include "engine/base/output_kind.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

namespace gpulab {
namespace fs = std::filesystem;

namespace {

constexpr size_t kSniffBytes = 64 * 1024;
constexpr size_t kMaxJsonKindBytes = size_t(16) << 20;

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

// MNIST's format: two zero bytes, a type code (0x08 unsigned bytes ... 0x0E doubles) and the
// number of dimensions.
bool idx_magic(std::string_view head) {
  if (head.size() < 4 || head[0] != 0 || head[1] != 0) return false;
  const auto type = uint8_t(head[2]), dims = uint8_t(head[3]);
  return (type == 0x08 || type == 0x09 || (type >= 0x0B && type <= 0x0E)) && dims >= 1 && dims <= 4;
}

// safetensors: an 8-byte little-endian header length, then the JSON header.
bool safetensors_magic(std::string_view head) {
  if (head.size() < 9 || head[8] != '{') return false;
  uint64_t length = 0;
  std::memcpy(&length, head.data(), 8);
  return length >= 2 && length <= (uint64_t(100) << 20);
}

std::string_view trimmed(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte order mark
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  return text;
}

std::string describe_json(const fs::path& path, std::string_view head) {
  const std::string name = path.filename().string();
  // Field names each kind carries near its start; the whole file need not be read.
  if (name == "run.json" || (contains(head, "\"status\"") && contains(head, "\"config\"")))
    return "a run's run.json";
  if (name == "manifest.json" || contains(head, "\"lab_sha256\""))
    return "a hand-in's manifest.json";
  if (name == "answers.json") return "a hand-in's answers.json";
  if (contains(head, "\"layers\"")) return "a model config (JSON)";
  if (contains(head, "\"benchmark\"")) return "a benchmark's JSON";
  return "a JSON file";
}

std::string describe_text(const fs::path& path) {
  const std::string extension = lower(path.extension().string());
  if (extension == ".md" || extension == ".markdown") return "a Markdown file";
  if (extension == ".csv") return "a CSV file";
  if (extension == ".json") return "a JSON file";
  if (extension == ".py") return "a Python script";
  if (extension == ".sh") return "a shell script";
  if (extension == ".html" || extension == ".htm") return "an HTML page";
  if (extension == ".c" || extension == ".cpp" || extension == ".hpp" || extension == ".h")
    return "a source file";
  return "a text file";
}

}  // namespace

std::string file_start(const fs::path& path, size_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return {};
  struct stat info {};
  std::string text;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    text.resize(std::min<size_t>(bytes, size_t(info.st_size)));
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += size_t(n);
    }
    text.resize(done);
  }
  ::close(fd);
  return text;
}

std::string describe_file(const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (fs::is_directory(status)) return "a folder";
  if (fs::is_fifo(status)) return "a FIFO (named pipe)";
  if (fs::is_character_file(status) || fs::is_block_file(status)) return "a device";
  if (fs::is_socket(status)) return "a socket";
  if (!fs::is_regular_file(status)) return "not a regular file";
  const std::string head = file_start(path, kSniffBytes);
  if (head.empty())
    return fs::file_size(path, error) == 0 ? "an empty file" : "a file that cannot be read";
  // Through a link, the file it names is what is said (and what a write would replace).
  const fs::path real = fs::is_symlink(fs::symlink_status(path, error))
                            ? fs::weakly_canonical(fs::absolute(path, error), error)
                            : path;
  const std::string name = real.filename().string();
  if (head.starts_with("\x89PNG\r\n\x1a\n")) return "a PNG image";
  if (head.starts_with("%PDF-")) return "a PDF document";
  if (head.starts_with("\xFF\xD8\xFF")) return "a JPEG image";
  if (head.starts_with("GIF8")) return "a GIF image";
  if (head.starts_with("PK\x03\x04") || head.starts_with("PK\x05\x06")) return "a zip archive";
  if (head.starts_with("\x7f"
                       "ELF"))
    return "a program (ELF)";
  if (head.starts_with("\x1f\x8b"))
    return name.ends_with("-ubyte.gz") ? "an MNIST IDX file (gzip-compressed)"
                                       : "a gzip-compressed file";
  if (idx_magic(head)) return "an MNIST IDX file";
  if (safetensors_magic(head)) return "a safetensors checkpoint";
  if (head.find('\0') != std::string::npos) return "a binary file";
  const std::string_view text = trimmed(head);
  if (text.starts_with("{") || text.starts_with("[")) return describe_json(real, text);
  if (text.starts_with("<")) {
    if (contains(text, "<svg")) return "an SVG image";
    if (contains(lower(std::string(text.substr(0, 512))), "<html")) return "an HTML page";
    return "an XML file";
  }
  return describe_text(real);
}

OutputKind first_line_kind(std::string what,
                           std::function<bool(std::string_view first_line)> first_line) {
  return {std::move(what), [first_line = std::move(first_line)](const fs::path& path) {
            const std::string head = file_start(path, 4096);
            std::string_view line(head);
            line = line.substr(0, line.find('\n'));
            if (line.ends_with('\r')) line.remove_suffix(1);
            return !head.empty() && first_line(line);
          }};
}

OutputKind json_kind(std::string what, std::function<bool(const nlohmann::json&)> accepts) {
  return {std::move(what), [accepts = std::move(accepts)](const fs::path& path) {
            std::error_code error;
            if (fs::file_size(path, error) > kMaxJsonKindBytes || error) return false;
            const nlohmann::json value =
                nlohmann::json::parse(file_start(path, kMaxJsonKindBytes), nullptr, false);
            return !value.is_discarded() && accepts(value);
          }};
}

const OutputKind& png_picture_kind() {
  static const OutputKind kind{
      "a PNG picture", [](const fs::path& path) {
        const std::string head = file_start(path, kSniffBytes);
        // The mark is a tEXt chunk before the image data.
        const std::string mark = std::string("tEXt") + kPngSoftwareKey + '\0' + kPngSoftwareValue;
        return head.starts_with("\x89PNG\r\n\x1a\n") && contains(head, mark);
      }};
  return kind;
}

const OutputKind& svg_picture_kind() {
  static const OutputKind kind{"an SVG picture", [](const fs::path& path) {
                                 const std::string head = file_start(path, 4096);
                                 return contains(head, "<svg") && contains(head, "<title>gpulab");
                               }};
  return kind;
}

const OutputKind& pdf_picture_kind() {
  static const OutputKind kind{"a PDF picture", [](const fs::path& path) {
                                 const std::string head = file_start(path, kSniffBytes);
                                 // Qt writes the creator as a UTF-16 string (a byte order
                                 // mark, then big-endian characters).
                                 using namespace std::string_view_literals;
                                 return head.starts_with("%PDF-") &&
                                        (contains(head, "/Creator (gpulab") ||
                                         contains(head, "/Creator (\xFE\xFF\0g\0p\0u\0l\0a\0b"sv));
                               }};
  return kind;
}

}  // namespace gpulab
