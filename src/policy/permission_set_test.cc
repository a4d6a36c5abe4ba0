// Capabilities, mode ceilings and PermissionSets (PROTOCOL §6.1, PROTOCOL §12.1-12.5).
#include "policy/permission_set.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace telic::policy {
namespace {

const std::vector<std::string> kAllCapabilities = {
    "repository.read", "repository.write", "repository.delete", "shell.inspect",
    "shell.execute",   "runtime.inspect",  "runtime.restart",   "browser.inspect",
    "browser.mutate",  "network.read",     "external.write",    "subagent.spawn"};

// ModeAllows kinds: capability names with runtime.restart spelled runtime.mutate.
const std::vector<std::string> kKinds = {
    "repository.read", "repository.write", "repository.delete", "shell.inspect",
    "shell.execute",   "runtime.inspect",  "runtime.mutate",    "browser.inspect",
    "browser.mutate",  "network.read",     "external.write",    "subagent.spawn"};

const std::vector<std::string> kModes = {"report_only", "plan_only", "analyze_only", "fix_only", "analyze_and_fix"};

// ---------------------------------------------------------------------------
// Vocabularies

TEST(CapabilitiesTest, TwelveInWireOrder) {
  EXPECT_EQ(Capabilities(), kAllCapabilities);
  for (const auto& c : kAllCapabilities) EXPECT_TRUE(IsCapability(c)) << c;
  EXPECT_FALSE(IsCapability(""));
  EXPECT_FALSE(IsCapability("shell.exec"));  // PROTOCOL §20 item 1: docs' example name is not a capability
  EXPECT_FALSE(IsCapability("runtime.mutate"));
  EXPECT_FALSE(IsCapability("Repository.Read"));
  EXPECT_FALSE(IsCapability("repository.read "));
}

TEST(ModesTest, FiveModes) {
  // covers TEL-025
  EXPECT_EQ(Modes(), kModes);
  for (const auto& m : kModes) EXPECT_TRUE(IsMode(m)) << m;
  EXPECT_FALSE(IsMode(""));
  EXPECT_FALSE(IsMode("analyze"));
  EXPECT_FALSE(IsMode("REPORT_ONLY"));
  EXPECT_FALSE(IsMode("report-only"));
}

// covers TEL-030: fix_only's ceiling holds its work to a preflight (reads and
// typed inspections), the scoped change (repository write/delete, the allowed
// commands) and its verification: no new investigation (browser, network), no
// restart, no browser or external mutation, however the run was granted.
TEST(ModesTest, FixOnlyCeilingIsPreflightChangeAndVerification) {
  const std::vector<std::string> allowed = {"repository.read", "repository.write", "repository.delete", "shell.inspect",
                                            "shell.execute",   "runtime.inspect",  "subagent.spawn"};
  for (const auto& kind : kKinds) {
    bool expected = std::find(allowed.begin(), allowed.end(), kind) != allowed.end();
    EXPECT_EQ(ModeAllows("fix_only", kind), expected) << kind;
  }
  Json everything = CapabilitiesToPermissionSet(kAllCapabilities, {"npm test"}, false, {"api.example.com"});
  Json effective = EffectiveRunPermissions("fix_only", everything, EmptyPermissionSet());
  EXPECT_EQ(effective["browser"]["inspect"], false);
  EXPECT_EQ(effective["browser"]["mutateState"], false);
  EXPECT_EQ(effective["network"]["readDomains"], Json::array());
  EXPECT_EQ(effective["network"]["externalWrite"], false);
  EXPECT_EQ(effective["runtime"]["restart"], Json::array());
  EXPECT_EQ(effective["repository"]["write"], Json::array({"**"}));
  EXPECT_EQ(effective["shell"]["executeAllowlist"], Json::array({"npm test"}));
}

TEST(DefaultGrantsForModeTest, PerMode) {
  EXPECT_EQ(DefaultGrantsForMode("report_only"), std::vector<std::string>{});
  EXPECT_EQ(DefaultGrantsForMode("plan_only"), std::vector<std::string>{"repository.read"});
  EXPECT_EQ(DefaultGrantsForMode("analyze_only"),
            (std::vector<std::string>{"repository.read", "shell.inspect", "runtime.inspect", "browser.inspect"}));
  const std::vector<std::string> fixing = {"repository.read", "repository.write", "shell.inspect", "runtime.inspect"};
  EXPECT_EQ(DefaultGrantsForMode("fix_only"), fixing);
  EXPECT_EQ(DefaultGrantsForMode("analyze_and_fix"), fixing);
  EXPECT_EQ(DefaultGrantsForMode("unknown"), std::vector<std::string>{});
}

TEST(DefaultGrantsForModeTest, DefaultsFitTheModeCeiling) {
  for (const auto& mode : kModes) {
    for (const auto& cap : DefaultGrantsForMode(mode)) {
      EXPECT_TRUE(ModeAllows(mode, cap)) << mode << " " << cap;
    }
  }
}

// ---------------------------------------------------------------------------
// PermissionSet shape

TEST(EmptyPermissionSetTest, SixFamiliesAllEmpty) {
  // covers TEL-044 (six typed families with their fields)
  Json expected = Json::parse(R"({
    "repository": {"read": [], "write": [], "delete": []},
    "shell": {"inspect": false, "executeAllowlist": []},
    "runtime": {"inspect": [], "restart": []},
    "browser": {"inspect": false, "mutateState": false},
    "network": {"readDomains": [], "externalWrite": false},
    "subagents": {"spawn": false, "maximumChildren": 0, "maximumDepth": 0}
  })");
  EXPECT_EQ(EmptyPermissionSet(), expected);
  EXPECT_EQ(CanonicalJson(EmptyPermissionSet()), CanonicalJson(expected));
}

