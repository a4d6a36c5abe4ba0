// The data-driven adversarial corpus of the permission engine
// (tests/policy_corpus/, docs/PERMISSIONS.md "The corpus").
//
// Every line of a *.jsonl file is one case: a named policy of policies.json
// (the `telic check --policy` file format, or raw layers), an action in the
// `telic check --action` format, and the expected decision, reason code,
// deciding layer and a substring of the rule. Cases whose policy has
// repositoryRoot "$ROOT" run against a real directory tree built from
// fixture.json (symlinks included).
//
// covers TEL-025, TEL-027, TEL-028, TEL-029, TEL-035, TEL-041, TEL-042,
// TEL-044, TEL-045, TEL-046, TEL-047, TEL-048, TEL-049, TEL-051, TEL-052,
// TEL-053, TEL-054, TEL-055
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "policy/engine.h"
#include "testing/temp_dir.h"

namespace telic::policy {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir() {
  return fs::path(__FILE__).parent_path().parent_path().parent_path() / "tests" / "policy_corpus";
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// The repository tree of fixture.json, built once per test program.
class Fixture {
 public:
  Fixture() {
    base_ = fs::canonical(dir_.path());
    root_ = base_ / "repo";
    outside_ = base_ / "outside";
    fs::create_directories(root_);
    fs::create_directories(outside_);
    Json spec = Json::parse(ReadFile(CorpusDir() / "fixture.json"));
    for (const auto& dir : spec["dirs"]) fs::create_directories(Path(dir.get<std::string>()));
    for (const auto& file : spec["files"]) {
      fs::path path = Path(file.get<std::string>());
      fs::create_directories(path.parent_path());
      std::ofstream(path) << "x\n";
    }
    for (auto it = spec["symlinks"].begin(); it != spec["symlinks"].end(); ++it) {
      fs::path link = Path(it.key());
      fs::create_directories(link.parent_path());
      fs::create_symlink(Substitute(it.value().get<std::string>()), link);
    }
  }
  std::string root() const { return root_.string(); }
  std::string Substitute(std::string text) const {
    return Replace(Replace(text, "$ROOT", root_.string()), "$OUTSIDE", outside_.string());
  }

