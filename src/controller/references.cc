#include "controller/references.h"

#include "controller/next_action.h"
#include "controller/rule_violation.h"

#include <algorithm>
#include <regex>
#include <set>

#include <fmt/format.h>

namespace telic::controller {
namespace {

const std::set<std::string, std::less<>> kSystemReferenceFields = {
    "applicableRuleRefs", "instructionRef", "policyRefs", "promptReadinessRubricRef", "ruleRefs"};

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool HasReferenceScheme(std::string_view s) {
  return StartsWith(s, "artifact://") || StartsWith(s, "repo://") || StartsWith(s, "trace://");
}

// ^(artifact|trace|repo)://[A-Za-z0-9._~!$&'()*+,;=:@%/-]+$
bool IsReferenceUri(std::string_view s) {
  size_t start = 0;
  if (StartsWith(s, "artifact://")) start = 11;
  else if (StartsWith(s, "trace://")) start = 8;
  else if (StartsWith(s, "repo://")) start = 7;
  else return false;
  if (s.size() == start) return false;
  static constexpr std::string_view kAllowed = "._~!$&'()*+,;=:@%/-";
  for (size_t i = start; i < s.size(); ++i) {
    char c = s[i];
    bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && kAllowed.find(c) == std::string_view::npos) return false;
  }
  return true;
}

void Collect(const Json& value, const std::string& path, std::string_view key, std::vector<LocatedRef>& out) {
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    if (IsReferenceField(key) && HasReferenceScheme(s)) out.push_back({s, path});
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) Collect(value[i], fmt::format("{}[{}]", path, i), key, out);
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) Collect(*it, path + "." + it.key(), it.key(), out);
  }
}

void CollectSourceCandidates(const Json& value, std::string_view key, int depth, std::vector<std::string>& out) {
  if (depth > 64) return;
  if (value.is_string()) {
    bool named = key == "ref" || key == "evidenceInspected" || EndsWith(key, "Ref") || EndsWith(key, "Refs");
    if (named && IsReferenceUri(value.get_ref<const std::string&>())) out.push_back(value.get<std::string>());
  } else if (value.is_array()) {
    for (const Json& item : value) CollectSourceCandidates(item, key, depth + 1, out);
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) CollectSourceCandidates(*it, it.key(), depth + 1, out);
  }
}

bool Matches(const std::string& path, const char* pattern) {
  // Patterns are compiled once per distinct literal.
  static thread_local std::map<const char*, std::regex> cache;
  auto found = cache.find(pattern);
  if (found == cache.end()) found = cache.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
  return std::regex_search(path, found->second);
}

// The field name at the end of a path: ".name" or ".name[i]".
std::string TerminalField(const std::string& path) {
  std::smatch match;
  static const std::regex kTerminal(R"(\.([A-Za-z][A-Za-z0-9]*)(?:\[\d+\])?$)");
  if (std::regex_search(path, match, kTerminal)) return match[1].str();
  return "";
}

bool IsKnownSystemReference(const std::string& ref) {
  static const std::regex kRole(
      R"(^artifact://system/roles/(?:controller|scenario[_-]author(?:-micro)?|task[_-]compiler|quality[_-]controller(?:-spot)?|executor|release[_-]auditor)-v1$)");
  return std::regex_match(ref, kRole) || ref == "artifact://system/rubrics/contract-readiness-v1";
}

std::string ExpectedReferenceType(const std::string& path) {
  if (EndsWith(path, ".originalRequestRef")) return "UserMessage";
  if (EndsWith(path, ".problemFrameRef")) return "ProblemFrame";
  if (EndsWith(path, ".targetRef") || EndsWith(path, ".taskContractRef")) return "TaskContract";
  if (Matches(path, R"(\.workPlanRefs?(?:\[\d+\])?$)")) return "WorkPlan";
  if (Matches(path, R"(\.workResultRefs\[\d+\]$)")) return "WorkResult";
  if (EndsWith(path, ".qualityReviewRef")) return "QualityReview";
  if (EndsWith(path, ".contextManifestRef")) return "ContextManifest";
  if (EndsWith(path, ".clarificationRequestRef")) return "ClarificationRequest";
  return "";
}