// ---------------------------------------------------------------------------
// CapabilitiesToPermissionSet (PROTOCOL §12.2)

TEST(CapabilitiesToPermissionSetTest, NoCapabilitiesIsTheEmptySet) {
  EXPECT_EQ(CapabilitiesToPermissionSet({}, {}, false), EmptyPermissionSet());
  EXPECT_EQ(CapabilitiesToPermissionSet({}, {}, true), EmptyPermissionSet());
  // An allowlist or domains without the capability grant nothing.
  EXPECT_EQ(CapabilitiesToPermissionSet({}, {"npm test"}, false, {"example.com"}), EmptyPermissionSet());
}

TEST(CapabilitiesToPermissionSetTest, GrantedAllCapabilities) {
  Json set = CapabilitiesToPermissionSet(kAllCapabilities, {"npm test", "make", "npm test", "make check", "make"},
                                         false, {"api.example.com", "example.com"});
  Json expected = Json::parse(R"({
    "repository": {"read": ["**"], "write": ["**"], "delete": ["**"]},
    "shell": {"inspect": true, "executeAllowlist": ["npm test", "make", "make check"]},
    "runtime": {"inspect": ["local"], "restart": ["local"]},
    "browser": {"inspect": true, "mutateState": true},
    "network": {"readDomains": ["api.example.com", "example.com"], "externalWrite": true},
    "subagents": {"spawn": true, "maximumChildren": 3, "maximumDepth": 1}
  })");
  EXPECT_EQ(set, expected);
}

TEST(CapabilitiesToPermissionSetTest, AllowlistDeduplicatedInFirstSeenOrder) {
  Json set = CapabilitiesToPermissionSet({"shell.execute"}, {"z", "a", "z", "m", "a", "z"}, false);
  EXPECT_EQ(set["shell"]["executeAllowlist"], Json::array({"z", "a", "m"}));
  EXPECT_FALSE(set["shell"]["inspect"].get<bool>());
}

