// The permission engine: layered authorization, deny-wins, mode ceilings,
// destructive capabilities, set intersection and containment
// (docs/PERMISSIONS.md).
#include "policy/engine.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/fake_file_system.h"
#include "policy/permission_set.h"

namespace telic::policy {
namespace {

using fakes::FakeFileSystem;

const RepoRoot kRoot{"/repo", nullptr, {}};

// EmptyPermissionSet() with `patch` merged in (RFC 7386).
Json Set(const std::string& patch) {
  Json set = EmptyPermissionSet();
  set.merge_patch(Json::parse(patch));
  return set;
}

Layer L(std::string name, const std::string& allow, const std::string& deny = "") {
  return Layer{std::move(name), Set(allow), deny.empty() ? Json(nullptr) : Set(deny)};
}

ActionRequest A(std::string capability, std::optional<std::string> target = std::nullopt) {
  return ActionRequest{std::move(capability), std::move(target), std::nullopt, std::nullopt};
}

// A set granting every capability for every target.
Json Everything() {
  return Set(R"({
    "repository": {"read": ["**"], "write": ["**"], "delete": ["**"]},
    "shell": {"inspect": true, "executeAllowlist": ["**"]},
    "runtime": {"inspect": ["**"], "restart": ["**"]},
    "browser": {"inspect": true, "mutateState": true},
    "network": {"readDomains": ["**"], "externalWrite": true},
    "subagents": {"spawn": true, "maximumChildren": 16, "maximumDepth": 4}
  })");
}

// One legitimate action per capability.
std::vector<ActionRequest> OneActionPerCapability() {
  return {A("repository.read", "src/a.ts"),  A("repository.write", "src/a.ts"),
          A("repository.delete", "src/a.ts"), A("shell.inspect", "git.status"),
          A("shell.execute", "npm test"),     A("runtime.inspect", "local"),
          A("runtime.restart", "local"),      A("browser.inspect"),
          A("browser.mutate"),                A("network.read", "https://example.com/"),
          A("external.write"),                A("subagent.spawn")};
}

const std::vector<std::string> kSixLayers = {"host_policy",       "user_authorization", "repository_policy",
                                             "task_contract",     "work_node:n1",       "tool_capability"};

// ---------------------------------------------------------------------------
// The intersection

TEST(AuthorizeTest, EmptyStackIsNoPolicy) {
  Decision d = Authorize(A("repository.read", "src/a.ts"), {}, kRoot);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.reason_code, "no_policy");
  EXPECT_EQ(d.deciding_layer, "no_policy");
  EXPECT_EQ(d.denied_by, std::vector<std::string>{"no_policy"});
  EXPECT_EQ(d.summary, "Denied: no policy grants exist.");
}

