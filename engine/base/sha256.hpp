// SHA-256 of bytes and of files, through OpenSSL's libcrypto (EVP): a hand-in's manifest names
// each of its files and its lab file by this, so a changed byte anywhere is found.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace gpulab {

// 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

// Of a regular file's contents (read in pieces, any size); throws RecordError naming the file
// when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace gpulab
