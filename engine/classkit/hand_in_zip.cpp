// A hand-in packed into a .zip and a class's zips unpacked, through libarchive (never by hand):
// entries are checked one by one before a byte is written, and only files and folders are made.
#include "engine/classkit/hand_in_zip.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <system_error>
#include <vector>

#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/base/text.hpp"

namespace gpulab {
namespace fs = std::filesystem;

namespace {

struct ArchiveReadFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct ArchiveWriteFree {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

std::string archive_message(archive* a) {
  const char* text = archive_error_string(a);
  return text ? text : "no reason given";
}

// libarchive turns a zip's UTF-8 names into the locale's character set, and the C locale a program
// starts in has none for "Zoë" (the name came back empty): names are read and written under
// C.UTF-8, on this thread alone and only while the archive is open, whatever LANG says.
class Utf8NamesOnThisThread {
 public:
  Utf8NamesOnThisThread()
      : utf8_(::newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t(0))),
        previous_(utf8_ ? ::uselocale(utf8_) : locale_t(0)) {}
  ~Utf8NamesOnThisThread() {
    if (!utf8_) return;
    ::uselocale(previous_);
    ::freelocale(utf8_);
  }
  Utf8NamesOnThisThread(const Utf8NamesOnThisThread&) = delete;
  Utf8NamesOnThisThread& operator=(const Utf8NamesOnThisThread&) = delete;

 private:
  locale_t utf8_;
  locale_t previous_;
};

la_ssize_t append_to_string(archive*, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return la_ssize_t(length);
}

// Why an entry's name may not be unpacked, or "": a zip names its files relative to itself.
std::string name_problem_in_zip(const std::string& name) {
  if (name.empty()) return "an entry has no name";
  if (const std::string bad = utf8_problem(name); !bad.empty())
    return "an entry's name is not UTF-8 (" + bad + ")";
  const std::string quoted = "the entry \"" + name + "\"";
  if (name.front() == '/' || name.front() == '\\' || (name.size() > 1 && name[1] == ':'))
    return quoted + " has an absolute path; a hand-in's zip holds only paths inside it";
  if (name.find('\\') != std::string::npos)
    return quoted + " has a '\\' in its name; a hand-in's zip separates folders with '/'";
  for (const fs::path& part : fs::path(name))
    if (part == "..") return quoted + " points outside the zip's folder (\"..\")";
  return "";
}

}  // namespace

std::string hand_in_zip_name(const std::string& learner, const std::string& lab) {
  std::string name = learner + "-" + lab;
  for (char& c : name)
    if (c == ' ' || c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '-';
  return name + ".zip";
}

void write_hand_in_zip(const fs::path& dir, const fs::path& zip) {
  const std::string top =
      dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
  std::vector<fs::path> files, folders;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_symlink(error)) continue;
    if (it->is_directory(error)) folders.push_back(it->path().lexically_relative(dir));
    if (it->is_regular_file(error)) files.push_back(it->path().lexically_relative(dir));
  }
  if (error) throw RecordError(dir.string() + ": could not be listed (" + error.message() + ")");
  std::sort(files.begin(), files.end());  // the same folder packs to the same entry order
  std::sort(folders.begin(), folders.end());
  const Utf8NamesOnThisThread utf8_names;  // before the archive: it converts names at its end
  // Declared before the archive, so it outlives it: archive_write_free flushes into it, also when
  // an exception leaves this function.
  std::string bytes;
  std::unique_ptr<archive, ArchiveWriteFree> a(archive_write_new());
  const auto fail = [&](const std::string& what) {
    throw RecordError(zip.string() + ": could not be written (" + what + ")");
  };
  if (archive_write_set_format_zip(a.get()) != ARCHIVE_OK ||
      archive_write_set_bytes_in_last_block(a.get(), 1) != ARCHIVE_OK ||
      archive_write_open(a.get(), &bytes, nullptr, append_to_string, nullptr) != ARCHIVE_OK)
    fail(archive_message(a.get()));
  std::unique_ptr<archive_entry, EntryFree> entry(archive_entry_new());
  const auto add = [&](const std::string& name, const fs::path* file) {
    archive_entry_clear(entry.get());
    archive_entry_set_pathname_utf8(entry.get(), name.c_str());
    archive_entry_set_mtime(entry.get(), 0, 0);  // as a stored file has no time of its own
    std::string data;
    if (file) {
      std::ifstream in(dir / *file, std::ios::binary);
      std::ostringstream bytes;  // whole, not a character at a time
      bytes << in.rdbuf();
      data = std::move(bytes).str();
      if (!in.good() && !in.eof()) fail((dir / *file).string() + " could not be read");
      archive_entry_set_filetype(entry.get(), AE_IFREG);
      archive_entry_set_perm(entry.get(), 0644);
      archive_entry_set_size(entry.get(), la_int64_t(data.size()));
    } else {
      archive_entry_set_filetype(entry.get(), AE_IFDIR);
      archive_entry_set_perm(entry.get(), 0755);
    }
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK) fail(archive_message(a.get()));
    if (!data.empty() && archive_write_data(a.get(), data.data(), data.size()) < 0)
      fail(archive_message(a.get()));
  };
  add(top + "/", nullptr);
  for (const fs::path& folder : folders) add(top + "/" + folder.generic_string() + "/", nullptr);
  for (const fs::path& file : files) add(top + "/" + file.generic_string(), &file);
  if (archive_write_close(a.get()) != ARCHIVE_OK) fail(archive_message(a.get()));
  write_file_atomically(zip, bytes, AtLink::replace);
}