TEST(CapabilitiesToPermissionSetTest, ShellExecuteWithEmptyAllowlistIsUnusable) {
  Json set = CapabilitiesToPermissionSet({"shell.execute"}, {}, false);
  EXPECT_EQ(set["shell"]["executeAllowlist"], Json::array());
}

TEST(CapabilitiesToPermissionSetTest, EachCapabilityMapsToItsField) {
  struct Case {
    std::string capability;
    Json::json_pointer pointer;
    Json value;
  };
  const std::vector<Case> cases = {
      {"repository.read", Json::json_pointer("/repository/read"), Json::array({"**"})},
      {"repository.write", Json::json_pointer("/repository/write"), Json::array({"**"})},
      {"repository.delete", Json::json_pointer("/repository/delete"), Json::array({"**"})},
      {"shell.inspect", Json::json_pointer("/shell/inspect"), true},
      {"runtime.inspect", Json::json_pointer("/runtime/inspect"), Json::array({"local"})},
      {"runtime.restart", Json::json_pointer("/runtime/restart"), Json::array({"local"})},
      {"browser.inspect", Json::json_pointer("/browser/inspect"), true},
      {"browser.mutate", Json::json_pointer("/browser/mutateState"), true},
      {"external.write", Json::json_pointer("/network/externalWrite"), true},
  };
  for (const auto& c : cases) {
    for (bool denied : {false, true}) {
      Json set = CapabilitiesToPermissionSet({c.capability}, {}, denied);
      Json expected = EmptyPermissionSet();
      expected[c.pointer] = c.value;
      EXPECT_EQ(set, expected) << c.capability << " denied=" << denied;
    }
  }
}

TEST(CapabilitiesToPermissionSetTest, SubagentSpawnIsThreeChildrenDepthOne) {
  Json set = CapabilitiesToPermissionSet({"subagent.spawn"}, {}, false);
  EXPECT_EQ(set["subagents"], Json::parse(R"({"spawn":true,"maximumChildren":3,"maximumDepth":1})"));
  Json denied = CapabilitiesToPermissionSet({"subagent.spawn"}, {}, true);
  EXPECT_EQ(denied["subagents"], Json::parse(R"({"spawn":true,"maximumChildren":3,"maximumDepth":1})"));
}

TEST(CapabilitiesToPermissionSetTest, DeniedShellAndNetworkBecomeEverything) {
  Json set = CapabilitiesToPermissionSet({"shell.execute", "network.read"}, {"npm test"}, true, {"example.com"});
  EXPECT_EQ(set["shell"]["executeAllowlist"], Json::array({"**"}));
  EXPECT_EQ(set["network"]["readDomains"], Json::array({"**"}));
  Json no_lists = CapabilitiesToPermissionSet({"shell.execute", "network.read"}, {}, true);
  EXPECT_EQ(no_lists["shell"]["executeAllowlist"], Json::array({"**"}));
  EXPECT_EQ(no_lists["network"]["readDomains"], Json::array({"**"}));
}

TEST(CapabilitiesToPermissionSetTest, DeniedAllCapabilities) {
  Json set = CapabilitiesToPermissionSet(kAllCapabilities, {}, true);
  Json expected = Json::parse(R"({
    "repository": {"read": ["**"], "write": ["**"], "delete": ["**"]},
    "shell": {"inspect": true, "executeAllowlist": ["**"]},
    "runtime": {"inspect": ["local"], "restart": ["local"]},
    "browser": {"inspect": true, "mutateState": true},
    "network": {"readDomains": ["**"], "externalWrite": true},
    "subagents": {"spawn": true, "maximumChildren": 3, "maximumDepth": 1}
  })");
  EXPECT_EQ(set, expected);
}

TEST(CapabilitiesToPermissionSetTest, DuplicateCapabilitiesAreHarmless) {
  EXPECT_EQ(CapabilitiesToPermissionSet({"repository.read", "repository.read"}, {}, false),
            CapabilitiesToPermissionSet({"repository.read"}, {}, false));
}

