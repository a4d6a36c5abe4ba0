#include "controller/topology.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "base/text.h"

namespace telic::controller {
namespace {

using domain::Mode;
using domain::Topology;

const std::set<std::string> kElevated = {"repository.write", "repository.delete", "shell.execute", "runtime.restart",
                                         "browser.mutate",   "external.write",    "subagent.spawn"};
const std::vector<std::string> kComplexity = {"refactor",        "migrate",             "architecture",
                                              "security audit",  "across codebase",     "across the codebase",
                                              "multifile",       "multi-file"};
const std::vector<std::string> kDivergence = {"either", "or both", "unclear", "not sure", "choose between"};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string LowerAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Case-insensitive whole-word match of any phrase (ASCII \b semantics).
bool ContainsWord(std::string_view text, const std::vector<std::string>& phrases) {
  std::string lower = LowerAscii(text);
  for (const auto& phrase : phrases) {
    for (size_t at = lower.find(phrase); at != std::string::npos; at = lower.find(phrase, at + 1)) {
      bool start_ok = at == 0 || !IsWordChar(lower[at - 1]);
      size_t end = at + phrase.size();
      bool end_ok = end == lower.size() || !IsWordChar(lower[end]);
      if (start_ok && end_ok) return true;
    }
  }
  return false;
}

size_t LineCount(std::string_view text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1; }

bool IsShort(std::string_view trimmed, size_t max_lines) { return Utf16Length(trimmed) <= 200 && LineCount(trimmed) <= max_lines; }

bool PassesMicroReportGate(const ClassifyInput& in) {
  std::string_view trimmed = TrimJs(in.original_request);
  if (in.mode != Mode::kReportOnly || !IsShort(trimmed, 5) || ContainsWord(trimmed, kDivergence)) return false;
  return std::all_of(in.granted.begin(), in.granted.end(), [](const auto& c) { return c == "repository.read"; });
}

bool PassesMicroFixGate(const ClassifyInput& in) {
  std::string_view trimmed = TrimJs(in.original_request);
  if (in.mode != Mode::kFixOnly || !IsShort(trimmed, 5)) return false;
  if (ContainsWord(trimmed, kDivergence) || ContainsWord(trimmed, kComplexity)) return false;
  std::set<std::string> granted(in.granted.begin(), in.granted.end());
  if (granted != std::set<std::string>{"repository.read", "repository.write"}) return false;
  return FilePathTokens(std::string(trimmed)).size() == 1;
}

Classification Make(Topology topology, std::string code, std::vector<std::string> signals) {
  return Classification{topology, std::move(code), std::move(signals)};
}

}  // namespace

std::vector<std::string> FilePathTokens(const std::string& text) {
  static const char kPattern[] = "\\b(?:[\\w.-]+/)*[\\w.-]+\\.(?:ts|tsx|js|jsx|md|json|css|html|py|rs|go)\\b";
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED, PCRE2_CASELESS,
                                   &error, &offset, nullptr);
  pcre2_match_data* match = pcre2_match_data_create_from_pattern(code, nullptr);
  std::set<std::string> distinct;
  PCRE2_SIZE start = 0;
  while (start <= text.size() &&
         pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start, 0, match, nullptr) > 0) {
    PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
    distinct.insert(LowerAscii(std::string_view(text).substr(ovector[0], ovector[1] - ovector[0])));
    start = ovector[1] > ovector[0] ? ovector[1] : ovector[0] + 1;
  }
  pcre2_match_data_free(match);
  pcre2_code_free(code);
  return {distinct.begin(), distinct.end()};
}

std::vector<std::string> ForensicSignals(const ClassifyInput& in) {
  std::vector<std::string> signals;
  if (in.mode == Mode::kAnalyzeAndFix) signals.push_back("ANALYZE_AND_FIX");
  if (std::any_of(in.granted.begin(), in.granted.end(), [](const auto& c) { return kElevated.count(c) > 0; })) {
    signals.push_back("ELEVATED_CAPABILITY");
  }
  if (!in.network_domains.empty()) signals.push_back("NETWORK_READ");
  if (!in.shell_allowlist.empty()) signals.push_back("SHELL_EXECUTE_ALLOWLIST");
  std::string_view trimmed = TrimJs(in.original_request);
  if (Utf16Length(trimmed) > 512 || LineCount(trimmed) > 12) signals.push_back("LONG_REQUEST");
  if (ContainsWord(trimmed, kComplexity)) signals.push_back("COMPLEXITY_KEYWORD");
  std::sort(signals.begin(), signals.end());
  return signals;
}

Result<Classification> ClassifyRun(const ClassifyInput& in) {
  std::vector<std::string> forensic = ForensicSignals(in);
  if (in.topology_override == Topology::kMicro) {
    bool fix = PassesMicroFixGate(in);
    if (!forensic.empty() || !(fix || PassesMicroReportGate(in))) {
      return Fail(ErrorCode::kInvalidArgument, "topologyOverride micro is incompatible with the current request signals");
    }
    std::string code = fix ? "MICRO_SHORT_FIX_ONLY" : "MICRO_SHORT_REPORT_ONLY";
    return Make(Topology::kMicro, code, {code});
  }
  if (in.topology_override) {
    if (*in.topology_override == Topology::kStandard && !forensic.empty()) {
      return Fail(ErrorCode::kInvalidArgument,
                  "topologyOverride standard is incompatible with forensic classification signals");
    }
    std::string code = *in.topology_override == Topology::kForensic ? "OVERRIDE_FORENSIC" : "OVERRIDE_STANDARD";
    std::vector<std::string> signals = forensic;
    signals.push_back(code);
    std::sort(signals.begin(), signals.end());
    return Make(*in.topology_override, code, signals);
  }
  if (PassesMicroFixGate(in)) return Make(Topology::kMicro, "MICRO_SHORT_FIX_ONLY", {"MICRO_SHORT_FIX_ONLY"});
  if (!forensic.empty()) return Make(Topology::kForensic, forensic.front(), forensic);
  bool investigative = std::any_of(in.granted.begin(), in.granted.end(), [](const auto& c) {
    return c == "runtime.inspect" || c == "browser.inspect" || c == "shell.inspect";
  });
  if (in.mode == Mode::kAnalyzeOnly && investigative) return Make(Topology::kStandard, "INVESTIGATIVE_MODE", {"INVESTIGATIVE_MODE"});
  if (in.mode == Mode::kPlanOnly) return Make(Topology::kStandard, "PLAN_ONLY", {"PLAN_ONLY"});
  if (in.mode == Mode::kFixOnly) return Make(Topology::kStandard, "FIX_ONLY", {"FIX_ONLY"});
  if (PassesMicroReportGate(in)) return Make(Topology::kMicro, "MICRO_SHORT_REPORT_ONLY", {"MICRO_SHORT_REPORT_ONLY"});
  return Make(Topology::kStandard, "DEFAULT_STANDARD", {"DEFAULT_STANDARD"});
}

}  // namespace telic::controller