// Whether the evidence at `path` belongs to a user-reported matrix entry or claim.
bool IsUserReportedEvidencePath(const std::string& type, const Json& body, const std::string& path) {
  std::smatch match;
  if (domain::ArtifactTypeNamed(type) == domain::ArtifactType::kReleaseAudit) {
    static const std::regex kMatrix(R"(^body\.claimEvidenceMatrix\[(\d+)\]\.evidenceRefs\[\d+\]$)");
    if (!std::regex_match(path, match, kMatrix)) return false;
    const Json matrix = body.value("claimEvidenceMatrix", Json::array());  // a copy: never a reference into a temporary
    size_t index = std::stoul(match[1].str());
    return matrix.is_array() && index < matrix.size() && matrix[index].is_object() &&
           matrix[index].value("basis", "") == "user_reported";
  }
  if (domain::ArtifactTypeNamed(type) == domain::ArtifactType::kUserReport) {
    static const std::regex kClaims(R"(^body\.completionClaims\[(\d+)\]\.evidenceRefs\[\d+\]$)");
    if (!std::regex_match(path, match, kClaims)) return false;
    const Json claims = body.value("completionClaims", Json::array());
    size_t index = std::stoul(match[1].str());
    return claims.is_array() && index < claims.size() && claims[index].is_object() &&
           claims[index].value("status", "") == "user_reported";
  }
  return false;
}

// A reference path ("body.a[0].b", "sourceRefs[2]") as a JSON pointer relative
// to the body ("/a/0/b"; stored source refs are "/sourceRefs/2").
std::string PathPointer(std::string_view path) {
  if (path == "body") return "";
  if (path.substr(0, 5) == "body.") path.remove_prefix(5);
  std::string out = "/";
  for (char c : path) {
    if (c == '.' || c == '[') {
      out += '/';
    } else if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else if (c != ']') {
      out += c;
    }
  }
  return out;
}

// `path` is the reference path of the offending reference ("" for the body).
// A reference of the call's own source_refs is outside the body: its issue
// has the empty pointer and the message names "sourceRefs[<i>]".
std::unexpected<Error> RejectReference(std::string_view path, std::string message) {
  bool in_body = !path.empty() && path.substr(0, 10) != "sourceRefs";
  return RuleViolation(in_body ? PathPointer(path) : std::string(), std::move(message));
}

std::set<std::string> SelectedRepositoryRefs(RunSnapshot& snapshot, Status& status) {
  std::set<std::string> selected;
  auto manifest = snapshot.LatestBodyOrNull(domain::ArtifactType::kContextManifest);
  if (!manifest) {
    status = std::unexpected(manifest.error());
    return selected;
  }
  if (!*manifest) return selected;
  for (const auto& ref : StringArray(**manifest, "pinnedRefs")) selected.insert(ref);
  for (const Json& candidate : (*manifest)->value("candidates", Json::array())) {
    if (candidate.is_object() && candidate.value("decision", "") == "selected" && candidate.contains("ref") &&
        candidate["ref"].is_string()) {
      selected.insert(candidate["ref"].get<std::string>());
    }
  }
  return selected;
}