// ---------------------------------------------------------------------------
// ModeAllows (PROTOCOL §12.3)

TEST(ModeAllowsTest, FullMatrix) {
  // covers TEL-027, TEL-028, TEL-029, TEL-055
  const std::map<std::string, std::set<std::string>> allowed = {
      {"report_only", {}},
      {"plan_only", {"repository.read", "subagent.spawn"}},
      {"analyze_only",
       {"repository.read", "shell.inspect", "runtime.inspect", "browser.inspect", "network.read", "subagent.spawn"}},
      {"fix_only",
       {"repository.read", "repository.write", "repository.delete", "shell.inspect", "shell.execute",
        "runtime.inspect", "subagent.spawn"}},
      {"analyze_and_fix",
       {"repository.read", "repository.write", "repository.delete", "shell.inspect", "shell.execute",
        "runtime.inspect", "browser.inspect", "network.read", "subagent.spawn"}},
  };
  for (const auto& mode : kModes) {
    for (const auto& kind : kKinds) {
      EXPECT_EQ(ModeAllows(mode, kind), allowed.at(mode).count(kind) > 0) << mode << " × " << kind;
    }
  }
}

TEST(ModeAllowsTest, MutationAndExternalWriteNeverAllowed) {
  // covers TEL-055 (mode policy alone never enables external_write)
  for (const auto& mode : kModes) {
    EXPECT_FALSE(ModeAllows(mode, "runtime.mutate")) << mode;
    EXPECT_FALSE(ModeAllows(mode, "runtime.restart")) << mode;
    EXPECT_FALSE(ModeAllows(mode, "browser.mutate")) << mode;
    EXPECT_FALSE(ModeAllows(mode, "external.write")) << mode;
  }
}

TEST(ModeAllowsTest, UnknownKindsAreDenied) {
  for (const auto& mode : kModes) {
    EXPECT_FALSE(ModeAllows(mode, "")) << mode;
    EXPECT_FALSE(ModeAllows(mode, "repository")) << mode;
    EXPECT_FALSE(ModeAllows(mode, "shell.exec")) << mode;
    EXPECT_FALSE(ModeAllows(mode, "Repository.Read")) << mode;
  }
}

// ModeAllows derives "reads" from `mode != "report_only"`, so a mode outside
// the five (or "") gets repository.read and subagent.spawn: fail-open. Modes
// are schema-checked before they reach here, so this is hardening (TEL-042:
// anything not explicitly permitted is denied). See report.
TEST(ModeAllowsTest, UnknownModeAllowsNothing) {
  for (const auto& kind : kKinds) {
    EXPECT_FALSE(ModeAllows("", kind)) << kind;
    EXPECT_FALSE(ModeAllows("bogus", kind)) << kind;
  }
}

// ---------------------------------------------------------------------------
// EffectiveRunPermissions (PROTOCOL §12.4)

Json GrantedAll() {
  return CapabilitiesToPermissionSet(kAllCapabilities, {"npm test", "make"}, false, {"example.com"});
}

TEST(EffectiveRunPermissionsTest, ReportOnlyIsAlwaysEmpty) {
  // covers TEL-027
  EXPECT_EQ(EffectiveRunPermissions("report_only", GrantedAll(), EmptyPermissionSet()), EmptyPermissionSet());
}

TEST(EffectiveRunPermissionsTest, NothingGrantedMeansNothingEffective) {
  // covers TEL-042
  for (const auto& mode : kModes) {
    EXPECT_EQ(EffectiveRunPermissions(mode, EmptyPermissionSet(), EmptyPermissionSet()), EmptyPermissionSet()) << mode;
  }
}

TEST(EffectiveRunPermissionsTest, PlanOnlyKeepsReadsAndSubagents) {
  // covers TEL-028
  Json effective = EffectiveRunPermissions("plan_only", GrantedAll(), EmptyPermissionSet());
  Json expected = EmptyPermissionSet();
  expected["repository"]["read"] = Json::array({"**"});
  expected["subagents"] = Json::parse(R"({"spawn":true,"maximumChildren":3,"maximumDepth":1})");
  EXPECT_EQ(effective, expected);
}

