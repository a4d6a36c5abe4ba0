// SHA-256 digests and constant-time comparison (nettle: Debian's libnettle8,
// a small shared library with SHA-NI code paths; docs/DECISIONS.md D-START5).
#pragma once

#include <string>
#include <string_view>

namespace telic {

// Lowercase hex SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);

// "sha256:" + Sha256Hex(bytes): the digest form used in artifact metadata.
std::string Sha256Ref(std::string_view bytes);

// Whether `a` and `b` are the same bytes, in time that depends only on their
// lengths (for secrets and MACs: a mismatch's position is not revealed).
bool BytesEqualConstantTime(std::string_view a, std::string_view b);

}  // namespace telic
