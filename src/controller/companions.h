// Artifacts the controller stores beside an accepted submission: the micro
// bootstrap contract and plan (PROTOCOL §11.2) and the ReceiptAudit of a
// passing spot-check (PROTOCOL §11.4).
#pragma once

#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "domain/vocabulary.h"
#include "controller/run_snapshot.h"

namespace telic::controller {

struct Companion {
  std::string id;
  domain::ArtifactType type;
  std::string producer;
  std::vector<std::string> source_refs;
  Json body;
};

// contract-01 and plan-01 for a micro run whose ProblemFrame `frame` (id
// `frame_id`) was accepted.
Result<std::vector<Companion>> BuildMicroPack(RunSnapshot& snapshot, const std::string& frame_id, const Json& frame);

struct Receipt {
  Companion artifact;
  bool verified = false;
  std::vector<std::string> verified_refs;
};

// receipt-01 for the passing QualityReview `review` (id `review_id`).
Result<Receipt> CertifyReview(RunSnapshot& snapshot, const std::string& review_id, const Json& review,
                              const std::string& now);

// "sha256:<hex>" over the sorted refs joined by "|".
std::string DigestSummaryForRefs(std::vector<std::string> refs);

}  // namespace telic::controller
