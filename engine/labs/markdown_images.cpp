// Images referred to by Markdown, found and judged without reading them.
#include "engine/labs/markdown_images.hpp"

#include <system_error>

namespace gpulab {
namespace fs = std::filesystem;

namespace {

std::string trimmed(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(" \t");
  return std::string(text.substr(first, last - first + 1));
}

// The target of "![alt](target "title")" whose "](" is at `open`: up to the closing ')' or the
// title, angle brackets taken off.
std::string link_target(std::string_view line, size_t open) {
  const size_t start = open + 2;
  const size_t close = line.find(')', start);
  std::string target = trimmed(
      line.substr(start, close == std::string_view::npos ? std::string_view::npos : close - start));
  if (const size_t space = target.find_first_of(" \t"); space != std::string::npos)
    target.resize(space);  // a title follows
  if (target.size() >= 2 && target.front() == '<' && target.back() == '>')
    target = target.substr(1, target.size() - 2);
  return target;
}

}  // namespace

std::vector<MarkdownImage> markdown_images(std::string_view markdown) {
  std::vector<MarkdownImage> images;
  bool in_code = false;
  int number = 0;
  for (size_t start = 0; start <= markdown.size();) {
    size_t end = markdown.find('\n', start);
    if (end == std::string_view::npos) end = markdown.size();
    const std::string_view line = markdown.substr(start, end - start);
    ++number;
    start = end + 1;
    if (trimmed(line).rfind("```", 0) == 0) {
      in_code = !in_code;
      continue;
    }
    if (in_code) continue;
    for (size_t at = line.find("!["); at != std::string_view::npos; at = line.find("![", at + 2)) {
      const size_t open = line.find("](", at + 2);
      if (open == std::string_view::npos) break;
      images.push_back({number, link_target(line, open)});
    }
    for (size_t at = line.find("<img"); at != std::string_view::npos;
         at = line.find("<img", at + 4)) {
      const size_t src = line.find("src=", at);
      if (src == std::string_view::npos || src + 5 > line.size()) break;
      const char quote = line[src + 4];
      const size_t begin = quote == '"' || quote == '\'' ? src + 5 : src + 4;
      const size_t stop =
          quote == '"' || quote == '\'' ? line.find(quote, begin) : line.find_first_of(" >", begin);
      images.push_back({number, std::string(line.substr(begin, stop == std::string_view::npos
                                                                   ? std::string_view::npos
                                                                   : stop - begin))});
    }
  }
  return images;
}

std::string markdown_image_problem(const std::string& target, const fs::path& folder) {
  const std::string only = "; a page shows only image files in its own folder";
  if (target.empty()) return "names no file" + only;
  if (target.find(':') != std::string::npos && target.find('/') != 0)  // file:, https:, qrc:
    return "is a URL" + only;
  const fs::path path(target);
  if (path.is_absolute()) return "is an absolute path" + only;
  for (const fs::path& part : path.lexically_normal())
    if (part == "..") return "points outside the page's folder (\"..\")" + only;
  if (folder.empty()) return {};  // no folder to look in: only the path itself is judged
  std::error_code error;
  const fs::path base = fs::weakly_canonical(fs::absolute(folder, error), error);
  const fs::path file = fs::weakly_canonical(base / path, error);
  const fs::path inside = file.lexically_relative(base);
  if (error || inside.empty() || *inside.begin() == "..")
    return "is a link out of the page's folder" + only;
  const fs::file_status status = fs::status(file, error);
  if (!fs::exists(status)) return "is not there";
  if (!fs::is_regular_file(status))
    return std::string("is ") +
           (fs::is_directory(status) ? "a folder"
            : fs::is_fifo(status)    ? "a FIFO"
                                     : "a device or another special file") +
           ", not an image file" + only;
  const std::uintmax_t bytes = fs::file_size(file, error);
  if (error || bytes > kMaxMarkdownImageBytes)
    return "is larger than " + std::to_string(kMaxMarkdownImageBytes >> 20) +
           " MiB; a page shows smaller images";
  return {};
}

}  // namespace gpulab