TEST(EffectiveRunPermissionsTest, AnalyzeOnlyHasNoEditsOrRestarts) {
  // covers TEL-029
  Json effective = EffectiveRunPermissions("analyze_only", GrantedAll(), EmptyPermissionSet());
  Json expected = Json::parse(R"({
    "repository": {"read": ["**"], "write": [], "delete": []},
    "shell": {"inspect": true, "executeAllowlist": []},
    "runtime": {"inspect": ["local"], "restart": []},
    "browser": {"inspect": true, "mutateState": false},
    "network": {"readDomains": ["example.com"], "externalWrite": false},
    "subagents": {"spawn": true, "maximumChildren": 3, "maximumDepth": 1}
  })");
  EXPECT_EQ(effective, expected);
}

TEST(EffectiveRunPermissionsTest, FixOnly) {
  Json effective = EffectiveRunPermissions("fix_only", GrantedAll(), EmptyPermissionSet());
  Json expected = Json::parse(R"({
    "repository": {"read": ["**"], "write": ["**"], "delete": ["**"]},
    "shell": {"inspect": true, "executeAllowlist": ["npm test", "make"]},
    "runtime": {"inspect": ["local"], "restart": []},
    "browser": {"inspect": false, "mutateState": false},
    "network": {"readDomains": [], "externalWrite": false},
    "subagents": {"spawn": true, "maximumChildren": 3, "maximumDepth": 1}
  })");
  EXPECT_EQ(effective, expected);
}

TEST(EffectiveRunPermissionsTest, AnalyzeAndFixNeverGetsRestartBrowserMutateOrExternalWrite) {
  // covers TEL-055
  Json effective = EffectiveRunPermissions("analyze_and_fix", GrantedAll(), EmptyPermissionSet());
  Json expected = Json::parse(R"({
    "repository": {"read": ["**"], "write": ["**"], "delete": ["**"]},
    "shell": {"inspect": true, "executeAllowlist": ["npm test", "make"]},
    "runtime": {"inspect": ["local"], "restart": []},
    "browser": {"inspect": true, "mutateState": false},
    "network": {"readDomains": ["example.com"], "externalWrite": false},
    "subagents": {"spawn": true, "maximumChildren": 3, "maximumDepth": 1}
  })");
  EXPECT_EQ(effective, expected);
}

TEST(EffectiveRunPermissionsTest, AnyDeniedEntryRemovesTheWholeFamilyList) {
  Json granted = GrantedAll();
  Json denied = EmptyPermissionSet();
  denied["repository"]["write"] = Json::array({"docs/**"});      // narrower than the grant
  denied["shell"]["executeAllowlist"] = Json::array({"make"});   // one of two commands
  denied["network"]["readDomains"] = Json::array({"other.org"});  // not even granted
  denied["runtime"]["inspect"] = Json::array({"remote"});
  Json effective = EffectiveRunPermissions("analyze_and_fix", granted, denied);
  EXPECT_EQ(effective["repository"]["write"], Json::array());
  EXPECT_EQ(effective["shell"]["executeAllowlist"], Json::array());
  EXPECT_EQ(effective["network"]["readDomains"], Json::array());
  EXPECT_EQ(effective["runtime"]["inspect"], Json::array());
  // Untouched families stay.
  EXPECT_EQ(effective["repository"]["read"], Json::array({"**"}));
  EXPECT_EQ(effective["repository"]["delete"], Json::array({"**"}));
}

