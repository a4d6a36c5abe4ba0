#include "base/sha256.h"

#include <nettle/memops.h>
#include <nettle/sha2.h>

#include "base/text.h"

namespace telic {

std::string Sha256Hex(std::string_view bytes) {
  sha256_ctx context;
  sha256_init(&context);
  sha256_update(&context, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&context, sizeof digest, digest);
  return LowerHex(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

struct Sha256Stream::Context {
  sha256_ctx state;
};

Sha256Stream::Sha256Stream() : context_(std::make_unique<Context>()) { sha256_init(&context_->state); }
Sha256Stream::~Sha256Stream() = default;

void Sha256Stream::Update(std::string_view bytes) {
  sha256_update(&context_->state, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
}

std::string Sha256Stream::HexDigest() {
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&context_->state, sizeof digest, digest);
  return LowerHex(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::string Sha256Ref(std::string_view bytes) { return "sha256:" + Sha256Hex(bytes); }

bool BytesEqualConstantTime(std::string_view a, std::string_view b) {
  return a.size() == b.size() && memeql_sec(a.data(), b.data(), a.size()) != 0;
}

}  // namespace telic
