// SHA-256 digests (OpenSSL EVP).
#pragma once

#include <string>
#include <string_view>

namespace telic {

// Lowercase hex SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);

// "sha256:" + Sha256Hex(bytes): the digest form used in artifact metadata.
std::string Sha256Ref(std::string_view bytes);

}  // namespace telic
