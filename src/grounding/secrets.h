// Secret detection for grounding (PROTOCOL §16.2, PROTOCOL §16.4): which paths
// look like credential files, and which text looks like it holds a
// credential. Hand-written scanners with the exact semantics of the
// reference's JavaScript regular expressions (including their Unicode
// case-folding of 's'/'k' under the /iu flags); no regex engine.
#pragma once

#include <optional>
#include <string_view>

namespace telic::grounding {

// PROTOCOL §16.2 secret-like path (lower-cased): basename starts ".env"; basename
// .git-credentials, .netrc, .npmrc or .pypirc; a segment credential(s) or
// secret(s); a basename starting credential(s)/secret(s) followed by '.' or
// its end; a basename starting "service-account" followed by '.', '-' or
// '_'; id_dsa, id_ecdsa, id_ed25519 or id_rsa followed by '.' or the end; a
// basename ending .key, .p12, .pfx or .pem.
bool IsSecretLikePath(std::string_view repository_path);
// The same for a path already lower-cased by AppendJsLowerCase.
bool IsSecretLikeLowerPath(std::string_view lower_path);

// PROTOCOL §16.4 content-secret rule (also used for Evidence). True when `text`
// contains any of:
//   -----BEGIN [<A-Z0-9 >+ ]PRIVATE KEY-----
//   \bAKIA[0-9A-Z]{16}\b
//   \bgh[pousr]_[A-Za-z0-9]{20,}\b
//   \beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b
//   (case-insensitive) a word api_key/api-key/apikey/authorization/
//   client_secret/client-secret/clientsecret/password/secret/token, optional
//   whitespace, ':' or '=', optional whitespace, an optional quote, then
//   at least 8 of [A-Za-z0-9_+./:@=-], unless the value starts with "${",
//   "<", or the whole word example/placeholder/redacted/changeme.
// `text` is expected to be UTF-8; other bytes never match a letter.
bool ContainsLikelySecret(std::string_view text);

// The scanner every artifact body is checked with at submission: the rules
// of ContainsLikelySecret plus an HTTP credential header, i.e. (case-
// insensitive) "authorization" or "proxy-authorization", optional
// whitespace, ':', optional whitespace, a scheme word (bearer, basic, token,
// digest), whitespace, then at least 8 of [A-Za-z0-9._~+/=-]. Returns the
// kind of the first rule that matches, in the order "private key block",
// "AWS access key id", "GitHub token", "JSON Web Token", "authorization
// header", "credential assignment"; nullopt when none does. The kind never
// contains any of `text`.
std::optional<std::string_view> LikelySecretKind(std::string_view text);

}  // namespace telic::grounding