// A reference into the lineage prior run must name one of its Evidence artifacts.
Status CheckCrossRunEvidence(RunSnapshot& snapshot, const std::string& ref, std::string_view path) {
  const auto& run = snapshot.run();
  static const std::regex kRef(R"(^artifact://([^/]+)/([A-Za-z0-9._-]+)$)");
  std::smatch match;
  if (!std::regex_match(ref, match, kRef)) return RejectReference(path, fmt::format("Cross-run evidence ref is not an artifact URI: {}", ref));
  if (!run.prior_run_id || match[1].str() != *run.prior_run_id) {
    return RejectReference(path, fmt::format("Cross-run evidence ref must target prior run {}", run.prior_run_id.value_or("")));
  }
  auto prior = snapshot.store().GetRun(*run.prior_run_id);
  if (!prior) return RejectReference(path, fmt::format("Prior run {} does not exist", *run.prior_run_id));
  if (prior->repository_root != run.repository_root) {
    return RejectReference(path, "Cross-run evidence requires the same repository root as the prior run");
  }
  auto artifacts = snapshot.store().ListArtifacts(*run.prior_run_id);
  if (!artifacts) return std::unexpected(artifacts.error());
  auto found = std::find_if(artifacts->begin(), artifacts->end(), [&](const auto& a) { return a.id == match[2].str(); });
  if (found == artifacts->end()) return RejectReference(path, fmt::format("Cross-run evidence artifact does not exist: {}", ref));
  if (found->type != domain::ArtifactType::kEvidence) return RejectReference(path, fmt::format("Cross-run evidence ref must target an Evidence artifact: {}", ref));
  return Ok();
}

Status CheckTraceReference(RunSnapshot& snapshot, const LocatedRef& reference, bool direct) {
  static const std::regex kTrace(R"(^trace://([^/]+)(?:/([^/]+))?$)");
  std::smatch match;
  if (!std::regex_match(reference.ref, match, kTrace) || match[1].str() != snapshot.run_id()) {
    return RejectReference(reference.path, fmt::format("Invalid or cross-run trace reference at {}", reference.path));
  }
  std::string event = match[2].matched ? match[2].str() : "";
  if (direct && event.empty()) {
    return RejectReference(reference.path, fmt::format("Direct evidence requires a specific trace event at {}", reference.path));
  }
  if (event.empty()) return Ok();
  TELIC_ASSIGN_OR_RETURN(const std::vector<store::TraceEventRecord>* trace, snapshot.Trace());
  bool exists = std::any_of(trace->begin(), trace->end(), [&](const store::TraceEventRecord& e) {
    return e.event_id == event || fmt::format("event-{:04d}", e.sequence) == event;
  });
  if (!exists) return RejectReference(reference.path, fmt::format("Trace event does not exist at {}", reference.path));
  // No trace event type counts as direct evidence (PROTOCOL §14.2-4).
  if (direct) return RejectReference(reference.path, fmt::format("Trace event is not direct evidence at {}", reference.path));
  return Ok();
}

Status CheckLocalArtifactReference(RunSnapshot& snapshot, const std::string& type, const Json& body,
                                   const LocatedRef& reference, bool direct, bool user_reported) {
  static const std::regex kArtifact(R"(^artifact://([^/]+)/([^/]+)$)");
  std::smatch match;
  if (!std::regex_match(reference.ref, match, kArtifact)) {
    return RejectReference(reference.path, fmt::format("Invalid artifact reference at {}", reference.path));
  }
  if (match[1].str() != snapshot.run_id()) {
    if (snapshot.run().prior_run_id && match[1].str() == *snapshot.run().prior_run_id) {
      return CheckCrossRunEvidence(snapshot, reference.ref, reference.path);
    }
    return RejectReference(reference.path, fmt::format("Cross-run artifact reference denied at {}", reference.path));
  }
  std::string id = match[2].str();
  bool forward = domain::ArtifactTypeNamed(type) == domain::ArtifactType::kReleaseAudit && reference.path == "body.userReportRef" && body.contains("userReportRef") &&
                 body["userReportRef"].is_string();
  const store::ArtifactMeta* target = snapshot.Find(id);
  if (forward) {
    if (target) return RejectReference("body.userReportRef", fmt::format("ReleaseAudit userReportRef collides with existing artifact {}", id));
    return Ok();
  }
  if (!target) return RejectReference(reference.path, fmt::format("Artifact reference does not exist at {}: {}", reference.path, id));
  std::string expected = ExpectedReferenceType(reference.path);
  if (!expected.empty() && domain::Name(target->type) != expected) {
    return RejectReference(reference.path, fmt::format("Artifact reference at {} must target {}", reference.path, expected));
  }
  if (user_reported && target->type != domain::ArtifactType::kUserMessage) {
    return RejectReference(reference.path, fmt::format("User-reported evidence must target a UserMessage at {}", reference.path));
  }
  const domain::Mode mode = snapshot.run().requested_mode;
  const store::ArtifactMeta* latest_plan = snapshot.Latest(domain::ArtifactType::kWorkPlan);
  bool deliverable = direct && (mode == domain::Mode::kPlanOnly || mode == domain::Mode::kReportOnly) &&
                     target->type == domain::ArtifactType::kWorkPlan &&
                     latest_plan && latest_plan->id == target->id;
  bool direct_type = target->type == domain::ArtifactType::kEvidence || target->type == domain::ArtifactType::kContextDocument;
  if (direct && !user_reported && !deliverable && !direct_type) {
    return RejectReference(reference.path, fmt::format("Artifact reference at {} must target direct evidence", reference.path));
  }
  return Ok();
}

}  // namespace