TEST(AuthorizeTest, EveryLayerMustGrant) {
  // covers TEL-041
  std::vector<Layer> layers = {ModeCeilingLayer("fix_only")};
  for (const auto& name : kSixLayers) layers.push_back(L(name, R"({"repository": {"write": ["src/**"]}})"));
  Decision allowed = Authorize(A("repository.write", "src/app.ts"), layers, kRoot);
  ASSERT_TRUE(allowed.allowed) << allowed.rule;
  EXPECT_EQ(allowed.reason_code, "allowed");
  EXPECT_EQ(allowed.summary, "Allowed by all 7 policies.");
  EXPECT_EQ(allowed.scope, "src/app.ts");
  EXPECT_EQ(allowed.deciding_layer, "");
  EXPECT_TRUE(allowed.denied_by.empty());

  // Each layer alone withdrawing its grant denies, and is named.
  for (size_t i = 1; i < layers.size(); ++i) {
    auto narrowed = layers;
    narrowed[i].allow = Set(R"({"repository": {"read": ["**"]}})");
    Decision d = Authorize(A("repository.write", "src/app.ts"), narrowed, kRoot);
    EXPECT_FALSE(d.allowed) << layers[i].name;
    EXPECT_EQ(d.reason_code, "policy_denied");
    EXPECT_EQ(d.deciding_layer, layers[i].name);
    EXPECT_EQ(d.rule, "no grant for repository.write");
    EXPECT_EQ(d.denied_by, std::vector<std::string>{layers[i].name});
    EXPECT_EQ(d.summary, "Denied by permission intersection: " + layers[i].name + ".");
  }
}

TEST(AuthorizeTest, SummaryListsEveryDenyingLayerInOrder) {
  std::vector<Layer> layers = {L("host_policy", R"({"repository": {"read": ["**"]}})"),
                               L("user_authorization", "{}"),
                               L("repository_policy", R"({"repository": {"read": ["**"]}})"),
                               L("task_contract", R"({"repository": {"read": ["docs/**"]}})")};
  Decision d = Authorize(A("repository.read", "src/a.ts"), layers, kRoot);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.denied_by, (std::vector<std::string>{"user_authorization", "task_contract"}));
  EXPECT_EQ(d.summary, "Denied by permission intersection: user_authorization, task_contract.");
  EXPECT_EQ(d.deciding_layer, "user_authorization");
  ASSERT_EQ(d.verdicts.size(), 4u);
  EXPECT_EQ(d.verdicts[0].layer, "host_policy");
  EXPECT_TRUE(d.verdicts[0].allowed);
  EXPECT_EQ(d.verdicts[0].rule, "entry ** covers src/a.ts");
  EXPECT_EQ(d.verdicts[1].rule, "no grant for repository.read");
  EXPECT_TRUE(d.verdicts[2].allowed);
  EXPECT_EQ(d.verdicts[3].rule, "no repository.read entry covers src/a.ts");
}

TEST(AuthorizeTest, EveryLayerIsNamedInTheDecision) {
  std::vector<Layer> layers = {ModeCeilingLayer("analyze_and_fix")};
  for (const auto& name : kSixLayers) layers.push_back(Layer{name, Everything(), nullptr});
  for (const auto& request : OneActionPerCapability()) {
    Decision d = Authorize(request, layers, kRoot);
    ASSERT_EQ(d.verdicts.size(), layers.size()) << request.capability;
    for (size_t i = 0; i < layers.size(); ++i) {
      EXPECT_EQ(d.verdicts[i].layer, layers[i].name);
      EXPECT_FALSE(d.verdicts[i].rule.empty());
    }
  }
}

TEST(AuthorizeTest, AbsenceIsDenial) {
  // covers TEL-042
  const std::vector<Json> nothing = {
      Json(nullptr), Json::object(), EmptyPermissionSet(),
      Json::parse(R"({"repository": {}, "shell": {}, "runtime": {}, "browser": {}, "network": {}, "subagents": {}})")};
  for (const auto& allow : nothing) {
    for (const auto& request : OneActionPerCapability()) {
      Decision d = Authorize(request, {Layer{"host_policy", allow, nullptr}}, kRoot);
      EXPECT_FALSE(d.allowed) << request.capability << " with " << allow.dump();
      EXPECT_EQ(d.rule.rfind("no grant for " + request.capability, 0), 0u) << d.rule;
    }
  }
}

TEST(AuthorizeTest, MalformedGrantsGrantNothingAndMalformedDeniesDeny) {
  Json bad_allow = Everything();
  bad_allow["repository"]["read"] = "**";  // not a list
  Decision d = Authorize(A("repository.read", "a"), {Layer{"host_policy", bad_allow, nullptr}}, kRoot);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.rule, "malformed grant for repository.read in host_policy");
  Json bad_list = Everything();
  bad_list["shell"]["executeAllowlist"] = Json::array({"npm test", 3});
  EXPECT_FALSE(Authorize(A("shell.execute", "npm test"), {Layer{"h", bad_list, nullptr}}, kRoot).allowed);
  Json bad_deny = Json::parse(R"({"repository": {"write": "src/**"}})");
  Decision denied = Authorize(A("repository.write", "docs/a"), {Layer{"repository_policy", Everything(), bad_deny}},
                              kRoot);
  EXPECT_FALSE(denied.allowed);
  EXPECT_NE(denied.rule.find("malformed deny set"), std::string::npos);
  EXPECT_FALSE(Authorize(A("browser.inspect"), {Layer{"h", Everything(), Json("deny")}}, kRoot).allowed);
  Json bad_limits = Everything();
  bad_limits["subagents"]["maximumDepth"] = -1;
  EXPECT_FALSE(Authorize(A("subagent.spawn"), {Layer{"h", bad_limits, nullptr}}, kRoot).allowed);
}

TEST(AuthorizeTest, ArgumentsAreCheckedAgainstTheScope) {
  // covers TEL-045
  std::vector<Layer> layers = {L("user_authorization", R"({"repository": {"write": ["src/**"]}})")};
  EXPECT_TRUE(Authorize(A("repository.write", "src/a/b.ts"), layers, kRoot).allowed);
  Decision d = Authorize(A("repository.write", "docs/readme.md"), layers, kRoot);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.rule, "no repository.write entry covers docs/readme.md");
  Decision missing = Authorize(A("repository.write"), layers, kRoot);
  EXPECT_FALSE(missing.allowed);
  EXPECT_EQ(missing.reason_code, "invalid_target");
  EXPECT_EQ(missing.rule, "invalid target for repository.write: repository.write needs a target");
}

// ---------------------------------------------------------------------------
// Deny wins

TEST(AuthorizeTest, ExplicitDenyWins) {
  Decision d = Authorize(A("repository.write", "infra/prod.yml"),
                         {L("repository_policy", R"({"repository": {"write": ["**"]}})",
                            R"({"repository": {"write": ["infra/**"]}})")},
                         kRoot);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.deciding_layer, "repository_policy");
  EXPECT_EQ(d.rule, "denied entry infra/** in repository_policy");
  EXPECT_EQ(d.denied_by, std::vector<std::string>{"repository_policy"});

  // A deny in one layer beats allows in all the others.
  std::vector<Layer> layers;
  for (const auto& name : kSixLayers) layers.push_back(Layer{name, Everything(), nullptr});
  layers[1].deny = Set(R"({"shell": {"executeAllowlist": ["npm test"]}})");
  Decision shell = Authorize(A("shell.execute", "npm test"), layers, kRoot);
  EXPECT_FALSE(shell.allowed);
  EXPECT_EQ(shell.rule, "denied entry npm test in user_authorization");
  EXPECT_TRUE(Authorize(A("shell.execute", "make"), layers, kRoot).allowed);
}

TEST(AuthorizeTest, DenyFlagsAndLists) {
  struct Case {
    ActionRequest request;
    std::string deny;
    std::string rule;
  };
  const std::vector<Case> cases = {
      {A("shell.inspect", "git.status"), R"({"shell": {"inspect": true}})", "explicit deny of shell.inspect in p"},
      {A("browser.inspect"), R"({"browser": {"inspect": true}})", "explicit deny of browser.inspect in p"},
      {A("browser.mutate"), R"({"browser": {"mutateState": true}})", "explicit deny of browser.mutate in p"},
      {A("external.write"), R"({"network": {"externalWrite": true}})", "explicit deny of external.write in p"},
      {A("subagent.spawn"), R"({"subagents": {"spawn": true}})", "explicit deny of subagent.spawn in p"},
      {A("runtime.restart", "api"), R"({"runtime": {"restart": ["api"]}})", "denied entry api in p"},
      {A("runtime.inspect", "api"), R"({"runtime": {"inspect": ["**"]}})", "denied entry ** in p"},
      {A("network.read", "https://API.example.com./x"), R"({"network": {"readDomains": ["api.example.com"]}})",
       "denied entry api.example.com in p"},
      {A("network.read", "https://x.example.com/"), R"({"network": {"readDomains": ["*.example.com"]}})",
       "denied entry *.example.com in p (an invalid entry denies every target)"},
      {A("repository.read", "src/a"), R"({"repository": {"read": ["[broken"]}})",
       "denied entry [broken in p (an invalid entry denies every target)"},
      {A("repository.delete", "."), R"({"repository": {"delete": ["**"]}})", "denied entry ** in p"},
      {A("shell.execute", "make"), R"({"shell": {"executeAllowlist": ["**"]}})", "denied entry ** in p"},
  };
  for (const auto& c : cases) {
    Decision d = Authorize(c.request, {Layer{"p", Everything(), Set(c.deny)}}, kRoot);
    EXPECT_FALSE(d.allowed) << c.request.capability;
    EXPECT_EQ(d.rule, c.rule);
    // The same deny set without the entry allows.
    EXPECT_TRUE(Authorize(c.request, {Layer{"p", Everything(), EmptyPermissionSet()}}, kRoot).allowed)
        << c.request.capability;
  }
}

TEST(AuthorizeTest, DenyMatchesTheSymlinkTargetToo) {
  FakeFileSystem fs;
  fs.AddDir("/repo/secrets");
  fs.AddDir("/repo/src");
  fs.AddSymlink("/repo/docs", "secrets");
  RepoRoot root{"/repo", &fs, {}};
  // The deny names the real directory; the request goes through the link.
  Decision d = Authorize(A("repository.read", "docs/key.pem"),
                         {L("repository_policy", R"({"repository": {"read": ["**"]}})",
                            R"({"repository": {"read": ["secrets/**"]}})")},
                         root);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.rule, "denied entry secrets/** in repository_policy");
  // An allow must cover where the path leads, not only its name.
  fs.AddSymlink("/repo/alias", "src");
  Decision a = Authorize(A("repository.write", "alias/a.ts"), {L("host", R"({"repository": {"write": ["alias/**"]}})")},
                         root);
  EXPECT_FALSE(a.allowed);
  EXPECT_EQ(a.rule, "no repository.write entry covers src/a.ts (where alias/a.ts leads through a symlink)");
  EXPECT_TRUE(Authorize(A("repository.write", "alias/a.ts"),
                        {L("host", R"({"repository": {"write": ["alias/**", "src/**"]}})")}, root)
                  .allowed);
}

TEST(AuthorizeTest, CaseTricksOnACaseInsensitiveFilesystem) {
  RepoRoot root{"/repo", nullptr, MatchOptions{true}};
  std::vector<Layer> layers = {
      L("repository_policy", R"({"repository": {"read": ["**"], "write": ["src/**"]}})",
        R"({"repository": {"read": ["secrets/**", "[!a]x"], "write": ["src/generated/**"]}})")};
  const std::vector<std::pair<std::string, std::string>> denied = {{"repository.read", "SECRETS/key"},
                                                                   {"repository.read", "Secrets/Key"},
                                                                   {"repository.read", "secrets/key"},
                                                                   {"repository.write", "src/Generated/x.ts"}};
  for (const auto& [capability, path] : denied) {
    Decision d = Authorize(A(capability, path), layers, root);
    EXPECT_FALSE(d.allowed) << path;
    EXPECT_EQ(d.rule.rfind("denied entry", 0), 0u) << path << ": " << d.rule;
  }
  // A deny with a negated class matches exactly or folded, whichever matches more.
  EXPECT_FALSE(Authorize(A("repository.read", "Ax"), layers, root).allowed);
  // Allow entries stay exact: SRC/ is not src/ for a grant.
  Decision allow = Authorize(A("repository.write", "SRC/a.ts"), layers, root);
  EXPECT_FALSE(allow.allowed);
  EXPECT_EQ(allow.rule, "no repository.write entry covers SRC/a.ts");
  EXPECT_TRUE(Authorize(A("repository.write", "src/a.ts"), layers, root).allowed);
  // On the case-sensitive default, SECRETS/ is another directory.
  EXPECT_TRUE(Authorize(A("repository.read", "SECRETS/key"), layers, kRoot).allowed);
  // Non-ASCII names cannot be folded safely (e.g. U+017F folds to 's').
  Decision long_s = Authorize(A("repository.read", "\xC5\xBF" "ecrets/key"), layers, root);
  EXPECT_FALSE(long_s.allowed);
  EXPECT_EQ(long_s.reason_code, "invalid_target");
}

// ---------------------------------------------------------------------------
// Invalid targets deny in every layer

TEST(AuthorizeTest, InvalidTargetsAreDeniedByEveryLayer) {
  std::vector<Layer> layers = {Layer{"host_policy", Everything(), nullptr},
                               Layer{"user_authorization", Everything(), nullptr}};
  struct Case {
    ActionRequest request;
    std::string rule;
  };
  const std::vector<Case> cases = {
      {A("repository.read", "../secrets.txt"), "invalid target for repository.read: '..' segment in path"},
      {A("repository.write", "/etc/passwd"), "absolute path outside the repository root"},
      {A("repository.delete", "src\\a"), "backslash"},
      {A("repository.read", "%2e%2e/x"), "percent-encoding"},
      {A("repository.read", std::string("a\0b", 3)), "NUL byte"},
      {A("shell.execute", "npm test && rm -rf /"), "invalid target for shell.execute: '&&' command list"},
      {A("shell.execute", "npm test\xEF\xBC\x9B rm"), "U+FF1B"},
      {A("shell.inspect", "ls -la"), "must be one of git.status"},
      {A("shell.inspect"), "shell.inspect needs a target"},
      {A("network.read", "https://user:pw@example.com/"), "credentials"},
      {A("network.read", "http://2130706433/"), "non-canonical IPv4"},
      {A("runtime.restart", "api*"), "not allowed in a service name"},
      {A("runtime.inspect", ""), "empty service name"},
  };
  for (const auto& c : cases) {
    Decision d = Authorize(c.request, layers, kRoot);
    EXPECT_FALSE(d.allowed) << c.rule;
    EXPECT_EQ(d.reason_code, "invalid_target");
    EXPECT_NE(d.rule.find(c.rule), std::string::npos) << d.rule;
    EXPECT_EQ(d.denied_by, (std::vector<std::string>{"host_policy", "user_authorization"}));
    EXPECT_EQ(d.deciding_layer, "host_policy");
    EXPECT_EQ(d.summary, "Denied by permission intersection: host_policy, user_authorization.");
  }
  Decision url = Authorize(A("network.read", "ftp://example.com/"), layers, kRoot);
  EXPECT_EQ(url.scope, "invalid_network_target");
}

TEST(AuthorizeTest, SymlinkEscapeIsDeniedEvenUnderStarStar) {
  FakeFileSystem fs;
  fs.AddDir("/repo");
  fs.AddFile("/outside/secret.txt");
  fs.AddSymlink("/repo/linked.txt", "/outside/secret.txt");
  Decision d = Authorize(A("repository.read", "linked.txt"), {Layer{"host_policy", Everything(), nullptr}},
                         RepoRoot{"/repo", &fs, {}});
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.rule, "invalid target for repository.read: path leaves the repository root through a symlink");
}

TEST(AuthorizeTest, UnknownCapability) {
  for (const std::string capability : {"shell.exec", "runtime.mutate", "", "Repository.Read"}) {
    Decision d = Authorize(A(capability, "x"), {Layer{"host_policy", Everything(), nullptr}}, kRoot);
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.reason_code, "unknown_capability");
    EXPECT_EQ(d.rule, "unknown capability '" + capability + "'");
  }
}

// ---------------------------------------------------------------------------
// Typed capabilities

TEST(AuthorizeTest, DestructiveCapabilitiesNeedTheirOwnGrant) {
  // covers TEL-046
  // Every non-destructive field is granted as widely as possible.
  Json broad = Set(R"({
    "repository": {"read": ["**"], "write": ["**"]},
    "shell": {"inspect": true},
    "runtime": {"inspect": ["**"]},
    "browser": {"inspect": true},
    "network": {"readDomains": ["**"]},
    "subagents": {"spawn": true, "maximumChildren": 16, "maximumDepth": 4}
  })");
  std::vector<Layer> layers = {Layer{"user_authorization", broad, nullptr}};
  const std::vector<ActionRequest> destructive = {A("repository.delete", "src/a.ts"), A("runtime.restart", "local"),
                                                  A("browser.mutate"), A("external.write"),
                                                  A("shell.execute", "npm test")};
  for (const auto& request : destructive) {
    Decision d = Authorize(request, layers, kRoot);
    EXPECT_FALSE(d.allowed) << request.capability;
    EXPECT_EQ(d.rule, "no grant for " + request.capability + " (it needs its own explicit grant)");
  }
  EXPECT_TRUE(Authorize(A("repository.write", "src/a.ts"), layers, kRoot).allowed);
  EXPECT_TRUE(Authorize(A("network.read", "https://example.com"), layers, kRoot).allowed);
  // Granting one destructive capability grants only that one.
  layers[0].allow["repository"]["delete"] = Json::array({"tmp/**"});
  EXPECT_TRUE(Authorize(A("repository.delete", "tmp/x"), layers, kRoot).allowed);
  EXPECT_FALSE(Authorize(A("repository.delete", "src/a.ts"), layers, kRoot).allowed);
  EXPECT_FALSE(Authorize(A("runtime.restart", "local"), layers, kRoot).allowed);
}

TEST(AuthorizeTest, ShellExecuteMustBeInEveryAllowlist) {
  // covers TEL-047, TEL-048
  std::vector<Layer> layers = {
      ModeCeilingLayer("fix_only"),
      L("user_authorization", R"({"shell": {"executeAllowlist": ["npm test", "make"]}})"),
      L("task_contract", R"({"shell": {"executeAllowlist": ["npm test", "make"]}})"),
      L("work_node:n1", R"({"shell": {"executeAllowlist": ["npm test"]}})"),
  };
  EXPECT_TRUE(Authorize(A("shell.execute", "npm test"), layers, kRoot).allowed);
  Decision make = Authorize(A("shell.execute", "make"), layers, kRoot);
  EXPECT_FALSE(make.allowed);
  EXPECT_EQ(make.denied_by, std::vector<std::string>{"work_node:n1"});
  EXPECT_EQ(make.rule, "no shell.execute entry covers make");
  for (const std::string command : {"npm test && make", "npm test; make", "npm test | make", "npm  test", "npm *"}) {
    Decision d = Authorize(A("shell.execute", command), layers, kRoot);
    EXPECT_FALSE(d.allowed) << command;
    EXPECT_EQ(d.reason_code, "invalid_target") << command;
  }
  // Allowlist entries are exact strings, never patterns.
  EXPECT_FALSE(
      Authorize(A("shell.execute", "npm test"), {L("n", R"({"shell": {"executeAllowlist": ["npm *"]}})")}, kRoot)
          .allowed);
}

TEST(AuthorizeTest, ShellInspectTakesOnlyTypedTargets) {
  // covers TEL-049
  std::vector<Layer> layers = {L("host_policy", R"({"shell": {"inspect": true}})")};
  for (const std::string target : {"git.status", "git.diff", "git.log", "network.listen", "process.list",
                                   "runtime.logs"}) {
    EXPECT_TRUE(Authorize(A("shell.inspect", target), layers, kRoot).allowed) << target;
  }
  EXPECT_FALSE(Authorize(A("shell.inspect", "git status"), layers, kRoot).allowed);
  EXPECT_FALSE(Authorize(A("shell.inspect", "cat /etc/passwd"), layers, kRoot).allowed);
  EXPECT_FALSE(Authorize(A("shell.inspect"), layers, kRoot).allowed);
}

TEST(AuthorizeTest, NetworkReadsMatchExactHostsInEveryLayer) {
  // covers TEL-051, TEL-052, TEL-053, TEL-054
  std::vector<Layer> layers = {
      L("user_authorization", R"({"network": {"readDomains": ["api.example.com", "example.org"]}})"),
      L("task_contract", R"({"network": {"readDomains": ["API.EXAMPLE.COM."]}})"),
      L("work_node:n1", R"({"network": {"readDomains": ["api.example.com"]}})"),
  };
  Decision ok = Authorize(A("network.read", "https://api.example.com/v1/items"), layers, kRoot);
  EXPECT_TRUE(ok.allowed) << ok.rule;
  EXPECT_EQ(ok.scope, "api.example.com");
  Decision org = Authorize(A("network.read", "https://example.org/"), layers, kRoot);
  EXPECT_FALSE(org.allowed);
  EXPECT_EQ(org.denied_by, (std::vector<std::string>{"task_contract", "work_node:n1"}));
  for (const std::string url : {"https://sub.api.example.com/", "https://example.com/",
                                "https://api.example.com.evil.invalid/", "https://user:pw@api.example.com/",
                                "http://evil.com@api.example.com/", "not a valid host"}) {
    EXPECT_FALSE(Authorize(A("network.read", url), layers, kRoot).allowed) << url;
  }
  EXPECT_FALSE(Authorize(A("network.read", "https://api.example.com/"),
                         {L("n", R"({"network": {"readDomains": ["*.example.com"]}})")}, kRoot)
                   .allowed);
}

TEST(AuthorizeTest, LocalIsAnExactHostNotALoopbackAlias) {
  std::vector<Layer> layers = {L("authorization", R"({"network": {"readDomains": ["local"]}})")};
  EXPECT_TRUE(Authorize(A("network.read", "http://local/status"), layers, kRoot).allowed);
  for (const std::string url : {"http://localhost/status", "http://127.0.0.1/status", "http://[::1]/status"}) {
    EXPECT_FALSE(Authorize(A("network.read", url), layers, kRoot).allowed) << url;
  }
}

TEST(AuthorizeTest, RuntimeServicesAreExactNames) {
  std::vector<Layer> layers = {L("host_policy", R"({"runtime": {"inspect": ["web", "api"], "restart": ["api"]}})")};
  EXPECT_TRUE(Authorize(A("runtime.inspect", "web"), layers, kRoot).allowed);
  EXPECT_TRUE(Authorize(A("runtime.restart", "api"), layers, kRoot).allowed);
  EXPECT_FALSE(Authorize(A("runtime.restart", "web"), layers, kRoot).allowed);
  EXPECT_FALSE(Authorize(A("runtime.inspect", "production"), layers, kRoot).allowed);
  EXPECT_FALSE(Authorize(A("runtime.inspect", "Web"), layers, kRoot).allowed);
  EXPECT_FALSE(Authorize(A("runtime.inspect"), layers, kRoot).allowed);
}

TEST(AuthorizeTest, SubagentLimits) {
  std::vector<Layer> layers = {
      L("host_policy", R"({"subagents": {"spawn": true, "maximumChildren": 3, "maximumDepth": 2}})"),
      L("work_node:n1", R"({"subagents": {"spawn": true, "maximumChildren": 2, "maximumDepth": 1}})")};
  auto spawn = [](int64_t depth, int64_t children) {
    return ActionRequest{"subagent.spawn", std::nullopt, depth, children};
  };
  EXPECT_TRUE(Authorize(A("subagent.spawn"), layers, kRoot).allowed);  // depth 1, 1 child by default
  EXPECT_TRUE(Authorize(spawn(1, 2), layers, kRoot).allowed);
  Decision deep = Authorize(spawn(2, 1), layers, kRoot);
  EXPECT_FALSE(deep.allowed);
  EXPECT_EQ(deep.denied_by, std::vector<std::string>{"work_node:n1"});
  EXPECT_EQ(deep.rule, "depth 2 exceeds maximumDepth 1");
  Decision many = Authorize(spawn(1, 3), layers, kRoot);
  EXPECT_EQ(many.rule, "children 3 exceeds maximumChildren 2");
  EXPECT_EQ(Authorize(spawn(-1, 1), layers, kRoot).reason_code, "invalid_target");
  EXPECT_FALSE(Authorize(A("subagent.spawn"), {L("h", R"({"subagents": {"spawn": true}})")}, kRoot).allowed);
}

// ---------------------------------------------------------------------------
// Intent-mode ceilings

std::string ModeKind(const std::string& capability) {
  return capability == "runtime.restart" ? "runtime.mutate" : capability;
}

TEST(ModeCeilingTest, AllFiveModesFollowModeAllows) {
  for (const auto& mode : Modes()) {
    std::vector<Layer> layers = {ModeCeilingLayer(mode), Layer{"user_authorization", Everything(), nullptr}};
    EXPECT_EQ(layers[0].name, "intent_mode:" + mode);
    for (const auto& request : OneActionPerCapability()) {
      Decision d = Authorize(request, layers, kRoot);
      EXPECT_EQ(d.allowed, ModeAllows(mode, ModeKind(request.capability))) << mode << " " << request.capability;
      if (!d.allowed) {
        EXPECT_EQ(d.deciding_layer, "intent_mode:" + mode);
      }
    }
  }
}

TEST(ModeCeilingTest, ReportOnlyAllowsNothing) {
  // covers TEL-027
  std::vector<Layer> layers = {ModeCeilingLayer("report_only"), Layer{"user_authorization", Everything(), nullptr}};
  for (const auto& request : OneActionPerCapability()) {
    EXPECT_FALSE(Authorize(request, layers, kRoot).allowed) << request.capability;
  }
}

TEST(ModeCeilingTest, PlanOnlyReadsButNeverExecutesOrMutates) {
  // covers TEL-028
  std::vector<Layer> layers = {ModeCeilingLayer("plan_only"), Layer{"user_authorization", Everything(), nullptr}};
  EXPECT_TRUE(Authorize(A("repository.read", "src/a.ts"), layers, kRoot).allowed);
  for (const auto& request : {A("shell.execute", "npm test"), A("shell.inspect", "git.status"),
                              A("runtime.inspect", "local")}) {
    EXPECT_FALSE(Authorize(request, layers, kRoot).allowed) << request.capability;
  }
  Decision write = Authorize(A("repository.write", "src/a.ts"), layers, kRoot);
  EXPECT_FALSE(write.allowed);
  EXPECT_EQ(write.rule, "denied entry ** in intent_mode:plan_only");
}

TEST(ModeCeilingTest, AnalyzeOnlyInspectsButNeverEditsOrRestarts) {
  // covers TEL-029
  std::vector<Layer> layers = {ModeCeilingLayer("analyze_only"), Layer{"user_authorization", Everything(), nullptr}};
  for (const auto& request : {A("repository.read", "src/a.ts"), A("browser.inspect"), A("runtime.inspect", "web"),
                              A("shell.inspect", "runtime.logs"), A("network.read", "https://example.com/")}) {
    EXPECT_TRUE(Authorize(request, layers, kRoot).allowed) << request.capability;
  }
  for (const auto& request : {A("repository.write", "a"), A("repository.delete", "a"), A("runtime.restart", "web"),
                              A("browser.mutate"), A("shell.execute", "npm test")}) {
    EXPECT_FALSE(Authorize(request, layers, kRoot).allowed) << request.capability;
  }
}

TEST(ModeCeilingTest, FixModesWriteAndExecuteButNeverWriteExternally) {
  for (const std::string mode : {"fix_only", "analyze_and_fix"}) {
    std::vector<Layer> layers = {ModeCeilingLayer(mode), Layer{"user_authorization", Everything(), nullptr}};
    EXPECT_TRUE(Authorize(A("repository.write", "src/a.ts"), layers, kRoot).allowed) << mode;
    EXPECT_TRUE(Authorize(A("repository.delete", "src/a.ts"), layers, kRoot).allowed) << mode;
    EXPECT_TRUE(Authorize(A("shell.execute", "npm test"), layers, kRoot).allowed) << mode;
    EXPECT_FALSE(Authorize(A("runtime.restart", "api"), layers, kRoot).allowed) << mode;
    EXPECT_FALSE(Authorize(A("browser.mutate"), layers, kRoot).allowed) << mode;
  }
  EXPECT_FALSE(Authorize(A("network.read", "https://example.com/"),
                         {ModeCeilingLayer("fix_only"), Layer{"u", Everything(), nullptr}}, kRoot)
                   .allowed);
}

TEST(ModeCeilingTest, ModeNeverEnablesExternalWrite) {
  // covers TEL-055
  for (const auto& mode : Modes()) {
    Layer ceiling = ModeCeilingLayer(mode);
    EXPECT_FALSE(ceiling.allow["network"]["externalWrite"].get<bool>()) << mode;
    EXPECT_TRUE(ceiling.deny["network"]["externalWrite"].get<bool>()) << mode;
    Decision d = Authorize(A("external.write"), {ceiling, Layer{"u", Everything(), nullptr}}, kRoot);
    EXPECT_FALSE(d.allowed) << mode;
    EXPECT_EQ(d.rule, "explicit deny of external.write in intent_mode:" + mode);
  }
}

TEST(ModeCeilingTest, UnknownOrMissingModeAllowsNothing) {
  for (const std::string mode : {"", "none", "REPORT_ONLY", "fix", "analyze_and_fix "}) {
    Layer ceiling = ModeCeilingLayer(mode);
    for (const auto& request : OneActionPerCapability()) {
      EXPECT_FALSE(Authorize(request, {ceiling, Layer{"u", Everything(), nullptr}}, kRoot).allowed)
          << mode << " " << request.capability;
    }
  }
}

TEST(ModeCeilingTest, AContractNarrowsButNeverWidensTheCeiling) {
  for (const auto& mode : Modes()) {
    Layer ceiling = ModeCeilingLayer(mode);
    // Narrowing: a contract within the ceiling is a subset.
    Json narrow = IntersectPermissionSets(ceiling.allow, Set(R"({"repository": {"read": ["src/**"]}})"));
    EXPECT_TRUE(PermissionSetIsSubset(narrow, ceiling.allow)) << mode;
    // Widening: asking for anything the mode does not allow is not a subset.
    if (!ModeAllows(mode, "repository.write")) {
      EXPECT_FALSE(PermissionSetIsSubset(Set(R"({"repository": {"write": ["src/a.ts"]}})"), ceiling.allow)) << mode;
    }
    EXPECT_FALSE(PermissionSetIsSubset(Set(R"({"network": {"externalWrite": true}})"), ceiling.allow)) << mode;
  }
}

// ---------------------------------------------------------------------------
// IntersectPermissionSets and PermissionSetIsSubset

TEST(IntersectPermissionSetsTest, Examples) {
  Json a = Set(R"({
    "repository": {"read": ["**"], "write": ["src/**", "docs/a.md"], "delete": ["tmp/**"]},
    "shell": {"inspect": true, "executeAllowlist": ["npm test", "make"]},
    "runtime": {"inspect": ["web", "api"], "restart": ["**"]},
    "browser": {"inspect": true, "mutateState": false},
    "network": {"readDomains": ["API.example.com", "example.org"], "externalWrite": true},
    "subagents": {"spawn": true, "maximumChildren": 3, "maximumDepth": 2}
  })");
  Json b = Set(R"({
    "repository": {"read": ["src/**"], "write": ["src/a/**", "docs/**"], "delete": ["src/**"]},
    "shell": {"inspect": false, "executeAllowlist": ["make", "npm run lint"]},
    "runtime": {"inspect": ["**"], "restart": ["api"]},
    "browser": {"inspect": true, "mutateState": true},
    "network": {"readDomains": ["api.example.com."], "externalWrite": false},
    "subagents": {"spawn": true, "maximumChildren": 1, "maximumDepth": 4}
  })");
  Json expected = Json::parse(R"({
    "repository": {"read": ["src/**"], "write": ["docs/a.md", "src/a/**"], "delete": []},
    "shell": {"inspect": false, "executeAllowlist": ["make"]},
    "runtime": {"inspect": ["web", "api"], "restart": ["api"]},
    "browser": {"inspect": true, "mutateState": false},
    "network": {"readDomains": ["api.example.com"], "externalWrite": false},
    "subagents": {"spawn": true, "maximumChildren": 1, "maximumDepth": 2}
  })");
  EXPECT_EQ(IntersectPermissionSets(a, b), expected);
  // Commutative up to order.
  Json ba = IntersectPermissionSets(b, a);
  EXPECT_TRUE(PermissionSetIsSubset(ba, expected) && PermissionSetIsSubset(expected, ba));
}

TEST(IntersectPermissionSetsTest, SpawnFalseZeroesLimitsAndInvalidEntriesDrop) {
  Json a = Set(R"({"subagents": {"spawn": false, "maximumChildren": 3, "maximumDepth": 1},
                   "repository": {"read": ["[broken", "**"]}, "shell": {"executeAllowlist": ["a && b", "make"]},
                   "network": {"readDomains": ["*.example.com", "example.com"]}})");
  Json b = Everything();
  Json out = IntersectPermissionSets(a, b);
  EXPECT_EQ(out["subagents"], EmptyPermissionSet()["subagents"]);
  EXPECT_EQ(out["repository"]["read"], Json::array({"**"}));
  EXPECT_EQ(out["shell"]["executeAllowlist"], Json::array({"make"}));
  EXPECT_EQ(out["network"]["readDomains"], Json::array({"example.com"}));
  EXPECT_EQ(IntersectPermissionSets(a, nullptr), EmptyPermissionSet());
  EXPECT_EQ(IntersectPermissionSets(Json("garbage"), b), EmptyPermissionSet());
}

TEST(PermissionSetIsSubsetTest, ReferenceRuleAndGlobs) {
  auto runtime = [](const char* scope) {
    return Set(std::string(R"({"runtime": {"inspect": [")") + scope + R"("]}})");
  };
  // The reference's own case: a local scope does not authorise production.
  EXPECT_FALSE(PermissionSetIsSubset(runtime("production"), runtime("local")));
  EXPECT_TRUE(PermissionSetIsSubset(runtime("local"), runtime("local")));
  EXPECT_TRUE(PermissionSetIsSubset(runtime("local"), runtime("**")));
  // Runtime names are exact: the p/** prefix rule applies to paths only.
  EXPECT_FALSE(PermissionSetIsSubset(runtime("api/web"), runtime("api/**")));

  auto write = [](const char* scope) {
    return Set(std::string(R"({"repository": {"write": [")") + scope + R"("]}})");
  };
  EXPECT_TRUE(PermissionSetIsSubset(write("src"), write("src/**")));
  EXPECT_TRUE(PermissionSetIsSubset(write("src/a/b.ts"), write("src/**")));
  EXPECT_TRUE(PermissionSetIsSubset(write("src/*.ts"), write("src/**")));
  EXPECT_TRUE(PermissionSetIsSubset(write("src/[ab].ts"), write("src/*.ts")));  // GlobSubset beyond PROTOCOL §12.5
  EXPECT_TRUE(PermissionSetIsSubset(write("**/*.md"), write("**")));
  EXPECT_FALSE(PermissionSetIsSubset(write("src/**"), write("src/*.ts")));
  EXPECT_FALSE(PermissionSetIsSubset(write("srcx"), write("src/**")));
  EXPECT_FALSE(PermissionSetIsSubset(write("**"), write("src/**")));

  auto domains = [](const char* scope) {
    return Set(std::string(R"({"network": {"readDomains": [")") + scope + R"("]}})");
  };
  EXPECT_TRUE(PermissionSetIsSubset(domains("API.example.com"), domains("api.example.com.")));
  EXPECT_FALSE(PermissionSetIsSubset(domains("api.example.com"), domains("example.com")));
  EXPECT_FALSE(PermissionSetIsSubset(domains("api.example.com"), domains("*.example.com")));

  auto shell = [](const char* command) {
    return Set(std::string(R"({"shell": {"executeAllowlist": [")") + command + R"("]}})");
  };
  EXPECT_TRUE(PermissionSetIsSubset(shell("npm test"), shell("npm test")));
  EXPECT_TRUE(PermissionSetIsSubset(shell("npm test"), shell("**")));
  EXPECT_FALSE(PermissionSetIsSubset(shell("**"), shell("npm test")));
  EXPECT_FALSE(PermissionSetIsSubset(shell("npm test"), shell("npm *")));

  EXPECT_TRUE(PermissionSetIsSubset(EmptyPermissionSet(), EmptyPermissionSet()));
  EXPECT_TRUE(PermissionSetIsSubset(EmptyPermissionSet(), Everything()));
  EXPECT_FALSE(PermissionSetIsSubset(Everything(), EmptyPermissionSet()));
  EXPECT_FALSE(PermissionSetIsSubset(Set(R"({"browser": {"mutateState": true}})"), EmptyPermissionSet()));
  Json four = Set(R"({"subagents": {"spawn": true, "maximumChildren": 4, "maximumDepth": 1}})");
  Json three = Set(R"({"subagents": {"spawn": true, "maximumChildren": 3, "maximumDepth": 1}})");
  EXPECT_FALSE(PermissionSetIsSubset(four, three));
  EXPECT_TRUE(PermissionSetIsSubset(three, four));
  Json malformed = EmptyPermissionSet();
  malformed["repository"]["read"] = "**";
  EXPECT_FALSE(PermissionSetIsSubset(malformed, Everything()));
}

// ---------------------------------------------------------------------------
// Properties over random layers and requests

struct Vocabulary {
  std::vector<std::string> globs = {"**", "src/**", "src/*.ts", "src/a.ts", "docs/**", "*", "**/*.md",
                                    "src/[ab].ts", "[", ".", "src"};
  std::vector<std::string> commands = {"npm test", "make", "make check", "**", "npm *"};
  std::vector<std::string> services = {"local", "api", "web", "**"};
  std::vector<std::string> domains = {"example.com", "api.example.com", "**", "[::1]", "*.example.com",
                                      "EXAMPLE.com."};
  std::vector<std::string> paths = {"src/a.ts", "src/b.ts", "src/x/y.ts", "docs/readme.md", "readme.md", ".",
                                    "../x",     "src/c.js", "/repo/src/a.ts", "src"};
  std::vector<std::string> command_targets = {"npm test", "make", "make check", "npm test && make", "rm -rf /"};
  std::vector<std::string> service_targets = {"local", "api", "db"};
  std::vector<std::string> urls = {"https://example.com/", "https://api.example.com/x", "http://[::1]/",
                                   "https://evil.com", "http://u@example.com", "EXAMPLE.COM"};
  std::vector<std::string> inspect_targets = {"git.status", "ls", "runtime.logs"};
};

Json RandomList(std::mt19937& rng, const std::vector<std::string>& vocabulary) {
  Json list = Json::array();
  int n = static_cast<int>(rng() % 3);
  for (int i = 0; i < n; ++i) list.push_back(vocabulary[rng() % vocabulary.size()]);
  return list;
}

Json RandomSet(std::mt19937& rng, const Vocabulary& v) {
  Json set = EmptyPermissionSet();
  set["repository"]["read"] = RandomList(rng, v.globs);
  set["repository"]["write"] = RandomList(rng, v.globs);
  set["repository"]["delete"] = RandomList(rng, v.globs);
  set["shell"]["inspect"] = rng() % 2 == 0;
  set["shell"]["executeAllowlist"] = RandomList(rng, v.commands);
  set["runtime"]["inspect"] = RandomList(rng, v.services);
  set["runtime"]["restart"] = RandomList(rng, v.services);
  set["browser"]["inspect"] = rng() % 2 == 0;
  set["browser"]["mutateState"] = rng() % 3 == 0;
  set["network"]["readDomains"] = RandomList(rng, v.domains);
  set["network"]["externalWrite"] = rng() % 3 == 0;
  set["subagents"] = {{"spawn", rng() % 2 == 0},
                      {"maximumChildren", static_cast<int>(rng() % 4)},
                      {"maximumDepth", static_cast<int>(rng() % 3)}};
  return set;
}

// A deny set with few entries (most layers deny little).
Json RandomDeny(std::mt19937& rng, const Vocabulary& v) {
  if (rng() % 3 != 0) return nullptr;
  Json set = EmptyPermissionSet();
  switch (rng() % 6) {
    case 0: set["repository"]["write"] = RandomList(rng, v.globs); break;
    case 1: set["repository"]["read"] = RandomList(rng, v.globs); break;
    case 2: set["shell"]["executeAllowlist"] = RandomList(rng, v.commands); break;
    case 3: set["network"]["readDomains"] = RandomList(rng, v.domains); break;
    case 4: set["browser"]["mutateState"] = true; break;
    default: set["subagents"]["spawn"] = true; break;
  }
  return set;
}

// A set near `base`: each list keeps a random part of its entries and may
// gain one random entry, booleans may flip to false (rarely to true), limits
// may shrink or grow by one. Often, but not always, a subset of `base`.
Json Perturb(std::mt19937& rng, const Vocabulary& v, const Json& base) {
  Json set = base;
  auto perturb_list = [&](Json& list, const std::vector<std::string>& vocabulary) {
    Json out = Json::array();
    for (const auto& entry : list) {
      if (rng() % 3 != 0) out.push_back(entry);
    }
    if (rng() % 6 == 0) out.push_back(vocabulary[rng() % vocabulary.size()]);
    list = out;
  };
  perturb_list(set["repository"]["read"], v.globs);
  perturb_list(set["repository"]["write"], v.globs);
  perturb_list(set["repository"]["delete"], v.globs);
  perturb_list(set["shell"]["executeAllowlist"], v.commands);
  perturb_list(set["runtime"]["inspect"], v.services);
  perturb_list(set["runtime"]["restart"], v.services);
  perturb_list(set["network"]["readDomains"], v.domains);
  for (auto* flag : {&set["shell"]["inspect"], &set["browser"]["inspect"], &set["browser"]["mutateState"],
                     &set["network"]["externalWrite"], &set["subagents"]["spawn"]}) {
    if (rng() % 3 == 0) *flag = rng() % 5 == 0;
  }
  for (const char* limit : {"maximumChildren", "maximumDepth"}) {
    int64_t value = set["subagents"][limit].get<int64_t>() + static_cast<int64_t>(rng() % 3) - 1;
    set["subagents"][limit] = std::max<int64_t>(0, value);
  }
  return set;
}

ActionRequest RandomRequest(std::mt19937& rng, const Vocabulary& v) {
  auto pick = [&](const std::vector<std::string>& list) { return list[rng() % list.size()]; };
  const auto& capability = Capabilities()[rng() % Capabilities().size()];
  ActionRequest request{capability, std::nullopt, std::nullopt, std::nullopt};
  if (capability.starts_with("repository.")) request.target = pick(v.paths);
  if (capability == "shell.execute") request.target = pick(v.command_targets);
  if (capability == "shell.inspect") request.target = pick(v.inspect_targets);
  if (capability.starts_with("runtime.")) request.target = pick(v.service_targets);
  if (capability == "network.read") request.target = pick(v.urls);
  if (capability == "subagent.spawn") {
    request.depth = static_cast<int64_t>(rng() % 3);
    request.children = static_cast<int64_t>(rng() % 4);
  }
  return request;
}

TEST(AuthorizePropertyTest, TheIntersectionIsNeverWiderThanAnyLayer) {
  // covers TEL-041
  std::mt19937 rng(424242);
  Vocabulary v;
  int allowed_count = 0;
  for (int round = 0; round < 4000; ++round) {
    std::vector<Layer> layers;
    int n = 1 + static_cast<int>(rng() % 6);
    if (rng() % 2 == 0) layers.push_back(ModeCeilingLayer(Modes()[rng() % Modes().size()]));
    for (int i = 0; i < n; ++i) {
      layers.push_back(Layer{"layer" + std::to_string(i), RandomSet(rng, v), RandomDeny(rng, v)});
    }
    ActionRequest request = RandomRequest(rng, v);
    Decision all = Authorize(request, layers, kRoot);
    bool every_single_allows = true;
    for (const auto& layer : layers) {
      Decision single = Authorize(request, {layer}, kRoot);
      if (!single.allowed) {
        every_single_allows = false;
        ASSERT_FALSE(all.allowed) << request.capability << " denied by " << layer.name << " alone";
        ASSERT_NE(std::find(all.denied_by.begin(), all.denied_by.end(), layer.name), all.denied_by.end());
      }
    }
    ASSERT_EQ(all.allowed, every_single_allows) << request.capability;
    if (all.allowed) ++allowed_count;
  }
  EXPECT_GT(allowed_count, 50);  // the allowed side was exercised too
}

TEST(AuthorizePropertyTest, IntersectionAndSubsetAreSound) {
  std::mt19937 rng(99);
  Vocabulary v;
  int subsets = 0;
  for (int round = 0; round < 1500; ++round) {
    Json b = RandomSet(rng, v);
    Json a = rng() % 3 == 0 ? RandomSet(rng, v) : Perturb(rng, v, b);
    Json both = IntersectPermissionSets(a, b);
    const bool a_within_b = PermissionSetIsSubset(a, b);
    subsets += a_within_b;
    EXPECT_TRUE(PermissionSetIsSubset(both, a));
    EXPECT_TRUE(PermissionSetIsSubset(both, b));
    for (int k = 0; k < 20; ++k) {
      ActionRequest request = RandomRequest(rng, v);
      bool allowed_a = Authorize(request, {Layer{"a", a, nullptr}}, kRoot).allowed;
      bool allowed_b = Authorize(request, {Layer{"b", b, nullptr}}, kRoot).allowed;
      bool allowed_both = Authorize(request, {Layer{"ab", both, nullptr}}, kRoot).allowed;
      ASSERT_TRUE(!allowed_both || (allowed_a && allowed_b))
          << request.capability << " " << request.target.value_or("") << "\n" << a.dump() << "\n" << b.dump();
      if (a_within_b) {
        ASSERT_TRUE(!allowed_a || allowed_b)
            << request.capability << " " << request.target.value_or("") << "\n" << a.dump() << "\n" << b.dump();
      }
    }
  }
  EXPECT_GT(subsets, 50);
}

// ---------------------------------------------------------------------------
// JSON inputs of `telic check`

TEST(ActionRequestFromJsonTest, ArgumentsByCapability) {
  auto write = ActionRequestFromJson(Json::parse(R"({"capability": "repository.write", "path": "src/a.ts"})"));
  ASSERT_TRUE(write);
  EXPECT_EQ(write->capability, "repository.write");
  EXPECT_EQ(write->target, "src/a.ts");
  EXPECT_EQ(ActionRequestFromJson(Json::parse(R"({"capability": "shell.execute", "command": "make"})"))->target,
            "make");
  EXPECT_EQ(ActionRequestFromJson(Json::parse(R"({"capability": "network.read", "url": "https://x.io"})"))->target,
            "https://x.io");
  EXPECT_EQ(ActionRequestFromJson(Json::parse(R"({"capability": "runtime.restart", "service": "api"})"))->target,
            "api");
  EXPECT_EQ(ActionRequestFromJson(Json::parse(R"({"capability": "shell.inspect", "target": "git.log"})"))->target,
            "git.log");
  EXPECT_EQ(ActionRequestFromJson(Json::parse(R"({"capability": "repository.read", "target": "a"})"))->target, "a");
  auto spawn = ActionRequestFromJson(Json::parse(R"({"capability": "subagent.spawn", "depth": 2, "children": 3})"));
  ASSERT_TRUE(spawn);
  EXPECT_EQ(spawn->depth, 2);
  EXPECT_EQ(spawn->children, 3);
  EXPECT_TRUE(ActionRequestFromJson(Json::parse(R"({"capability": "browser.mutate"})")));

  for (const char* bad : {R"([])", R"({})", R"({"capability": 1})", R"({"capability": "shell.exec"})",
                          R"({"capability": "repository.write", "command": "x"})",
                          R"({"capability": "repository.write", "path": "a", "target": "b"})",
                          R"({"capability": "repository.write", "path": 3})",
                          R"({"capability": "shell.execute", "depth": 1})",
                          R"({"capability": "subagent.spawn", "depth": -1})",
                          R"({"capability": "subagent.spawn", "children": 1.5})",
                          R"({"capability": "browser.mutate", "extra": true})"}) {
    auto result = ActionRequestFromJson(Json::parse(bad));
    EXPECT_FALSE(result) << bad;
    if (!result) {
      EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
    }
  }
}

TEST(PolicyStackFromJsonTest, SevenLayersInOrder) {
  auto stack = PolicyStackFromJson(Json::parse(R"({
    "mode": "fix_only",
    "host": {"repository": {"write": ["**"], "delete": ["**"]}},
    "authorization": {"granted": {"repository": {"write": ["src/**"], "delete": ["src/**"]}},
                      "denied": {"repository": {"delete": ["src/keep/**"]}}},
    "repositoryPolicy": {"repository": {"write": ["**"], "delete": ["**"]}},
    "taskContract": {"repository": {"write": ["src/**"], "delete": ["src/**"]}},
    "workPlanNode": {"repository": {"write": ["src/a.ts"], "delete": ["src/a.ts", "src/keep/x"]}},
    "workPlanNodeId": "n1",
    "toolCapability": {"repository": {"write": ["**"], "delete": ["**"]}},
    "repositoryRoot": "/repo"
  })"));
  ASSERT_TRUE(stack) << stack.error().message();
  std::vector<std::string> names;
  for (const auto& layer : stack->layers) names.push_back(layer.name);
  EXPECT_EQ(names, (std::vector<std::string>{"intent_mode:fix_only", "host_policy", "user_authorization",
                                             "repository_policy", "task_contract", "work_node:n1",
                                             "tool_capability"}));
  EXPECT_EQ(stack->repository_root, "/repo");
  EXPECT_TRUE(Authorize(A("repository.write", "src/a.ts"), stack->layers, kRoot).allowed);
  Decision other = Authorize(A("repository.write", "src/b.ts"), stack->layers, kRoot);
  EXPECT_EQ(other.denied_by, std::vector<std::string>{"work_node:n1"});
  Decision keep = Authorize(A("repository.delete", "src/keep/x"), stack->layers, kRoot);
  EXPECT_FALSE(keep.allowed);
  EXPECT_EQ(keep.rule, "denied entry src/keep/** in user_authorization");
  // The denied delete entry withdraws the user's whole delete grant (PROTOCOL §12.4).
  Decision a = Authorize(A("repository.delete", "src/a.ts"), stack->layers, kRoot);
  EXPECT_EQ(a.denied_by, std::vector<std::string>{"user_authorization"});
  EXPECT_EQ(a.rule, "no grant for repository.delete (it needs its own explicit grant)");
}

TEST(RemoveDeniedFieldsTest, MatchesEffectiveRunPermissionsWithoutTheMode) {
  Json granted = Everything();
  Json denied = Set(R"({"repository": {"read": ["infra/**"]}, "shell": {"inspect": true},
                        "subagents": {"spawn": true}})");
  Json out = RemoveDeniedFields(granted, denied);
  EXPECT_EQ(out["repository"]["read"], Json::array());
  EXPECT_EQ(out["repository"]["write"], Json::array({"**"}));
  EXPECT_FALSE(out["shell"]["inspect"].get<bool>());
  EXPECT_EQ(out["subagents"], EmptyPermissionSet()["subagents"]);
  EXPECT_TRUE(out["browser"]["mutateState"].get<bool>());
  // Under the most permissive mode, it agrees with PROTOCOL §12.4 on every field the mode allows.
  Json effective = EffectiveRunPermissions("analyze_and_fix", granted, denied);
  for (const char* pointer : {"/repository/read", "/repository/write", "/shell/inspect", "/subagents"}) {
    EXPECT_EQ(out[Json::json_pointer(pointer)], effective[Json::json_pointer(pointer)]) << pointer;
  }
  EXPECT_EQ(RemoveDeniedFields(granted, nullptr), granted);
  EXPECT_EQ(RemoveDeniedFields(granted, Json("garbage"))["repository"]["read"], Json::array());
}

TEST(PolicyStackFromJsonTest, ADeniedEntryRemovesTheGrantedField) {
  // As in PROTOCOL §12.4: denying infra/** withdraws the user's whole read grant.
  auto stack = PolicyStackFromJson(Json::parse(R"({
    "mode": "analyze_only",
    "authorization": {"granted": {"repository": {"read": ["**"]}}, "denied": {"repository": {"read": ["infra/**"]}}}
  })"));
  ASSERT_TRUE(stack);
  const Layer& user = stack->layers[2];
  EXPECT_EQ(Authorize(A("repository.read", "infra/x"), {user}, kRoot).rule,
            "denied entry infra/** in user_authorization");
  EXPECT_EQ(Authorize(A("repository.read", "src/x"), {user}, kRoot).rule, "no grant for repository.read");
}

TEST(PolicyStackFromJsonTest, MissingLayersGrantNothing) {
  auto stack =
      PolicyStackFromJson(Json::parse(R"({"mode": "analyze_and_fix", "host": {"repository": {"read": ["**"]}}})"));
  ASSERT_TRUE(stack);
  ASSERT_EQ(stack->layers.size(), 7u);
  EXPECT_EQ(stack->layers[5].name, "work_node");
  Decision d = Authorize(A("repository.read", "a"), stack->layers, kRoot);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.denied_by, (std::vector<std::string>{"user_authorization", "repository_policy", "task_contract",
                                                   "work_node", "tool_capability"}));
  auto no_mode = PolicyStackFromJson(Json::object());
  ASSERT_TRUE(no_mode);
  EXPECT_EQ(no_mode->layers[0].name, "intent_mode:none");
  for (const char* bad : {R"([])", R"({"mode": 1})", R"({"host": []})", R"({"authorization": {"grant": {}}})",
                          R"({"authorization": []})", R"({"extra": {}})", R"({"repositoryRoot": 1})"}) {
    EXPECT_FALSE(PolicyStackFromJson(Json::parse(bad))) << bad;
  }
}

}  // namespace
}  // namespace telic::policy