TEST(EffectiveRunPermissionsTest, DeniedCapabilitiesFromTheWireMapping) {
  // As telic_start_run builds them: denied capabilities through the denied mapping.
  Json denied = CapabilitiesToPermissionSet({"shell.execute", "network.read", "repository.delete"}, {}, true);
  Json effective = EffectiveRunPermissions("analyze_and_fix", GrantedAll(), denied);
  EXPECT_EQ(effective["shell"]["executeAllowlist"], Json::array());
  EXPECT_EQ(effective["network"]["readDomains"], Json::array());
  EXPECT_EQ(effective["repository"]["delete"], Json::array());
  EXPECT_EQ(effective["repository"]["write"], Json::array({"**"}));
}

TEST(EffectiveRunPermissionsTest, BooleansNeedCeilingAndGrantAndNoDenial) {
  struct Case {
    const char* mode;
    bool granted;
    bool denied;
    bool expected;
  };
  // shell.inspect: allowed by analyze_only, not by plan_only.
  for (const Case& c : std::vector<Case>{{"analyze_only", true, false, true},
                                          {"analyze_only", true, true, false},
                                          {"analyze_only", false, false, false},
                                          {"analyze_only", false, true, false},
                                          {"plan_only", true, false, false},
                                          {"report_only", true, false, false}}) {
    Json granted = EmptyPermissionSet();
    granted["shell"]["inspect"] = c.granted;
    granted["browser"]["inspect"] = c.granted;
    Json denied = EmptyPermissionSet();
    denied["shell"]["inspect"] = c.denied;
    denied["browser"]["inspect"] = c.denied;
    Json effective = EffectiveRunPermissions(c.mode, granted, denied);
    EXPECT_EQ(effective["shell"]["inspect"].get<bool>(), c.expected)
        << c.mode << " granted=" << c.granted << " denied=" << c.denied;
    EXPECT_EQ(effective["browser"]["inspect"].get<bool>(), c.expected)
        << c.mode << " granted=" << c.granted << " denied=" << c.denied;
  }
}

TEST(EffectiveRunPermissionsTest, BrowserMutateAndExternalWriteStayFalseEvenWhenGranted) {
  Json granted = EmptyPermissionSet();
  granted["browser"]["mutateState"] = true;
  granted["network"]["externalWrite"] = true;
  for (const auto& mode : kModes) {
    Json effective = EffectiveRunPermissions(mode, granted, EmptyPermissionSet());
    EXPECT_FALSE(effective["browser"]["mutateState"].get<bool>()) << mode;
    EXPECT_FALSE(effective["network"]["externalWrite"].get<bool>()) << mode;
  }
}

TEST(EffectiveRunPermissionsTest, SubagentsNeedCeilingGrantAndNoDenial) {
  Json granted = CapabilitiesToPermissionSet({"subagent.spawn"}, {}, false);
  Json zero = EmptyPermissionSet()["subagents"];
  EXPECT_EQ(EffectiveRunPermissions("plan_only", granted, EmptyPermissionSet())["subagents"], granted["subagents"]);
  EXPECT_EQ(EffectiveRunPermissions("report_only", granted, EmptyPermissionSet())["subagents"], zero);
  Json denied = CapabilitiesToPermissionSet({"subagent.spawn"}, {}, true);
  EXPECT_EQ(EffectiveRunPermissions("fix_only", granted, denied)["subagents"], zero);
  EXPECT_EQ(EffectiveRunPermissions("fix_only", EmptyPermissionSet(), EmptyPermissionSet())["subagents"], zero);
  // Granted numbers are copied as they are.
  Json custom = EmptyPermissionSet();
  custom["subagents"] = Json::parse(R"({"spawn":true,"maximumChildren":5,"maximumDepth":2})");
  EXPECT_EQ(EffectiveRunPermissions("analyze_only", custom, EmptyPermissionSet())["subagents"], custom["subagents"]);
}

// ---------------------------------------------------------------------------
// NormalizeNetworkReadDomain (PROTOCOL §12.5)