std::string unpack_hand_in_zip(const fs::path& zip, const fs::path& into, const ZipLimits& limits) {
  std::error_code error;
  const uintmax_t zip_bytes = fs::file_size(zip, error);
  if (error) return "cannot be read (" + error.message() + ")";
  fs::create_directories(into, error);
  if (error) return into.string() + ": could not be made (" + error.message() + ")";
  const Utf8NamesOnThisThread utf8_names;  // before the archive, which it outlives
  std::unique_ptr<archive, ArchiveReadFree> a(archive_read_new());
  archive_read_support_format_zip(a.get());
  if (archive_read_open_filename(a.get(), zip.c_str(), 1 << 16) != ARCHIVE_OK)
    return "not a zip file (" + archive_message(a.get()) + ")";
  uint64_t total = 0;
  size_t entries = 0;
  std::vector<char> block(1 << 16);
  for (;;) {
    archive_entry* entry = nullptr;
    const int status = archive_read_next_header(a.get(), &entry);
    if (status == ARCHIVE_EOF) break;
    if (status != ARCHIVE_OK && status != ARCHIVE_WARN)
      return entries == 0 ? "not a zip file (" + archive_message(a.get()) + ")"
                          : "damaged after " + std::to_string(entries) + " entries (" +
                                archive_message(a.get()) + ")";
    if (++entries > limits.max_entries)
      return "holds more than " + std::to_string(limits.max_entries) +
             " entries: refused as a zip bomb";
    const char* raw = archive_entry_pathname_utf8(entry);
    if (!raw) raw = archive_entry_pathname(entry);  // bytes of no character set: said below
    const std::string name = raw ? raw : "";
    if (std::string why = name_problem_in_zip(name); !why.empty()) return why;
    const std::string quoted = "the entry \"" + name + "\"";
    if (archive_entry_hardlink(entry) || archive_entry_filetype(entry) == AE_IFLNK)
      return quoted + " is a link; a hand-in's zip holds only files and folders";
    const fs::path target = into / fs::path(name).lexically_normal();
    if (archive_entry_filetype(entry) == AE_IFDIR) {
      fs::create_directories(target, error);
      if (error) return quoted + " could not be unpacked (" + error.message() + ")";
      continue;
    }
    if (archive_entry_filetype(entry) != AE_IFREG)
      return quoted + " is not a file or a folder; a hand-in's zip holds only those";
    fs::create_directories(target.parent_path(), error);
    // A name given twice, or a file where a folder was, is no hand-in gpulab packed.
    if (error || fs::exists(fs::symlink_status(target, error)))
      return quoted + " is there twice, or clashes with a folder of the zip";
    std::ofstream out(target, std::ios::binary);
    for (;;) {
      const la_ssize_t n = archive_read_data(a.get(), block.data(), block.size());
      if (n < 0) return quoted + " is damaged (" + archive_message(a.get()) + ")";
      if (n == 0) break;
      total += uint64_t(n);
      if (total > limits.max_total_bytes)
        return "unpacks to more than " + std::to_string(limits.max_total_bytes >> 20) +
               " MiB: refused as a zip bomb";
      if (total > (uint64_t(1) << 20) && double(total) > limits.max_ratio * double(zip_bytes))
        return "unpacks to more than " + std::to_string(int(limits.max_ratio)) +
               " times its size: refused as a zip bomb";
      out.write(block.data(), n);
    }
    if (!out.flush()) return quoted + " could not be unpacked into " + target.string();
  }
  if (entries == 0) return "an empty zip: it holds no hand-in";
  return "";
}

}  // namespace gpulab
