#include "base/redact.h"

#include <regex>

namespace telic {
namespace {

struct Rule {
  std::regex pattern;
  std::string category;
  int keep_group;  // the capture group kept before the marker (0: none)
};

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> kRules = [] {
    auto icase = std::regex::ECMAScript | std::regex::icase;
    std::vector<Rule> rules;
    rules.push_back({std::regex(R"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$))"),
                     "secret", 0});
    rules.push_back({std::regex(R"(\b(?:AKIA|ASIA)[0-9A-Z]{16}\b)"), "credential", 0});
    rules.push_back({std::regex(R"(\b(?:gh[pousr]_[A-Za-z0-9_]{20,}|github_pat_[A-Za-z0-9_]{20,}))"), "credential", 0});
    rules.push_back({std::regex(R"(\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"), "credential", 0});
    rules.push_back({std::regex(R"(\b((?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,})", icase), "credential", 1});
    rules.push_back({std::regex(R"(([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+(?=@))"), "credential", 1});
    rules.push_back({std::regex(
                         R"(\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|client[_-]?secret|password|passwd|authorization)["']?\s*[:=]\s*["']?)(?!\[REDACTED)[A-Za-z0-9_+./:@=-]{8,})",
                         icase),
                     "credential", 1});
    return rules;
  }();
  return kRules;
}

}  // namespace

Redacted RedactSecrets(std::string_view input) {
  Redacted out{std::string(input), {}};
  for (const Rule& rule : Rules()) {
    std::string result;
    std::string& text = out.text;
    auto begin = std::sregex_iterator(text.begin(), text.end(), rule.pattern);
    auto end = std::sregex_iterator();
    if (begin == end) continue;
    size_t last = 0;
    for (auto it = begin; it != end; ++it) {
      const std::smatch& m = *it;
      result.append(text, last, static_cast<size_t>(m.position(0)) - last);
      if (rule.keep_group > 0) result += m[rule.keep_group].str();
      result += "[REDACTED:" + rule.category + "]";
      out.categories.push_back(rule.category);
      last = static_cast<size_t>(m.position(0) + m.length(0));
    }
    result.append(text, last, std::string::npos);
    text = std::move(result);
  }
  return out;
}

std::string RedactedText(std::string_view text) { return RedactSecrets(text).text; }

}  // namespace telic