TEST(NormalizeNetworkReadDomainTest, TrimsAndLowercases) {
  EXPECT_EQ(NormalizeNetworkReadDomain("example.com"), "example.com");
  EXPECT_EQ(NormalizeNetworkReadDomain("  Example.COM  "), "example.com");
  EXPECT_EQ(NormalizeNetworkReadDomain("\tAPI.Example.com\n"), "api.example.com");
  EXPECT_EQ(NormalizeNetworkReadDomain("com"), "com");
  EXPECT_EQ(NormalizeNetworkReadDomain("a-b.c-d.example"), "a-b.c-d.example");
  EXPECT_EQ(NormalizeNetworkReadDomain("xn--bcher-kva.example"), "xn--bcher-kva.example");
  EXPECT_EQ(NormalizeNetworkReadDomain("123.example"), "123.example");
}

// PROTOCOL §12.5 "trim" is JavaScript's String#trim, which also strips NBSP, U+3000,
// U+FEFF etc.; telic trims only ASCII whitespace (isspace), so a domain
// pasted with a trailing NBSP is rejected instead of normalised. See report.
TEST(NormalizeNetworkReadDomainTest, TrimsUnicodeWhitespaceLikeJs) {
  EXPECT_EQ(NormalizeNetworkReadDomain("example.com\xC2\xA0"), "example.com");
  EXPECT_EQ(NormalizeNetworkReadDomain("\xE3\x80\x80" "example.com"), "example.com");
}

