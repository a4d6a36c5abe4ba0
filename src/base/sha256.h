// SHA-256 digests and constant-time comparison (nettle: Debian's libnettle8,
// a small shared library with SHA-NI code paths; docs/DECISIONS.md D-START5).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace telic {

// Lowercase hex SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);

// "sha256:" + Sha256Hex(bytes): the digest form used in artifact metadata.
std::string Sha256Ref(std::string_view bytes);

// A SHA-256 digest computed over bytes that arrive in pieces (a stream too
// large to hold): Update any number of times, then HexDigest once.
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;
  void Update(std::string_view bytes);
  // Lowercase hex of everything given to Update; ends the stream.
  std::string HexDigest();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// Whether `a` and `b` are the same bytes, in time that depends only on their
// lengths (for secrets and MACs: a mismatch's position is not revealed).
bool BytesEqualConstantTime(std::string_view a, std::string_view b);

}  // namespace telic
