#include "base/sha256.h"

#include <openssl/evp.h>

namespace telic {

namespace {

// SHA-256 fetched from the default provider once: EVP_sha256() makes every
// EVP_Digest fetch it again (OpenSSL 3), a third of a short digest's cost.
// Falls back to that implicit fetch if the explicit one fails.
const EVP_MD* Sha256Digest() {
  static EVP_MD* const fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return fetched ? fetched : EVP_sha256();
}

}  // namespace

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, Sha256Digest(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xF]);
  }
  return hex;
}

std::string Sha256Ref(std::string_view bytes) { return "sha256:" + Sha256Hex(bytes); }

}  // namespace telic
