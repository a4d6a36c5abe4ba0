// Secret redaction for everything telic writes to a trace or an error
// message: credentials are replaced by "[REDACTED:<category>]" before the
// text is stored or returned.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace telic {

struct Redacted {
  std::string text;
  // One entry per replaced value, in order of appearance: "credential"
  // (tokens, keys, passwords) or "secret" (private key material).
  std::vector<std::string> categories;
};

// Replaces, in this order:
//   -----BEGIN ... PRIVATE KEY----- blocks (to the END line, or to the end
//     of the text when it is cut)                              → secret
//   AWS access key ids AKIA/ASIA + 16 [A-Z0-9]                   → credential
//   GitHub tokens gh[pousr]_ + 20 or more [A-Za-z0-9_], github_pat_… → credential
//   JWTs eyJ<8+>.<8+>.<8+> (base64url parts)                     → credential
//   "Bearer <token>" / "Basic <token>" (any case)               → credential
//   the password of "scheme://user:password@host"               → credential
//   values of api_key / token / secret / password / client_secret /
//     authorization assignments (":" or "=", 8+ chars)           → credential
Redacted RedactSecrets(std::string_view text);

// Shorthand: RedactSecrets(text).text.
std::string RedactedText(std::string_view text);

}  // namespace telic
