// SHA-256 through OpenSSL's EVP interface, the digest every Debian system already carries.
#include "engine/base/sha256.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <vector>

#include "engine/base/errors.hpp"

namespace gpulab {
namespace {

std::string hex(const unsigned char* digest, unsigned length) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < length; ++i) {
    out += digits[digest[i] >> 4];
    out += digits[digest[i] & 15];
  }
  return out;
}

struct ContextFree {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw RecordError("SHA-256 could not be computed (OpenSSL's EVP_Digest failed)");
  return hex(digest, length);
}

std::string sha256_file(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    throw RecordError(path.string() + ": not a regular file; its SHA-256 cannot be taken");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RecordError(path.string() + ": cannot be opened to take its SHA-256");
  const std::unique_ptr<EVP_MD_CTX, ContextFree> context(EVP_MD_CTX_new());
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1)
    throw RecordError("SHA-256 could not be started (OpenSSL's EVP_DigestInit_ex failed)");
  std::vector<char> buffer(size_t(1) << 16);
  while (in) {
    in.read(buffer.data(), std::streamsize(buffer.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(context.get(), buffer.data(), size_t(in.gcount()));
  }
  if (in.bad()) throw RecordError(path.string() + ": a read failed while taking its SHA-256");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  if (EVP_DigestFinal_ex(context.get(), digest, &length) != 1)
    throw RecordError("SHA-256 could not be finished (OpenSSL's EVP_DigestFinal_ex failed)");
  return hex(digest, length);
}

}  // namespace gpulab
