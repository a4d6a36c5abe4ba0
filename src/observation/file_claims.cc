#include "observation/file_claims.h"

#include <fmt/format.h>

namespace telic::observation {
namespace {

std::unexpected<Error> Mismatch(const ClaimedChange& claim, std::string_view field, std::string message) {
  std::string pointer = claim.pointer + "/" + std::string(field);
  return Fail(ErrorCode::kInvalidArgument, message, {Issue{std::move(pointer), std::string(kObservationMismatch), message}});
}

std::string Shown(const std::optional<std::string>& hash) { return hash ? *hash : std::string("null"); }

}  // namespace

Json Baseline::ToJson() const {
  Json paths = Json::object();
  for (const auto& [path, digest] : dirty) paths[path] = digest;
  return {{"headCommit", head_commit ? Json(*head_commit) : Json(nullptr)}, {"dirty", paths}, {"complete", complete}};
}

Result<Baseline> Baseline::FromJson(const Json& json) {
  auto corrupt = [] { return Fail(ErrorCode::kDataLoss, "The run's work-tree baseline is corrupt"); };
  if (!json.is_object() || !json.contains("dirty") || !json["dirty"].is_object()) return corrupt();
  Baseline baseline;
  const Json& head = json.value("headCommit", Json());
  if (head.is_string()) {
    baseline.head_commit = head.get<std::string>();
  } else if (!head.is_null()) {
    return corrupt();
  }
  for (const auto& [path, digest] : json["dirty"].items()) {
    if (!digest.is_string()) return corrupt();
    baseline.dirty[path] = digest.get<std::string>();
  }
  baseline.complete = json.value("complete", true);
  return baseline;
}

Result<ClaimedChange> ClaimedChange::FromJson(const Json& element, std::string pointer) {
  auto invalid = [&](std::string_view why) {
    std::string message = fmt::format("File change {} is not observable: {}", pointer, why);
    return Fail(ErrorCode::kInvalidArgument, message, {Issue{pointer, std::string(kObservationMismatch), message}});
  };
  if (!element.is_object() || !element.contains("path") || !element["path"].is_string()) return invalid("no path");
  ClaimedChange claim;
  claim.pointer = std::move(pointer);
  claim.path = element["path"];
  claim.change_type = element.value("changeType", "");
  for (auto [field, slot] : {std::pair{"beforeHash", &claim.before_hash}, std::pair{"afterHash", &claim.after_hash}}) {
    if (element.contains(field) && element[field].is_string()) *slot = element[field].get<std::string>();
  }
  if (claim.change_type != "created" && claim.change_type != "modified" && claim.change_type != "deleted") {
    return invalid("unknown changeType");
  }
  return claim;
}

Status CheckFileClaim(const ClaimedChange& claim, const std::string& expected_before, const FileState& now) {
  const std::string& path = claim.path;
  if (claim.change_type == "created") {
    if (expected_before != kAbsent) {
      return Mismatch(claim, "changeType",
                      fmt::format("{} is claimed created, but it existed before this change (observed {})", path, expected_before));
    }
  } else if (claim.before_hash != expected_before) {
    return Mismatch(claim, "beforeHash",
                    fmt::format("{}: beforeHash {} does not match the content the run was grounded on or last changed to "
                                "(observed {})",
                                path, Shown(claim.before_hash), expected_before));
  }
  if (claim.change_type == "deleted") {
    if (now.exists) {
      return Mismatch(claim, "changeType",
                      fmt::format("{} is claimed deleted, but it is still in the work tree (observed {})", path, now.sha256));
    }
    return Ok();
  }
  if (!now.exists) {
    return Mismatch(claim, "afterHash",
                    fmt::format("{}: afterHash {} was claimed, but no file is in the work tree (observed {})", path,
                                Shown(claim.after_hash), kAbsent));
  }
  if (claim.after_hash != now.sha256) {
    std::string reason = now.sha256 == expected_before ? "; the file is unchanged" : "";
    return Mismatch(claim, "afterHash",
                    fmt::format("{}: afterHash {} does not match the file's bytes now (observed {}){}", path,
                                Shown(claim.after_hash), now.sha256, reason));
  }
  return Ok();
}

}  // namespace telic::observation
