#include "mcp/request_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nettle/hmac.h>

#include "base/canonical_json.h"
#include "base/ids.h"
#include "base/json_parse.h"
#include "base/sha256.h"
#include "base/text.h"

namespace telic::mcp {
namespace {

constexpr std::string_view kVersionPrefix = "v1.";
constexpr std::string_view kMacContext = "telic-request-state-v1.";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // uppercase is not telic's encoding
}

std::optional<std::string> Unhex(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 2);
  for (size_t i = 0; i < text.size(); i += 2) {
    int high = HexValue(text[i]), low = HexValue(text[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>(high * 16 + low));
  }
  return out;
}

RequestStateRefusal Refuse(std::string reason, std::string message) { return {std::move(reason), std::move(message)}; }

// The payload's members, exactly; anything else is malformed.
std::optional<RequestStateClaims> ClaimsFromPayload(const Json& payload) {
  static const std::vector<std::string> kMembers = {"action", "exp", "request", "run", "tool", "version"};
  if (!payload.is_object() || payload.size() != kMembers.size()) return std::nullopt;
  for (const std::string& member : kMembers) {
    if (!payload.contains(member)) return std::nullopt;
  }
  if (!payload["tool"].is_string() || !payload["run"].is_string() || !payload["action"].is_string() ||
      !payload["request"].is_string() || !payload["version"].is_number_integer() ||
      !payload["exp"].is_number_integer()) {
    return std::nullopt;
  }
  return RequestStateClaims{payload["tool"], payload["run"], payload["action"], payload["version"].get<int64_t>(),
                            payload["request"], payload["exp"].get<int64_t>()};
}

}  // namespace

std::string RequestStateSigner::Mac(std::string_view payload_hex) const {
  std::string message(kMacContext);
  message.append(payload_hex);
  hmac_sha256_ctx context;
  hmac_sha256_set_key(&context, key_.size(), key_.data());
  hmac_sha256_update(&context, message.size(), reinterpret_cast<const uint8_t*>(message.data()));
  uint8_t digest[SHA256_DIGEST_SIZE];
  hmac_sha256_digest(&context, sizeof digest, digest);
  return LowerHex(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::string RequestStateSigner::Issue(RequestStateClaims claims) const {
  Json payload = {{"tool", claims.tool},       {"run", claims.run_id},
                  {"action", claims.action_id}, {"version", claims.run_version},
                  {"request", claims.request_artifact_id}, {"exp", clock_.NowMillis() + ttl_ms_}};
  std::string body = CanonicalJson(payload);
  std::string payload_hex = LowerHex(body);
  return fmt::format("{}{}.{}", kVersionPrefix, payload_hex, Mac(payload_hex));
}

std::expected<RequestStateClaims, RequestStateRefusal> RequestStateSigner::Verify(
    std::string_view token, const RequestStateTarget& target) const {
  if (token.size() > kMaxTokenChars || !token.starts_with(kVersionPrefix)) {
    return std::unexpected(Refuse("malformed", "requestState is not one telic issued"));
  }
  std::string_view rest = token.substr(kVersionPrefix.size());
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return std::unexpected(Refuse("malformed", "requestState is not one telic issued"));
  std::string_view payload_hex = rest.substr(0, dot), mac_hex = rest.substr(dot + 1);
  std::string expected = Mac(payload_hex);
  if (!BytesEqualConstantTime(mac_hex, expected)) {
    return std::unexpected(Refuse("forged", "requestState failed its authentication check"));
  }
  auto body = Unhex(payload_hex);
  auto parsed = body ? ParseJsonStrict(*body) : Result<Json>(Fail(ErrorCode::kInvalidArgument, "not hex"));
  auto claims = parsed ? ClaimsFromPayload(*parsed) : std::nullopt;
  if (!claims) return std::unexpected(Refuse("malformed", "requestState payload is not one telic issued"));
  if (clock_.NowMillis() >= claims->expires_at_ms) {
    return std::unexpected(Refuse("expired", "requestState has expired; call the tool again without it"));
  }
  if (claims->tool != target.tool) {
    return std::unexpected(Refuse("other_tool", fmt::format("requestState was issued for {}, not {}", claims->tool, target.tool)));
  }
  if (claims->run_id != target.run_id) {
    return std::unexpected(Refuse("other_run", fmt::format("requestState was issued for another run, not {}", target.run_id)));
  }
  if (claims->run_version != target.run_version || claims->action_id != target.action_id) {
    return std::unexpected(Refuse("replayed", fmt::format("requestState was issued at run version {}; the run is at version "
                                                          "{} (answered or advanced); reload with telic_get_next_action",
                                                          claims->run_version, target.run_version)));
  }
  return *claims;
}

namespace {

// Writes a fresh key to a private temporary file and links it into place, so
// a reader never sees a partly written key; false when `path` already exists.
Result<bool> CreateKeyFile(const std::string& path, RequestStateKey& key) {
  if (!FillRandomBytes(key.data(), key.size())) return Fail(ErrorCode::kInternal, "the OS random source failed");
  std::string temporary = fmt::format("{}.{}.tmp", path, ::getpid());
  ::unlink(temporary.c_str());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot create the request-state key {}: {}", path, std::strerror(errno)));
  bool written = ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size()) && ::fsync(fd) == 0;
  ::close(fd);
  int linked = written ? ::link(temporary.c_str(), path.c_str()) : -1;
  int link_errno = errno;
  ::unlink(temporary.c_str());
  if (linked == 0) return true;
  if (written && link_errno == EEXIST) return false;
  return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot create the request-state key {}", path));
}

}  // namespace

Result<RequestStateKey> LoadOrCreateRequestStateKey(const std::string& path) {
  RequestStateKey key{};
  TELIC_ASSIGN_OR_RETURN(bool created, CreateKeyFile(path, key));
  if (created) return key;
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot read the request-state key {}", path));
  struct stat st {};
  bool safe = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 077) == 0 &&
              st.st_size == static_cast<off_t>(key.size());
  bool read_all = safe && ::read(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size());
  ::close(fd);
  if (!read_all) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("the request-state key {} must be a regular 32-byte file owned by this user with mode 0600", path));
  }
  return key;
}

}  // namespace telic::mcp