std::vector<LocatedRef> CollectLocatedReferences(const Json& body) {
  std::vector<LocatedRef> out;
  Collect(body, "body", "", out);
  return out;
}

Result<std::vector<std::string>> StoredSourceRefs(const RunSnapshot& snapshot, const Json& body,
                                                  const std::vector<std::string>& supplied) {
  std::set<std::string> seen(supplied.begin(), supplied.end());
  if (seen.size() != supplied.size()) return Fail(ErrorCode::kInvalidArgument, "Artifact sourceRefs must be unique");
  auto too_many = [] { return Fail(ErrorCode::kInvalidArgument, "Artifact sourceRefs exceed the 256 item limit"); };
  if (supplied.size() > 256) return too_many();
  std::vector<std::string> result = supplied;
  std::vector<std::string> candidates;
  CollectSourceCandidates(body, "", 0, candidates);
  for (const std::string& ref : candidates) {
    if (StartsWith(ref, "artifact://system/")) continue;
    if (StartsWith(ref, "artifact://")) {
      auto id = ArtifactIdFromUri(ref);
      if (!id || ref != snapshot.Uri(*id) || !snapshot.Find(*id)) continue;
    }
    if (!seen.insert(ref).second) continue;
    result.push_back(ref);
    if (result.size() > 256) return too_many();
  }
  return result;
}

bool RequiresDirectEvidence(const std::string& path, const std::string& type) {
  if (domain::ArtifactTypeNamed(type) == domain::ArtifactType::kWorkResult &&
      (Matches(path, R"(^body\.evidenceRefs\[\d+\]$)") || Matches(path, R"(^body\.actions\[\d+\]\.evidenceRefs\[\d+\]$)"))) {
    return true;
  }
  if (domain::ArtifactTypeNamed(type) == domain::ArtifactType::kQualityReview && Matches(path, R"(\.hardGates\[\d+\]\.evidenceRefs\[\d+\]$)")) return true;
  static const char* kPatterns[] = {
      R"(\.claimEvidenceMatrix\[\d+\]\.evidenceRefs\[\d+\]$)",
      R"(\.completionClaims\[\d+\]\.evidenceRefs\[\d+\]$)",
      R"(\.observations\[\d+\]\.evidenceRefs\[\d+\]$)",
      R"(\.inferences\[\d+\]\.evidenceRefs\[\d+\]$)",
      R"(\.toolEventRefs\[\d+\]$)",
      R"(\.verificationRefs\[\d+\]$)",
      R"(\.diagnosisGate\.directEvidenceRefs\[\d+\]$)",
      R"(\.acceptanceCoverage\[\d+\]\.evidenceRefs\[\d+\]$)",
      R"(\.acceptanceResults\[\d+\]\.evidenceRefs\[\d+\]$)",
      R"(\.filesChanged\[\d+\]\.diffRef$)",
      R"(\.testResults\[\d+\]\.(?:commandRef|outputRef)$)",
      R"(\.verificationResults\[\d+\]\.evidenceRefs\[\d+\]$)",
      R"(\.(?:ruleCompliance|regressionChecks|userFidelity)\[\d+\]\.evidenceRefs\[\d+\]$)",
  };
  return std::any_of(std::begin(kPatterns), std::end(kPatterns), [&](const char* p) { return Matches(path, p); });
}