TEST(NormalizeNetworkReadDomainTest, IpLiterals) {
  EXPECT_EQ(NormalizeNetworkReadDomain("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(NormalizeNetworkReadDomain(" 192.168.10.1 "), "192.168.10.1");
  EXPECT_EQ(NormalizeNetworkReadDomain("[::1]"), "::1");
  EXPECT_EQ(NormalizeNetworkReadDomain("[2001:DB8::1]"), "2001:db8::1");
  EXPECT_EQ(NormalizeNetworkReadDomain("::1"), "::1");  // any IP literal, brackets optional
  EXPECT_EQ(NormalizeNetworkReadDomain("fe80::1:2"), "fe80::1:2");
  EXPECT_EQ(NormalizeNetworkReadDomain("[::ffff:192.0.2.1]"), "::ffff:192.0.2.1");
}

TEST(NormalizeNetworkReadDomainTest, Localhost) {
  EXPECT_EQ(NormalizeNetworkReadDomain("localhost"), "localhost");
  EXPECT_EQ(NormalizeNetworkReadDomain(" LocalHost "), "localhost");
}

TEST(NormalizeNetworkReadDomainTest, RejectsSchemesPathsPortsUserinfo) {
  for (const char* bad : {"http://example.com", "https://example.com", "example.com/", "example.com/path",
                          "example.com?q=1", "example.com#frag", "example.com:443", "127.0.0.1:8080", "[::1]:80",
                          "user@example.com", "user:pass@example.com", "//example.com", "example.com:"}) {
    EXPECT_EQ(NormalizeNetworkReadDomain(bad), std::nullopt) << bad;
  }
}

TEST(NormalizeNetworkReadDomainTest, RejectsWildcards) {
  // covers TEL-053 (a wildcard entry never authorizes: it is refused outright)
  for (const char* bad : {"*", "*.example.com", "example.*", "a*b.com", "**"}) {
    EXPECT_EQ(NormalizeNetworkReadDomain(bad), std::nullopt) << bad;
  }
}

TEST(NormalizeNetworkReadDomainTest, RejectsBadLabels) {
  for (const char* bad : {"", "   ", ".", "example..com", ".example.com", "example.com.", "-example.com",
                          "example-.com", "a.-b.com", "a.b-.com", "my_host.example", "exa mple.com", "[example.com]",
                          "b\xC3\xBC" "cher.example", "example.com\\", "example!.com", "[]", "[", "1.2.3.4]"}) {
    EXPECT_EQ(NormalizeNetworkReadDomain(bad), std::nullopt) << bad;
  }
}

TEST(NormalizeNetworkReadDomainTest, LabelLengthLimit) {
  std::string label63(63, 'a');
  std::string label64(64, 'a');
  EXPECT_EQ(NormalizeNetworkReadDomain(label63 + ".com"), label63 + ".com");
  EXPECT_EQ(NormalizeNetworkReadDomain(label64 + ".com"), std::nullopt);
  EXPECT_EQ(NormalizeNetworkReadDomain("www." + label64), std::nullopt);
}

TEST(NormalizeNetworkReadDomainTest, TotalLengthLimit) {
  std::string label(63, 'a');
  std::string at_limit = label + "." + label + "." + label + "." + std::string(61, 'b');  // 253
  ASSERT_EQ(at_limit.size(), 253u);
  EXPECT_EQ(NormalizeNetworkReadDomain(at_limit), at_limit);
  std::string over = label + "." + label + "." + label + "." + std::string(62, 'b');  // 254
  ASSERT_EQ(over.size(), 254u);
  EXPECT_EQ(NormalizeNetworkReadDomain(over), std::nullopt);
  // The limit applies after trimming.
  EXPECT_EQ(NormalizeNetworkReadDomain("  " + at_limit + "  "), at_limit);
}

TEST(NormalizeNetworkReadDomainTest, NormalisedFormIsAFixedPoint) {
  for (const char* input : {" Example.COM ", "[::1]", "LOCALHOST", "10.0.0.1", "[2001:DB8::1]"}) {
    auto once = NormalizeNetworkReadDomain(input);
    ASSERT_TRUE(once.has_value()) << input;
    EXPECT_EQ(NormalizeNetworkReadDomain(*once), once) << input;
  }
}

// ---------------------------------------------------------------------------
// IsExactShellCommand (PROTOCOL §6.1, PROTOCOL §12.5)

TEST(IsExactShellCommandTest, AcceptsExactCommands) {
  for (const char* ok : {"npm test", "make", "git status", "cargo test --all-features", "python3 -m pytest tests/unit",
                         "npm run build -- --flag=x", "echo $HOME", "ls -la ./src", "grep -r 'needle' src",
                         "authorized now", "Authorized"}) {
    EXPECT_TRUE(IsExactShellCommand(ok)) << ok;
  }
}

TEST(IsExactShellCommandTest, RejectsReservedWords) {
  EXPECT_FALSE(IsExactShellCommand("authorized"));
  EXPECT_FALSE(IsExactShellCommand("**"));
}

TEST(IsExactShellCommandTest, RejectsEachForbiddenCharacter) {
  // covers TEL-048 (compound / chained / piped / redirected commands)
  for (char c : std::string("*?[];&|><`\r\n")) {
    std::string command = std::string("npm test ") + c + " x";
    EXPECT_FALSE(IsExactShellCommand(command)) << "char " << static_cast<int>(c);
    EXPECT_FALSE(IsExactShellCommand(std::string(1, c))) << "char " << static_cast<int>(c);
  }
}

TEST(IsExactShellCommandTest, RejectsCompoundCommands) {
  // covers TEL-048
  for (const char* bad : {"npm test && rm -rf x", "npm test || true", "npm test; rm -rf x", "cat a | sh",
                          "npm test > out.txt", "sh < script", "echo `id`", "echo $(id)", "echo $(", "a\nb",
                          "a\r\nb", "npm test &", "ls *.ts", "ls ?.ts", "ls [ab].ts"}) {
    EXPECT_FALSE(IsExactShellCommand(bad)) << bad;
  }
}

TEST(IsExactShellCommandTest, DollarAloneIsNotASubstitution) {
  EXPECT_TRUE(IsExactShellCommand("echo $PATH"));
  EXPECT_TRUE(IsExactShellCommand("echo ${HOME}"));
  EXPECT_TRUE(IsExactShellCommand("echo $ ("));
  EXPECT_FALSE(IsExactShellCommand("x$(y"));
}

}  // namespace
}  // namespace telic::policy
