#include "base/redact.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>
#include <optional>

namespace telic {
namespace {

constexpr const char* kCredential = "credential";
constexpr const char* kSecret = "secret";

// One redaction rule. The whole match is replaced, except capture group 1
// (when the pattern has one), which is kept in front of the marker: it holds
// the header name, assignment or scheme that shows what was removed.
struct RuleSpec {
  const char* pattern;
  const char* category;
  bool caseless;
};

// A secret-named key: *_TOKEN, *_KEY, *_SECRET, PASSWORD, api_key, ...
// (the name may carry a prefix such as GITHUB_ or db.).
#define TELIC_SECRET_NAME                                                                              \
  "(?:[A-Za-z0-9]+[_.-])*(?:token|secret|passw(?:or)?d|pwd_?hash|api[_-]?key|apikey|access[_-]?key|" \
  "private[_-]?key|secret[_-]?key|auth[_-]?key|session[_-]?key|signing[_-]?key|credentials?|"         \
  "client[_-]?secret|auth)|[A-Za-z0-9]+_key"

// The rules in the order they are applied. A pattern never matches text that
// starts with "[REDACTED", so applying the table twice changes nothing.
constexpr RuleSpec kRules[] = {
    // Private key material: PEM blocks, to their END line or the end of the text.
    {R"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z))",
     kSecret, false},
    {R"(AGE-SECRET-KEY-1[0-9A-Z]{58})", kSecret, false},
    // Header values.
    {R"(\b((?:proxy-)?authorization\s*+:\s*+(?:(?:bearer|basic|token|digest|bot|apikey|sso-key|negotiate)\s++)?+)(?!\[REDACTED)[^\s'"]{3,})",
     kCredential, true},
    {R"(\b((?:set-)?cookie\s*+:\s*+)(?!\[REDACTED)[^'"\r\n]{3,})", kCredential, true},
    {R"(\b((?:x-(?:api|auth|access|amz-security|vault|goog-api|functions)-(?:key|token)|api-key|private-token|x-api-secret)\s*+:\s*+)(?!\[REDACTED)[^\s'"]{3,})",
     kCredential, true},
    {R"(\b((?:bearer|basic)\s++)(?!\[REDACTED)[A-Za-z0-9._~+/=-]{8,})", kCredential, true},
    // URL credentials and secret-named query parameters.
    {R"(([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"]*:)(?!\[REDACTED)[^/\s@'"]+(?=@))", kCredential, false},
    {R"(([?&](?:access_token|refresh_token|id_token|token|api_key|apikey|key|secret|password|passwd|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|client_secret|auth|code)=)(?!\[REDACTED)[^&\s'"#]+)",
     kCredential, true},
    // Command-line options and assignments of secret-named keys.
    {R"(((?:^|\s)--?(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|auth-token|access-token|private-key)(?:=|\s++)["']?+)(?!\[REDACTED)[^\s'"]+)",
     kCredential, true},
    {R"(((?:^|\s)(?:-u|--user)\s++["']?[^\s:'"]+:)(?!\[REDACTED)[^\s'"]+)", kCredential, false},
    {R"(\b((?:)" TELIC_SECRET_NAME R"()["']?+\s*+[:=]\s*+")(?!\[REDACTED)[^"\r\n]{3,}(?="))", kCredential, true},
    {R"(\b((?:)" TELIC_SECRET_NAME R"()["']?+\s*+[:=]\s*+')(?!\[REDACTED)[^'\r\n]{3,}(?='))", kCredential, true},
    {R"(\b((?:)" TELIC_SECRET_NAME R"()\s*+=\s*+)(?!\[REDACTED)[^\s'";&|,)]{3,})", kCredential, true},
    {R"(\b((?:)" TELIC_SECRET_NAME R"()\s*+:\s*+)(?!\[REDACTED)[A-Za-z0-9_+./@=~-]{8,})", kCredential, true},
    {R"((AccountKey=)(?!\[REDACTED)[A-Za-z0-9+/=]{20,})", kCredential, true},
    // Well-known token formats.
    {R"(\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b)", kCredential, false},
    {R"(\b(?:gh[pousr]_[A-Za-z0-9_]{20,}|github_pat_[A-Za-z0-9_]{20,}))", kCredential, false},
    {R"(\bgl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,})", kCredential, false},
    {R"(\bxox[abposre]-[A-Za-z0-9-]{10,})", kCredential, false},
    {R"(\bxapp-\d-[A-Za-z0-9-]{10,})", kCredential, false},
    {R"((https://hooks\.slack\.com/services/)[A-Za-z0-9_/-]{8,})", kCredential, false},
    {R"((https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/)[0-9]+/[A-Za-z0-9_-]{8,})", kCredential,
     false},
    {R"(\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})", kCredential, false},
    {R"(\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})", kCredential, false},
    {R"(\bAIza[0-9A-Za-z_-]{35})", kCredential, false},
    {R"(\bya29\.[0-9A-Za-z_-]{20,})", kCredential, false},
    {R"(\bnpm_[A-Za-z0-9]{36})", kCredential, false},
    {R"(\bpypi-AgE[A-Za-z0-9_-]{20,})", kCredential, false},
    {R"(\bhf_[A-Za-z0-9]{30,})", kCredential, false},
    {R"(\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,})", kCredential, false},
    {R"(\bdo[opr]_v1_[a-f0-9]{64})", kCredential, false},
    {R"(\bdckr_pat_[A-Za-z0-9_-]{20,})", kCredential, false},
    {R"(\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})", kCredential, false},
    {R"(\bhv[sbr]\.[A-Za-z0-9_-]{20,})", kCredential, false},
    {R"(\bdapi[0-9a-f]{32})", kCredential, false},
    {R"(\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33})", kCredential, false},
    {R"(\bSK[0-9a-fA-F]{32}\b)", kCredential, false},
    {R"(\bATATT3[A-Za-z0-9_=-]{20,})", kCredential, false},
    {R"(\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})", kCredential, false},
};