Status CheckArtifactReferences(RunSnapshot& snapshot, const std::string& type, const Json& body,
                               const std::vector<std::string>& source_refs) {
  std::set<std::string> unique(source_refs.begin(), source_refs.end());
  bool refs_ok = source_refs.size() <= 256 && unique.size() == source_refs.size() &&
                 std::all_of(source_refs.begin(), source_refs.end(),
                             [](const std::string& r) { return r.size() <= 2048 && IsReferenceUri(r); });
  if (!refs_ok) return RejectReference("sourceRefs", "Artifact sourceRefs must be unique valid reference URIs with at most 256 entries");
  std::vector<LocatedRef> references = CollectLocatedReferences(body);
  for (size_t i = 0; i < source_refs.size(); ++i) references.push_back({source_refs[i], fmt::format("sourceRefs[{}]", i)});

  Status status = Ok();
  std::set<std::string> selected = SelectedRepositoryRefs(snapshot, status);
  TELIC_RETURN_IF_ERROR(status);
  for (const LocatedRef& reference : references) {
    bool user_reported = IsUserReportedEvidencePath(type, body, reference.path);
    bool direct = RequiresDirectEvidence(reference.path, type);
    if (StartsWith(reference.ref, "artifact://system/")) {
      if (!kSystemReferenceFields.count(TerminalField(reference.path)) || !IsKnownSystemReference(reference.ref)) {
        return RejectReference(reference.path, fmt::format("Unknown or misplaced system artifact at {}", reference.path));
      }
    } else if (StartsWith(reference.ref, "repo://")) {
      if (user_reported) {
        return RejectReference(reference.path, fmt::format("User-reported evidence must reference the originating UserMessage at {}", reference.path));
      }
      if (domain::ArtifactTypeNamed(type) != domain::ArtifactType::kContextManifest && !selected.count(reference.ref)) {
        return RejectReference(reference.path,
            fmt::format("Repository reference was not selected by the current ContextManifest at {}", reference.path));
      }
      if (direct) return RejectReference(reference.path, fmt::format("Repository context cannot prove an executed outcome at {}", reference.path));
    } else if (StartsWith(reference.ref, "trace://")) {
      if (user_reported) {
        return RejectReference(reference.path, fmt::format("User-reported evidence must reference the originating UserMessage at {}", reference.path));
      }
      TELIC_RETURN_IF_ERROR(CheckTraceReference(snapshot, reference, direct));
    } else {
      TELIC_RETURN_IF_ERROR(CheckLocalArtifactReference(snapshot, type, body, reference, direct, user_reported));
    }
  }
  return Ok();
}

std::vector<std::string> EvidenceKindsForCapability(std::string_view capability) {
  if (capability == "repository.read") return {"repository", "diff", "tool_output"};
  if (capability == "repository.write" || capability == "repository.delete") return {"diff"};
  if (capability == "shell.inspect" || capability == "shell.execute") return {"tool_output", "log", "test"};
  if (capability == "runtime.inspect" || capability == "runtime.restart") return {"runtime", "log", "tool_output"};
  if (capability == "browser.inspect" || capability == "browser.mutate") return {"browser"};
  if (capability == "network.read" || capability == "external.write" || capability == "subagent.spawn") {
    return {"tool_output"};
  }
  return {};
}

