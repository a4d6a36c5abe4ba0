// The authenticated `requestState` of telic's multi round-trip requests
// (2026-07-28 basic/patterns/mrtr; docs/API.md "Clarification as a multi
// round-trip request"; docs/DECISIONS.md D-MCPB1, D-MCPB2).
//
// A requestState travels through the client, so it is attacker-controlled.
// telic issues it as
//   "v1." + hex(payload) + "." + hex(HMAC-SHA256(key, "telic-request-state-v1." + hex(payload)))
// where the payload is canonical JSON naming the tool it was issued for, the
// run, the action id and run version it was issued at, the ClarificationRequest
// it asks about and an expiry. A token whose MAC does not verify under the key
// is refused before its payload is read.
#pragma once

#include <array>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace telic::mcp {

using RequestStateKey = std::array<unsigned char, 32>;

// What a requestState binds.
struct RequestStateClaims {
  std::string tool;                 // the tool the state answers, e.g. telic_get_next_action
  std::string run_id;
  std::string action_id;            // the run's action id when it was issued
  int64_t run_version = 0;          // the run's version when it was issued
  std::string request_artifact_id;  // the ClarificationRequest it asks about
  int64_t expires_at_ms = 0;        // set by Issue
};

// Why a presented requestState is refused. `reason` is stable
// (malformed, forged, expired, other_tool, other_run, replayed); `message`
// says what failed.
struct RequestStateRefusal {
  std::string reason;
  std::string message;
};

// Where a retry arrives: the tool called and the run's current tokens.
struct RequestStateTarget {
  std::string tool;
  std::string run_id;
  std::string action_id;
  int64_t run_version = 0;
};

class RequestStateSigner {
 public:
  static constexpr int64_t kDefaultTtlMs = 15 * 60 * 1000;
  static constexpr size_t kMaxTokenChars = 4096;

  RequestStateSigner(RequestStateKey key, Clock& clock, int64_t ttl_ms = kDefaultTtlMs)
      : key_(key), clock_(clock), ttl_ms_(ttl_ms) {}

  // A token for `claims` (its expires_at_ms is set to now + ttl).
  std::string Issue(RequestStateClaims claims) const;

  // Checks a presented token: shape, MAC (constant-time), payload, expiry,
  // then that it was issued for `target`'s tool and run at `target`'s current
  // action id and version (a moved version means the state was answered or
  // the run advanced: "replayed").
  std::expected<RequestStateClaims, RequestStateRefusal> Verify(std::string_view token,
                                                                const RequestStateTarget& target) const;

 private:
  std::string Mac(std::string_view payload_hex) const;

  RequestStateKey key_;
  Clock& clock_;
  int64_t ttl_ms_;
};

// The per-store key at `path`: read when the file exists (it must be a
// regular file of exactly 32 bytes, owned by this user, not accessible by
// group or others), else created with 32 bytes from the OS CSPRNG, mode 0600,
// O_EXCL (a concurrent creator's file is read instead).
Result<RequestStateKey> LoadOrCreateRequestStateKey(const std::string& path);

}  // namespace telic::mcp
