// Topology classification at telic_start_run (CAGT, PROTOCOL §11.1).
// The rules are numbered as in PROTOCOL §11.1 ("first match wins"). REQUIREMENTS.md has
// no line item for CAGT topology (it is a reference-implementation feature),
// so these tests name no requirement IDs.
#include "controller/topology.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace telic::controller {
namespace {

const char kMicroRejected[] = "topologyOverride micro is incompatible with the current request signals";
const char kStandardRejected[] = "topologyOverride standard is incompatible with forensic classification signals";
const std::vector<std::string> kReadWrite = {"repository.read", "repository.write"};
const std::string kGrinning = "\xF0\x9F\x98\x80";  // 2 UTF-16 units

ClassifyInput In(std::string request, std::string mode, std::vector<std::string> granted = {},
                 std::optional<std::string> override_topology = std::nullopt) {
  ClassifyInput in;
  in.original_request = std::move(request);
  in.mode = *domain::ModeNamed(mode);
  in.granted = std::move(granted);
  if (override_topology) in.topology_override = *domain::TopologyNamed(*override_topology);
  return in;
}

Classification Classify(const ClassifyInput& in) {
  auto result = ClassifyRun(in);
  EXPECT_TRUE(result) << (result ? "" : result.error().message());
  return result ? *result : Classification{};
}

void ExpectClassified(const ClassifyInput& in, const std::string& topology, const std::string& code) {
  auto result = ClassifyRun(in);
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(domain::Name(result->topology), topology) << in.original_request;
  EXPECT_EQ(result->rationale_code, code) << in.original_request;
}

void ExpectRejected(const ClassifyInput& in, const std::string& message) {
  auto result = ClassifyRun(in);
  ASSERT_FALSE(result) << "classified as " << domain::Name(result->topology) << "/" << result->rationale_code;
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(result.error().message(), message);
}

std::string Lines(size_t count) {
  std::string out = "line 1";
  for (size_t i = 2; i <= count; ++i) out += "\nline " + std::to_string(i);
  return out;
}

// A request with `units` UTF-16 units and no keywords.
std::string OfLength(size_t units) { return std::string(units, 'x'); }

// ---------------------------------------------------------------------------
// Rule 1: override micro

TEST(ClassifyRunTest, Rule1MicroOverrideAcceptedForShortReport) {
  auto c = Classify(In("Summarize the README", "report_only", {}, "micro"));
  EXPECT_EQ(domain::Name(c.topology), "micro");
  EXPECT_EQ(c.rationale_code, "MICRO_SHORT_REPORT_ONLY");
  EXPECT_EQ(c.signals, std::vector<std::string>{"MICRO_SHORT_REPORT_ONLY"});
  ExpectClassified(In("Summarize the README", "report_only", {"repository.read"}, "micro"), "micro",
                   "MICRO_SHORT_REPORT_ONLY");
}

TEST(ClassifyRunTest, Rule1MicroOverrideRejectedByForensicSignal) {
  ExpectRejected(In("Please refactor the README", "report_only", {}, "micro"), kMicroRejected);
  ExpectRejected(In("Summarize", "analyze_and_fix", {}, "micro"), kMicroRejected);
  ClassifyInput with_domains = In("Summarize", "report_only", {}, "micro");
  with_domains.network_domains = {"example.com"};
  ExpectRejected(with_domains, kMicroRejected);
  ClassifyInput with_allowlist = In("Summarize", "report_only", {}, "micro");
  with_allowlist.shell_allowlist = {"npm test"};
  ExpectRejected(with_allowlist, kMicroRejected);
}

TEST(ClassifyRunTest, Rule1MicroOverrideRejectedWhenNoGatePasses) {
  ExpectRejected(In("Summarize", "plan_only", {"repository.read"}, "micro"), kMicroRejected);
  ExpectRejected(In("Summarize", "analyze_only", {"repository.read"}, "micro"), kMicroRejected);
  ExpectRejected(In("Is it either this or that", "report_only", {}, "micro"), kMicroRejected);
  ExpectRejected(In(OfLength(201), "report_only", {}, "micro"), kMicroRejected);
  ExpectRejected(In(Lines(6), "report_only", {}, "micro"), kMicroRejected);
  ExpectRejected(In("Summarize", "report_only", {"repository.read", "shell.inspect"}, "micro"), kMicroRejected);
}

TEST(ClassifyRunTest, Rule1MicroOverrideOfFixOnlyAlwaysFails) {
  // Quirk of PROTOCOL §11.1: the fix gate needs repository.write, itself a forensic signal.
  ExpectRejected(In("Fix the typo in src/app.ts", "fix_only", kReadWrite, "micro"), kMicroRejected);
  // Without the override the same input is micro (rule 4).
  ExpectClassified(In("Fix the typo in src/app.ts", "fix_only", kReadWrite), "micro", "MICRO_SHORT_FIX_ONLY");
}

// ---------------------------------------------------------------------------
// Rules 2 and 3: override standard / forensic

TEST(ClassifyRunTest, Rule2StandardOverrideWithoutForensicSignals) {
  auto c = Classify(In("Summarize the README", "report_only", {}, "standard"));
  EXPECT_EQ(domain::Name(c.topology), "standard");
  EXPECT_EQ(c.rationale_code, "OVERRIDE_STANDARD");
  EXPECT_EQ(c.signals, std::vector<std::string>{"OVERRIDE_STANDARD"});
  ExpectClassified(In("Plan it", "plan_only", {"repository.read"}, "standard"), "standard", "OVERRIDE_STANDARD");
  ExpectClassified(In("Look", "analyze_only", {"runtime.inspect"}, "standard"), "standard", "OVERRIDE_STANDARD");
}

TEST(ClassifyRunTest, Rule2StandardOverrideRejectedByForensicSignals) {
  ExpectRejected(In("Fix it", "analyze_and_fix", {}, "standard"), kStandardRejected);
  ExpectRejected(In("Migrate the db", "plan_only", {"repository.read"}, "standard"), kStandardRejected);
  ExpectRejected(In("Fix it", "fix_only", {"repository.read", "repository.write"}, "standard"), kStandardRejected);
  ExpectRejected(In(OfLength(513), "report_only", {}, "standard"), kStandardRejected);
  ClassifyInput with_domains = In("Read it", "analyze_only", {"network.read"}, "standard");
  with_domains.network_domains = {"example.com"};
  ExpectRejected(with_domains, kStandardRejected);
}

TEST(ClassifyRunTest, Rule3ForensicOverrideAlwaysAccepted) {
  auto plain = Classify(In("Summarize the README", "report_only", {}, "forensic"));
  EXPECT_EQ(domain::Name(plain.topology), "forensic");
  EXPECT_EQ(plain.rationale_code, "OVERRIDE_FORENSIC");
  EXPECT_EQ(plain.signals, std::vector<std::string>{"OVERRIDE_FORENSIC"});

  auto with_signals = Classify(In("Refactor it", "analyze_and_fix", {"repository.write"}, "forensic"));
  EXPECT_EQ(domain::Name(with_signals.topology), "forensic");
  EXPECT_EQ(with_signals.rationale_code, "OVERRIDE_FORENSIC");
  EXPECT_EQ(with_signals.signals,
            (std::vector<std::string>{"ANALYZE_AND_FIX", "COMPLEXITY_KEYWORD", "ELEVATED_CAPABILITY",
                                      "OVERRIDE_FORENSIC"}));
  EXPECT_TRUE(std::is_sorted(with_signals.signals.begin(), with_signals.signals.end()));

  // Override beats the micro fix gate.
  ExpectClassified(In("Fix the typo in src/app.ts", "fix_only", kReadWrite, "forensic"), "forensic",
                   "OVERRIDE_FORENSIC");
}

// ---------------------------------------------------------------------------
// Rule 4: micro fix gate (checked before forensic signals)

TEST(ClassifyRunTest, Rule4MicroFixGateBeatsForensicSignals) {
  ClassifyInput in = In("Fix the typo in src/app.ts", "fix_only", kReadWrite);
  // The write grant is a forensic signal ...
  EXPECT_EQ(ForensicSignals(in), std::vector<std::string>{"ELEVATED_CAPABILITY"});
  // ... but the fix gate is checked first.
  auto c = Classify(in);
  EXPECT_EQ(domain::Name(c.topology), "micro");
  EXPECT_EQ(c.rationale_code, "MICRO_SHORT_FIX_ONLY");
  EXPECT_EQ(c.signals, std::vector<std::string>{"MICRO_SHORT_FIX_ONLY"});
  // Grant order does not matter.
  ExpectClassified(In("Fix the typo in src/app.ts", "fix_only", {"repository.write", "repository.read"}), "micro",
                   "MICRO_SHORT_FIX_ONLY");
}

TEST(ClassifyRunTest, Rule4FilePathForms) {
  for (const char* request : {"Fix app.ts", "Fix README.md typo", "fix packages/core/src/index.tsx now",
                              "Update config.json", "tweak styles/main.css", "edit public/index.html",
                              "fix scripts/run.py", "fix src/lib.rs", "fix cmd/main.go", "fix web/app.jsx",
                              "fix lib/util.js", "Fix ./src/app.ts", "Fix my-dir/v1.2/file_name.test.ts"}) {
    ExpectClassified(In(request, "fix_only", kReadWrite), "micro", "MICRO_SHORT_FIX_ONLY");
  }
}

TEST(ClassifyRunTest, Rule4CaseInsensitiveDuplicatePathsCountOnce) {
  ExpectClassified(In("Fix src/App.ts, then re-read SRC/app.TS", "fix_only", kReadWrite), "micro",
                   "MICRO_SHORT_FIX_ONLY");
  ExpectClassified(In("Fix a.ts and a.ts again", "fix_only", kReadWrite), "micro", "MICRO_SHORT_FIX_ONLY");
}

TEST(ClassifyRunTest, Rule4TwoDistinctPathsAreNotMicro) {
  // Deliberate telic decision: "exactly one distinct file path" is enforced;
  // the reference's regex test effectively accepts one or more.
  ExpectClassified(In("Fix src/a.ts and src/b.ts", "fix_only", kReadWrite), "forensic", "ELEVATED_CAPABILITY");
  // src/app.ts and app.ts are different tokens.
  ExpectClassified(In("Fix src/app.ts, like app.ts", "fix_only", kReadWrite), "forensic", "ELEVATED_CAPABILITY");
}

TEST(ClassifyRunTest, Rule4NoFilePathIsNotMicro) {
  ExpectClassified(In("Fix the typo in the header", "fix_only", kReadWrite), "forensic", "ELEVATED_CAPABILITY");
  ExpectClassified(In("Fix notes.txt", "fix_only", kReadWrite), "forensic", "ELEVATED_CAPABILITY");
  ExpectClassified(In("Fix data.tsv", "fix_only", kReadWrite), "forensic", "ELEVATED_CAPABILITY");
}

TEST(ClassifyRunTest, Rule4GrantsMustBeExactlyReadAndWrite) {
  ExpectClassified(In("Fix src/app.ts", "fix_only", {"repository.read", "repository.write", "shell.inspect"}),
                   "forensic", "ELEVATED_CAPABILITY");
  ExpectClassified(In("Fix src/app.ts", "fix_only", {"repository.write"}), "forensic", "ELEVATED_CAPABILITY");
  // Only read: no forensic signal, so rule 8.
  ExpectClassified(In("Fix src/app.ts", "fix_only", {"repository.read"}), "standard", "FIX_ONLY");
  ExpectClassified(In("Fix src/app.ts", "fix_only", {}), "standard", "FIX_ONLY");
  // Duplicated grants still form the set {read, write}.
  ExpectClassified(In("Fix src/app.ts", "fix_only", {"repository.read", "repository.write", "repository.read"}),
                   "micro", "MICRO_SHORT_FIX_ONLY");
}

TEST(ClassifyRunTest, Rule4DivergenceAndComplexityWordsBlockTheGate) {
  ExpectClassified(In("Fix either src/app.ts", "fix_only", kReadWrite), "forensic", "ELEVATED_CAPABILITY");
  ExpectClassified(In("Fix src/app.ts, not sure how", "fix_only", kReadWrite), "forensic", "ELEVATED_CAPABILITY");
  // A complexity keyword is also a forensic signal and sorts first.
  ExpectClassified(In("Refactor src/app.ts", "fix_only", kReadWrite), "forensic", "COMPLEXITY_KEYWORD");
}

TEST(ClassifyRunTest, Rule4LengthAndLineLimits) {
  std::string prefix = "Fix src/app.ts ";
  ExpectClassified(In(prefix + OfLength(200 - prefix.size()), "fix_only", kReadWrite), "micro",
                   "MICRO_SHORT_FIX_ONLY");
  ExpectClassified(In(prefix + OfLength(201 - prefix.size()), "fix_only", kReadWrite), "forensic",
                   "ELEVATED_CAPABILITY");
  ExpectClassified(In("Fix src/app.ts\n" + Lines(4), "fix_only", kReadWrite), "micro", "MICRO_SHORT_FIX_ONLY");
  ExpectClassified(In("Fix src/app.ts\n" + Lines(5), "fix_only", kReadWrite), "forensic", "ELEVATED_CAPABILITY");
  // Surrounding whitespace is trimmed before measuring.
  ExpectClassified(In("\n\n  Fix src/app.ts\n" + Lines(4) + "\n\n\n  ", "fix_only", kReadWrite), "micro",
                   "MICRO_SHORT_FIX_ONLY");
}

TEST(FilePathTokensTest, DistinctLowercasedTokens) {
  EXPECT_EQ(FilePathTokens("Fix src/App.ts and SRC/app.ts"), std::vector<std::string>{"src/app.ts"});
  EXPECT_EQ(FilePathTokens("a.ts b.json c.md"), (std::vector<std::string>{"a.ts", "b.json", "c.md"}));
  EXPECT_EQ(FilePathTokens("no paths here"), std::vector<std::string>{});
  EXPECT_EQ(FilePathTokens(""), std::vector<std::string>{});
  EXPECT_EQ(FilePathTokens("index.tsx"), std::vector<std::string>{"index.tsx"});
  EXPECT_EQ(FilePathTokens("data.tsv notes.txt image.png"), std::vector<std::string>{});
  EXPECT_EQ(FilePathTokens("deep/er/path/to/file.go"), std::vector<std::string>{"deep/er/path/to/file.go"});
}

// ---------------------------------------------------------------------------
// Rule 5: forensic signals

TEST(ForensicSignalsTest, NoneForAPlainReport) {
  EXPECT_TRUE(ForensicSignals(In("Summarize", "report_only")).empty());
}

TEST(ForensicSignalsTest, AnalyzeAndFix) {
  EXPECT_EQ(ForensicSignals(In("Fix it", "analyze_and_fix")), std::vector<std::string>{"ANALYZE_AND_FIX"});
}

TEST(ForensicSignalsTest, ElevatedCapabilities) {
  for (const char* cap : {"repository.write", "repository.delete", "shell.execute", "runtime.restart",
                          "browser.mutate", "external.write", "subagent.spawn"}) {
    EXPECT_EQ(ForensicSignals(In("Look", "analyze_only", {cap})), std::vector<std::string>{"ELEVATED_CAPABILITY"})
        << cap;
  }
  for (const char* cap : {"repository.read", "shell.inspect", "runtime.inspect", "browser.inspect", "network.read"}) {
    EXPECT_TRUE(ForensicSignals(In("Look", "analyze_only", {cap})).empty()) << cap;
  }
}

TEST(ForensicSignalsTest, NetworkDomainsAndAllowlist) {
  ClassifyInput in = In("Look", "analyze_only");
  in.network_domains = {"example.com"};
  EXPECT_EQ(ForensicSignals(in), std::vector<std::string>{"NETWORK_READ"});
  in.network_domains.clear();
  in.shell_allowlist = {"npm test"};
  EXPECT_EQ(ForensicSignals(in), std::vector<std::string>{"SHELL_EXECUTE_ALLOWLIST"});
}

TEST(ForensicSignalsTest, LongRequestByLength) {
  EXPECT_TRUE(ForensicSignals(In(OfLength(512), "report_only")).empty());
  EXPECT_EQ(ForensicSignals(In(OfLength(513), "report_only")), std::vector<std::string>{"LONG_REQUEST"});
  // Length is measured in UTF-16 units after trimming.
  std::string emojis256;
  for (int i = 0; i < 256; ++i) emojis256 += kGrinning;  // 512 units, 1024 bytes
  EXPECT_TRUE(ForensicSignals(In(emojis256, "report_only")).empty());
  EXPECT_EQ(ForensicSignals(In(emojis256 + "x", "report_only")), std::vector<std::string>{"LONG_REQUEST"});
  EXPECT_TRUE(ForensicSignals(In("   \n" + OfLength(512) + " \n\t ", "report_only")).empty());
}

TEST(ForensicSignalsTest, LongRequestByLines) {
  EXPECT_TRUE(ForensicSignals(In(Lines(12), "report_only")).empty());
  EXPECT_EQ(ForensicSignals(In(Lines(13), "report_only")), std::vector<std::string>{"LONG_REQUEST"});
  // Trailing and leading blank lines are trimmed away.
  EXPECT_TRUE(ForensicSignals(In("\n\n" + Lines(12) + "\n\n\n", "report_only")).empty());
  // Interior blank lines count.
  EXPECT_EQ(ForensicSignals(In("a" + std::string(12, '\n') + "b", "report_only")),
            std::vector<std::string>{"LONG_REQUEST"});
  EXPECT_TRUE(ForensicSignals(In("a" + std::string(11, '\n') + "b", "report_only")).empty());
}

TEST(ForensicSignalsTest, ComplexityKeywordsAsWholeWords) {
  for (const char* request :
       {"Please refactor the parser", "REFACTOR it", "migrate the schema", "Review the architecture",
        "run a security audit", "search across codebase", "search across the codebase", "a multi-file change",
        "a multifile change", "pre-refactor cleanup", "refactor.", "(migrate)", "Architecture!",
        "Security Audit now", "MULTI-FILE"}) {
    EXPECT_EQ(ForensicSignals(In(request, "report_only")), std::vector<std::string>{"COMPLEXITY_KEYWORD"})
        << request;
  }
}

TEST(ForensicSignalsTest, ComplexityKeywordsNotInsideWords) {
  for (const char* request :
       {"refactoring the parser", "refactored", "unrefactor", "migrated", "migration", "architectures",
        "architectural", "security audits", "security  audit", "multi-files", "refactor_x", "x_refactor",
        "refactor2", "across codebases", "multifiles"}) {
    EXPECT_TRUE(ForensicSignals(In(request, "report_only")).empty()) << request;
  }
}

TEST(ForensicSignalsTest, SortedAlphabetically) {
  ClassifyInput in = In("Refactor\n" + Lines(13), "analyze_and_fix", {"shell.execute"});
  in.network_domains = {"example.com"};
  in.shell_allowlist = {"npm test"};
  EXPECT_EQ(ForensicSignals(in),
            (std::vector<std::string>{"ANALYZE_AND_FIX", "COMPLEXITY_KEYWORD", "ELEVATED_CAPABILITY",
                                      "LONG_REQUEST", "NETWORK_READ", "SHELL_EXECUTE_ALLOWLIST"}));
}

TEST(ClassifyRunTest, Rule5FirstSortedSignalIsTheCode) {
  ClassifyInput in = In(OfLength(600) + " refactor", "analyze_only", {"network.read"});
  in.network_domains = {"example.com"};
  auto c = Classify(in);
  EXPECT_EQ(domain::Name(c.topology), "forensic");
  EXPECT_EQ(c.rationale_code, "COMPLEXITY_KEYWORD");
  EXPECT_EQ(c.signals, (std::vector<std::string>{"COMPLEXITY_KEYWORD", "LONG_REQUEST", "NETWORK_READ"}));

  ExpectClassified(In("Fix it", "analyze_and_fix", {"repository.write"}), "forensic", "ANALYZE_AND_FIX");
  ExpectClassified(In("Fix it", "analyze_and_fix"), "forensic", "ANALYZE_AND_FIX");  // always forensic
  ExpectClassified(In(OfLength(513), "report_only"), "forensic", "LONG_REQUEST");
  ClassifyInput allowlist = In("Run it", "fix_only", {"repository.read"});
  allowlist.shell_allowlist = {"npm test"};
  ExpectClassified(allowlist, "forensic", "SHELL_EXECUTE_ALLOWLIST");
}

TEST(ClassifyRunTest, Rule5ForensicBeatsInvestigativePlanAndFix) {
  ExpectClassified(In("Refactor", "analyze_only", {"runtime.inspect"}), "forensic", "COMPLEXITY_KEYWORD");
  ExpectClassified(In("Plan", "plan_only", {"repository.read", "subagent.spawn"}), "forensic",
                   "ELEVATED_CAPABILITY");
  ExpectClassified(In("Fix", "fix_only", {"repository.read", "repository.write"}), "forensic",
                   "ELEVATED_CAPABILITY");
}

// ---------------------------------------------------------------------------
// Rules 6-8

TEST(ClassifyRunTest, Rule6InvestigativeMode) {
  for (const char* cap : {"runtime.inspect", "browser.inspect", "shell.inspect"}) {
    auto c = Classify(In("Why is it slow", "analyze_only", {"repository.read", cap}));
    EXPECT_EQ(domain::Name(c.topology), "standard") << cap;
    EXPECT_EQ(c.rationale_code, "INVESTIGATIVE_MODE") << cap;
    EXPECT_EQ(c.signals, std::vector<std::string>{"INVESTIGATIVE_MODE"}) << cap;
  }
  // The analyze_only default grants are investigative.
  ExpectClassified(In("Why", "analyze_only", {"repository.read", "shell.inspect", "runtime.inspect", "browser.inspect"}),
                   "standard", "INVESTIGATIVE_MODE");
}

TEST(ClassifyRunTest, Rule6NeedsAnInspectGrant) {
  ExpectClassified(In("Why", "analyze_only", {"repository.read"}), "standard", "DEFAULT_STANDARD");
  ExpectClassified(In("Why", "analyze_only", {"network.read"}), "standard", "DEFAULT_STANDARD");
  ExpectClassified(In("Why", "analyze_only", {}), "standard", "DEFAULT_STANDARD");
}

TEST(ClassifyRunTest, Rule7PlanOnly) {
  auto c = Classify(In("Plan the work", "plan_only", {"repository.read"}));
  EXPECT_EQ(domain::Name(c.topology), "standard");
  EXPECT_EQ(c.rationale_code, "PLAN_ONLY");
  EXPECT_EQ(c.signals, std::vector<std::string>{"PLAN_ONLY"});
  ExpectClassified(In("Plan", "plan_only", {}), "standard", "PLAN_ONLY");
  // Inspect grants do not make plan_only investigative.
  ExpectClassified(In("Plan", "plan_only", {"runtime.inspect"}), "standard", "PLAN_ONLY");
}

TEST(ClassifyRunTest, Rule8FixOnly) {
  auto c = Classify(In("Fix the bug", "fix_only", {"repository.read"}));
  EXPECT_EQ(domain::Name(c.topology), "standard");
  EXPECT_EQ(c.rationale_code, "FIX_ONLY");
  EXPECT_EQ(c.signals, std::vector<std::string>{"FIX_ONLY"});
  ExpectClassified(In("Fix src/app.ts", "fix_only", {"repository.read", "shell.inspect", "runtime.inspect"}),
                   "standard", "FIX_ONLY");
}

// ---------------------------------------------------------------------------
// Rule 9: micro report gate; rule 10: default

TEST(ClassifyRunTest, Rule9MicroShortReportOnly) {
  auto c = Classify(In("Summarize the README", "report_only"));
  EXPECT_EQ(domain::Name(c.topology), "micro");
  EXPECT_EQ(c.rationale_code, "MICRO_SHORT_REPORT_ONLY");
  EXPECT_EQ(c.signals, std::vector<std::string>{"MICRO_SHORT_REPORT_ONLY"});
  ExpectClassified(In("Summarize", "report_only", {"repository.read"}), "micro", "MICRO_SHORT_REPORT_ONLY");
  ExpectClassified(In("Summarize", "report_only", {"repository.read", "repository.read"}), "micro",
                   "MICRO_SHORT_REPORT_ONLY");
}

TEST(ClassifyRunTest, Rule9LengthBoundary) {
  ExpectClassified(In(OfLength(200), "report_only"), "micro", "MICRO_SHORT_REPORT_ONLY");
  ExpectClassified(In(OfLength(201), "report_only"), "standard", "DEFAULT_STANDARD");
  std::string emojis100;
  for (int i = 0; i < 100; ++i) emojis100 += kGrinning;  // 200 units
  ExpectClassified(In(emojis100, "report_only"), "micro", "MICRO_SHORT_REPORT_ONLY");
  ExpectClassified(In(emojis100 + "x", "report_only"), "standard", "DEFAULT_STANDARD");
  ExpectClassified(In("   " + OfLength(200) + "\n\n", "report_only"), "micro", "MICRO_SHORT_REPORT_ONLY");
}

TEST(ClassifyRunTest, Rule9LineBoundary) {
  ExpectClassified(In(Lines(5), "report_only"), "micro", "MICRO_SHORT_REPORT_ONLY");
  ExpectClassified(In(Lines(6), "report_only"), "standard", "DEFAULT_STANDARD");
  ExpectClassified(In(Lines(5) + "\n\n\n", "report_only"), "micro", "MICRO_SHORT_REPORT_ONLY");
}

TEST(ClassifyRunTest, Rule9DivergenceWordsAsWholeWords) {
  for (const char* request : {"Use either one", "EITHER way", "this or both", "It is unclear", "I am not sure",
                              "Choose between them", "Unclear."}) {
    ExpectClassified(In(request, "report_only"), "standard", "DEFAULT_STANDARD");
  }
  for (const char* request : {"neither works", "eithers", "color both", "unclearly stated", "not surely",
                              "choose betweenness"}) {
    ExpectClassified(In(request, "report_only"), "micro", "MICRO_SHORT_REPORT_ONLY");
  }
}

TEST(ClassifyRunTest, Rule9EveryGrantMustBeRepositoryRead) {
  for (const char* cap : {"shell.inspect", "runtime.inspect", "browser.inspect", "network.read"}) {
    SCOPED_TRACE(cap);
    ExpectClassified(In("Summarize", "report_only", {"repository.read", cap}), "standard", "DEFAULT_STANDARD");
  }
}

TEST(ClassifyRunTest, Rule10DefaultStandard) {
  auto c = Classify(In(OfLength(300), "report_only"));
  EXPECT_EQ(domain::Name(c.topology), "standard");
  EXPECT_EQ(c.rationale_code, "DEFAULT_STANDARD");
  EXPECT_EQ(c.signals, std::vector<std::string>{"DEFAULT_STANDARD"});
}

TEST(ClassifyRunTest, IsDeterministic) {
  ClassifyInput in = In("Refactor src/a.ts and src/b.ts", "analyze_only", {"runtime.inspect"});
  in.network_domains = {"example.com"};
  auto first = Classify(in);
  for (int i = 0; i < 10; ++i) {
    auto again = Classify(in);
    EXPECT_EQ(again.topology, first.topology);
    EXPECT_EQ(again.rationale_code, first.rationale_code);
    EXPECT_EQ(again.signals, first.signals);
  }
}

}  // namespace
}  // namespace telic::controller