namespace {

void CollectArtifactStrings(const Json& value, std::vector<std::string>& out) {
  if (value.is_string()) {
    if (StartsWith(value.get_ref<const std::string&>(), "artifact://")) out.push_back(value.get<std::string>());
  } else if (value.is_array() || value.is_object()) {
    for (const Json& item : value) CollectArtifactStrings(item, out);
  }
}

// The kinds an Evidence target may have at `path`, or nullopt for any kind.
std::optional<std::vector<std::string>> AllowedKinds(const Json& body, const std::string& path) {
  if (Matches(path, R"(\.filesChanged\[\d+\]\.diffRef$)")) return std::vector<std::string>{"diff"};
  if (Matches(path, R"(\.testResults\[\d+\]\.outputRef$)")) return std::vector<std::string>{"test", "tool_output", "log"};
  if (Matches(path, R"(\.testResults\[\d+\]\.commandRef$)")) return std::vector<std::string>{"tool_output", "log"};
  std::smatch match;
  static const std::regex kAction(R"(^body\.actions\[(\d+)\]\.evidenceRefs\[\d+\]$)");
  static const std::regex kVerification(R"(^body\.verificationResults\[(\d+)\]\.evidenceRefs\[\d+\]$)");
  const char* list = nullptr;
  if (std::regex_match(path, match, kAction)) list = "actions";
  else if (std::regex_match(path, match, kVerification)) list = "verificationResults";
  if (!list) return std::nullopt;
  const Json& items = body.value(list, Json::array());
  size_t index = std::stoul(match[1].str());
  std::string capability;
  if (index < items.size() && items[index].is_object()) capability = items[index].value("capability", "");
  return EvidenceKindsForCapability(capability);
}

}  // namespace

Status CheckEvidenceSemantics(RunSnapshot& snapshot, const std::string& type, const Json& body) {
  std::vector<std::string> all_refs;
  CollectArtifactStrings(body, all_refs);
  for (const std::string& ref : all_refs) {
    static const std::regex kRun(R"(^artifact://([^/]+)/)");
    std::smatch match;
    if (!std::regex_search(ref, match, kRun) || match[1].str() == snapshot.run_id()) continue;
    if (snapshot.run().prior_run_id) TELIC_RETURN_IF_ERROR(CheckCrossRunEvidence(snapshot, ref, ""));
  }
  for (const LocatedRef& reference : CollectLocatedReferences(body)) {
    if (!StartsWith(reference.ref, "artifact://") || !RequiresDirectEvidence(reference.path, type)) continue;
    auto id = ArtifactIdFromUri(reference.ref);
    if (!id || reference.ref != snapshot.Uri(*id)) continue;
    const store::ArtifactMeta* target = snapshot.Find(*id);
    if (!target) continue;
    if (target->type == domain::ArtifactType::kContextDocument) {
      bool grounding = domain::ArtifactTypeNamed(type) == domain::ArtifactType::kWorkResult && (Matches(reference.path, R"(^body\.observations\[\d+\]\.evidenceRefs\[\d+\]$)") ||
                                                Matches(reference.path, R"(^body\.inferences\[\d+\]\.evidenceRefs\[\d+\]$)"));
      if (!grounding) return RejectReference(reference.path, fmt::format("ContextDocument cannot prove an executed outcome at {}", reference.path));
      continue;
    }
    if (target->type != domain::ArtifactType::kEvidence) continue;
    TELIC_ASSIGN_OR_RETURN(const Json* evidence, snapshot.Body(*target));
    if (!evidence->contains("kind") || !(*evidence)["kind"].is_string()) {
      return RejectReference(reference.path, fmt::format("Evidence kind is missing at {}", reference.path));
    }
    std::string kind = (*evidence)["kind"];
    auto allowed = AllowedKinds(body, reference.path);
    if (allowed && !ContainsString(*allowed, kind)) {
      return RejectReference(reference.path, fmt::format("Evidence kind {} is incompatible with {}", kind, reference.path));
    }
  }
  return Ok();
}

}  // namespace telic::controller