 private:
  fs::path Path(const std::string& relative) const {
    std::string text = Substitute(relative);
    return text.front() == '/' ? fs::path(text) : root_ / text;
  }
  testing::TempDir dir_;
  fs::path base_, root_, outside_;
};

const Fixture& TheFixture() {
  static const Fixture* fixture = new Fixture();
  return *fixture;
}

struct Stack {
  std::vector<Layer> layers;
  RepoRoot root;
};

// A named policy: the `telic check` policy file format, or
// {"layers": [{"mode": m} | {"name", "allow", "deny"}], "repositoryRoot", "caseInsensitive"}.
Stack BuildStack(const Json& policy) {
  Stack stack;
  std::optional<std::string> root;
  if (policy.contains("layers")) {
    for (const auto& layer : policy["layers"]) {
      if (layer.contains("mode")) {
        stack.layers.push_back(ModeCeilingLayer(layer["mode"].get<std::string>()));
      } else {
        stack.layers.push_back({layer["name"], layer.value("allow", Json(nullptr)), layer.value("deny", Json(nullptr))});
      }
    }
    if (policy.contains("repositoryRoot")) root = policy["repositoryRoot"].get<std::string>();
  } else {
    auto parsed = PolicyStackFromJson(policy);
    EXPECT_TRUE(parsed.has_value()) << (parsed ? "" : parsed.error().message());
    if (!parsed) return stack;
    stack.layers = parsed->layers;
    root = parsed->repository_root;
  }
  if (root == "$ROOT") {
    stack.root = RepoRoot::OnDisk(TheFixture().root(), MatchOptions{false});
  } else if (root) {
    stack.root.path = *root;  // lexical only: the path does not exist here
  }
  stack.root.match.case_insensitive = policy.value("caseInsensitive", false);
  return stack;
}

ActionRequest BuildAction(const Json& testcase) {
  Json action = testcase["action"];
  ActionRequest request;
  auto parsed = ActionRequestFromJson(action);
  if (parsed) {
    request = *parsed;
  } else {
    // Unknown capabilities are refused by the parser; the engine must deny
    // them too, so build the request by hand.
    request.capability = action.value("capability", "");
    if (action.contains("target")) request.target = action["target"].get<std::string>();
  }
  if (testcase.contains("targetHex")) request.target = FromHex(testcase["targetHex"]);
  if (request.target) request.target = TheFixture().Substitute(*request.target);
  return request;
}

struct Counts {
  int denied = 0;
  int allowed = 0;
};

Counts RunCorpusFile(const std::string& name) {
  Json policies = Json::parse(ReadFile(CorpusDir() / "policies.json"));
  std::istringstream lines(ReadFile(CorpusDir() / (name + ".jsonl")));
  std::string line;
  Counts counts;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty()) continue;
    Json testcase = Json::parse(line);
    const std::string id = testcase["id"];
    SCOPED_TRACE(name + ".jsonl:" + std::to_string(number) + " " + id);
    const Json& policy_ref = testcase["policy"];
    Json policy = policy_ref.is_string() ? policies.at(policy_ref.get<std::string>()) : policy_ref;
    Stack stack = BuildStack(policy);
    Decision decision = Authorize(BuildAction(testcase), stack.layers, stack.root);
    const Json& expect = testcase["expect"];
    const bool want_allow = expect["decision"] == "allow";
    EXPECT_EQ(decision.allowed, want_allow) << "rule: " << decision.rule << " (" << decision.deciding_layer << ")";
    if (expect.contains("reasonCode")) {
      EXPECT_EQ(decision.reason_code, expect["reasonCode"]) << decision.rule;
    }
    if (expect.contains("layer")) {
      EXPECT_EQ(decision.deciding_layer, expect["layer"]) << decision.rule;
    }
    if (expect.contains("rule")) {
      EXPECT_NE(decision.rule.find(expect["rule"].get<std::string>()), std::string::npos)
          << "rule was: " << decision.rule;
    }
    // A denial always names its layer and appears in the summary.
    if (!decision.allowed) {
      EXPECT_FALSE(decision.deciding_layer.empty());
      EXPECT_FALSE(decision.denied_by.empty());
      EXPECT_EQ(decision.summary.rfind("Denied", 0), 0u) << decision.summary;
    } else {
      EXPECT_TRUE(decision.denied_by.empty());
    }
    (want_allow ? counts.allowed : counts.denied)++;
  }
  return counts;
}

TEST(PolicyCorpusTest, PathsAreDeniedWithTheirReason) {
  Counts counts = RunCorpusFile("paths");
  EXPECT_GE(counts.denied, 200);
}

TEST(PolicyCorpusTest, ShellCommandsAreDeniedWithTheirReason) {
  Counts counts = RunCorpusFile("shell");
  EXPECT_GE(counts.denied, 100);
}

TEST(PolicyCorpusTest, UrlsAreDeniedWithTheirReason) {
  Counts counts = RunCorpusFile("urls");
  EXPECT_GE(counts.denied, 100);
}

TEST(PolicyCorpusTest, LayersAndCapabilitiesDecideAsDocumented) {
  Counts counts = RunCorpusFile("layers");
  EXPECT_GE(counts.denied, 40);
}

TEST(PolicyCorpusTest, ModeCeilingsDecideEveryCapability) {
  Counts counts = RunCorpusFile("modes");
  EXPECT_EQ(counts.allowed + counts.denied, 75);
}

TEST(PolicyCorpusTest, LegitimateActionsAreAllowed) {
  Counts counts = RunCorpusFile("allowed");
  EXPECT_GE(counts.allowed, 100);
  EXPECT_EQ(counts.denied, 0);
}

}  // namespace
}  // namespace telic::policy
