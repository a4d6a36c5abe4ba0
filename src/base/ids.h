// Identifiers: random UUIDs and the identifier/reference grammars of the wire contract.
#pragma once

#include <string>
#include <string_view>

namespace telic {

// Source of random identifiers; injectable so tests can make runs reproducible.
class IdSource {
 public:
  virtual ~IdSource() = default;
  virtual std::string NewUuid() = 0;
};

// Lowercase RFC 4122 version-4 UUIDs from the OS CSPRNG (FillRandomBytes).
class RandomIdSource final : public IdSource {
 public:
  std::string NewUuid() override;
};

// Deterministic UUID-shaped ids (00000000-0000-4000-8000-<counter>) for tests.
class SequentialIdSource final : public IdSource {
 public:
  std::string NewUuid() override;

 private:
  unsigned long long next_ = 1;
};

// Fills `bytes` from the kernel's CSPRNG: getrandom(2), which blocks only
// until the pool is first seeded at boot, else /dev/urandom. False when
// neither answers (no /dev, a kernel without getrandom); never weaker bytes.
bool FillRandomBytes(unsigned char* bytes, size_t count);

// `count` random bytes as lowercase hex (e.g. session ids); from the OS CSPRNG.
std::string RandomHex(size_t count);

// Identifier grammar of the wire (run, artifact, task, event and action ids):
// 1-128 chars, ^[A-Za-z0-9][A-Za-z0-9._:-]*$ (ASCII only).
inline constexpr size_t kMaxIdentifierLength = 128;
bool IsIdentifier(std::string_view s);

// Why `s` is not an identifier ("" when it is): empty, longer than 128
// characters, or the first character that breaks the grammar with its
// position ("character 3 (0x1b) is not allowed: ..."). Bounded and free of
// control characters, so it can be shown as it is.
std::string IdentifierProblem(std::string_view s);

// UUID grammar accepted for prior_run_id: 8-4-4-4-12 hex, version 1-8 with the
// RFC variant, or the nil / max UUID (lowercase, as Zod's uuid check).
bool IsUuid(std::string_view s);

}  // namespace telic