#undef TELIC_SECRET_NAME

// Runs of base64 (standard or URL-safe) long enough to hold a credential.
constexpr const char* kBase64Run = R"((?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2})";

struct CodeDeleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
using Code = std::unique_ptr<pcre2_code, CodeDeleter>;

struct CompiledRule {
  Code code;
  const char* category;
};

// Compiles `pattern` (byte mode, JIT when the platform has it). The patterns
// are constants: a failure is a programming error, caught by the tests.
Code Compile(const char* pattern, bool caseless) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  uint32_t options = caseless ? PCRE2_CASELESS : 0;
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED, options, &error, &offset, nullptr);
  if (code != nullptr) pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return Code(code);
}

const std::vector<CompiledRule>& CompiledRules() {
  static const std::vector<CompiledRule> rules = [] {
    std::vector<CompiledRule> out;
    for (const RuleSpec& spec : kRules) out.push_back({Compile(spec.pattern, spec.caseless), spec.category});
    return out;
  }();
  return rules;
}

// Bounded matching: a hostile subject cannot make a pattern run away.
pcre2_match_context* Limits() {
  static pcre2_match_context* context = [] {
    pcre2_match_context* c = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(c, 1'000'000);
    pcre2_set_depth_limit(c, 10'000);
    return c;
  }();
  return context;
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

// Calls `on_match(start, end, keep_end)` for every match of `code` in
// `text`, left to right, without overlap. keep_end is the end of group 1
// (== start when the pattern has none or it did not take part).
template <typename OnMatch>
void ForEachMatch(const pcre2_code* code, const std::string& text, OnMatch on_match) {
  if (code == nullptr) return;
  // One match block per thread, reused: every pattern has at most 3 groups.
  // A nested call from on_match (the base64 rule runs the rules on decoded
  // text) reuses it too, which is safe: the offsets are copied out before
  // on_match runs, and the next pcre2_match refills the block.
  thread_local std::unique_ptr<pcre2_match_data, MatchDataDeleter> data(pcre2_match_data_create(4, nullptr));
  PCRE2_SIZE offset = 0;
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  while (offset <= text.size()) {
    int rc = pcre2_match(code, subject, text.size(), offset, 0, data.get(), Limits());
    if (rc < 0) return;  // no match, or a limit was hit: leave the rest as it is
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.get());
    size_t start = ov[0], end = ov[1];
    size_t keep_end = (rc >= 2 && ov[2] != PCRE2_UNSET) ? ov[3] : start;
    if (end <= start) {  // no rule matches empty text; guard against a loop anyway
      offset = start + 1;
      continue;
    }
    on_match(start, end, keep_end);
    offset = end;
  }
}

// Applies one rule to out.text.
void ApplyRule(const CompiledRule& rule, Redacted& out) {
  std::string result;
  size_t last = 0;
  bool any = false;
  ForEachMatch(rule.code.get(), out.text, [&](size_t, size_t end, size_t keep_end) {
    any = true;
    result.append(out.text, last, keep_end - last);
    result += "[REDACTED:";
    result += rule.category;
    result += "]";
    out.categories.emplace_back(rule.category);
    last = end;
  });
  if (!any) return;
  result.append(out.text, last, std::string::npos);
  out.text = std::move(result);
}

int Base64Value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

// Decodes standard or URL-safe base64 (padding optional); nullopt when the
// text is not base64 or decodes to bytes that are not printable text.
std::optional<std::string> DecodePrintableBase64(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char c : text) {
    int value = Base64Value(c);
    if (value < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      unsigned char byte = static_cast<unsigned char>((bits >> count) & 0xFF);
      if (byte < 0x20 && byte != '\n' && byte != '\r' && byte != '\t') return std::nullopt;
      if (byte == 0x7F) return std::nullopt;
      out.push_back(static_cast<char>(byte));
    }
  }
  return out;
}

// Redacts base64 runs whose decoded text the rules would redact.
void ApplyBase64Rule(Redacted& out) {
  static const Code run = Compile(kBase64Run, false);
  std::string result;
  size_t last = 0;
  bool any = false;
  ForEachMatch(run.get(), out.text, [&](size_t start, size_t end, size_t) {
    auto decoded = DecodePrintableBase64(std::string_view(out.text).substr(start, end - start));
    if (!decoded) return;
    Redacted inner{std::move(*decoded), {}};
    for (const CompiledRule& rule : CompiledRules()) ApplyRule(rule, inner);
    if (!inner.changed()) return;
    any = true;
    result.append(out.text, last, start - last);
    result += "[REDACTED:credential]";
    out.categories.emplace_back(kCredential);
    last = end;
  });
  if (!any) return;
  result.append(out.text, last, std::string::npos);
  out.text = std::move(result);
}

}  // namespace

Redacted RedactSecrets(std::string_view input) {
  Redacted out{std::string(input), {}};
  // Base64 first: the other rules could otherwise cut a run in two.
  ApplyBase64Rule(out);
  for (const CompiledRule& rule : CompiledRules()) ApplyRule(rule, out);
  return out;
}

std::string RedactedText(std::string_view text) { return RedactSecrets(text).text; }

}  // namespace telic
