#include "base/status.h"

namespace telic {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kStaleVersion: return "stale_version";
    case ErrorCode::kConflict: return "conflict";
    case ErrorCode::kAlreadyExists: return "already_exists";
    case ErrorCode::kFailedPrecondition: return "failed_precondition";
    case ErrorCode::kPermissionDenied: return "permission_denied";
    case ErrorCode::kResourceExhausted: return "resource_exhausted";
    case ErrorCode::kDataLoss: return "data_loss";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

}  // namespace telic
