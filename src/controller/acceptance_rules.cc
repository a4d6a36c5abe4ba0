// Helpers shared by the acceptance rule families (acceptance_rules.h).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/acceptance_rules.h"
#include "controller/references.h"
#include "controller/rule_violation.h"
#include "policy/engine.h"
#include "policy/url_host.h"

namespace telic::controller::rules {

std::unexpected<Error> Reject(std::string pointer, std::string message) {
  return RuleViolation(std::move(pointer), std::move(message));
}

std::optional<domain::Mode> RunMode(const RunSnapshot& snapshot) { return snapshot.run().requested_mode; }
std::optional<domain::Phase> RunPhase(const RunSnapshot& snapshot) { return snapshot.run().phase; }
std::optional<domain::Topology> RunTopology(const RunSnapshot& snapshot) { return snapshot.run().topology; }

bool IsType(const store::ArtifactMeta& meta, domain::ArtifactType type) { return meta.type == type; }

bool IsReportOrPlan(std::optional<domain::Mode> mode) {
  return mode == domain::Mode::kReportOnly || mode == domain::Mode::kPlanOnly;
}

bool IsDiagnosisStage(std::optional<domain::Mode> mode, bool unlocked) {
  return mode == domain::Mode::kAnalyzeAndFix && !unlocked;
}

std::string Canonical(const Json& value) { return CanonicalJson(value); }

Json EnvelopeAuthorization(RunSnapshot& snapshot, const Json& envelope) {
  return RunAuthorization(std::string(domain::Name(snapshot.run().requested_mode)), envelope);
}

Json TraceDecision(const std::string& capability, const std::string& target, bool allowed,
                   const std::vector<std::string>& policy_refs, const std::string& summary) {
  std::string scope = target;
  if ((capability == "network.read" || capability == "external.write") && scope != "unknown") {
    auto url = policy::ParseNetworkUrl(scope);
    scope = url ? url->host : "invalid_network_target";
  }
  return {{"decision", allowed ? "allow" : "deny"},
          {"capability", capability},
          {"scope", scope},
          {"policyRefs", policy_refs},
          {"rationaleSummary", summary}};
}

policy::Decision AuthorizeForNode(const store::RunRecord& run, const WorkNodeView& node, const std::string& capability,
                                  const std::string& target) {
  policy::ActionRequest request;
  request.capability = capability;
  request.target = target;
  std::vector<policy::Layer> layers = {policy::ModeCeilingLayer(domain::Name(run.requested_mode)),
                                       {"work_node:" + node.id, *node.permissions, Json()}};
  return policy::Authorize(request, layers, policy::RepoRoot::OnDisk(run.repository_root));
}

Status Deny(std::optional<PermissionDenial>& denial, std::string pointer, std::string message, Json decision,
            std::vector<std::string> refs) {
  denial = PermissionDenial{std::move(decision), std::move(refs)};
  Issue issue{std::move(pointer), "permission_denied", message};
  return Fail(ErrorCode::kPermissionDenied, std::move(message), {std::move(issue)});
}

std::unexpected<Error> StoredViewMismatch(std::string_view id, const Error& error) {
  return Fail(ErrorCode::kDataLoss, fmt::format("Stored artifact {} does not fit its view: {}", id, error.message()));
}

}  // namespace telic::controller::rules
