// Error and result types used by every fallible call in telic.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace telic {

// The failure class of an Error. Stable: its name (ErrorCodeName) is part of
// the tool-result wire payload as the machine-readable `code`.
enum class ErrorCode {
  kInvalidArgument,     // caller input violates a schema or rule
  kNotFound,            // a run, artifact or event does not exist
  kStaleVersion,        // expected_run_version / action_id do not match
  kConflict,            // a concurrent writer advanced the run first
  kAlreadyExists,       // an immutable record with this id exists already
  kFailedPrecondition,  // the run is not in a state that allows the call
  kPermissionDenied,    // the permission intersection denies the action
  kResourceExhausted,   // a hard limit (artifacts, events, bytes) is reached
  kDataLoss,            // stored content fails its integrity check
  kUnavailable,         // the store is busy or unreachable; retry later
  kInternal,            // a bug or an unexpected environment failure
};

std::string_view ErrorCodeName(ErrorCode code);

// One violation found while validating input: where (RFC 6901 JSON pointer,
// "" for the document root), what kind (a Zod-compatible issue code such as
// invalid_type, too_big, unrecognized_keys) and a readable reason.
struct Issue {
  std::string pointer;
  std::string code;
  std::string message;
};

class Error {
 public:
  Error(ErrorCode code, std::string message, std::vector<Issue> issues = {})
      : code_(code), message_(std::move(message)), issues_(std::move(issues)) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::vector<Issue>& issues() const { return issues_; }

 private:
  ErrorCode code_;
  std::string message_;
  std::vector<Issue> issues_;
};

// A value or the Error that stopped it. [[nodiscard]]: a fallible call's
// result must be looked at (propagated, checked, or explicitly dropped with
// a (void) cast and a comment saying why).
template <typename T>
class [[nodiscard]] Result : public std::expected<T, Error> {
 public:
  using std::expected<T, Error>::expected;
  Result(std::expected<T, Error> other) : std::expected<T, Error>(std::move(other)) {}  // NOLINT: implicit
};
using Status = Result<void>;

inline std::unexpected<Error> Fail(ErrorCode code, std::string message,
                                   std::vector<Issue> issues = {}) {
  return std::unexpected<Error>(Error(code, std::move(message), std::move(issues)));
}

inline Status Ok() { return {}; }

}  // namespace telic

// Propagates the error of a Result/Status expression from the current function.
#define TELIC_RETURN_IF_ERROR(expr)                               \
  do {                                                            \
    auto telic_status_ = (expr);                                  \
    if (!telic_status_) return std::unexpected(telic_status_.error()); \
  } while (0)

#define TELIC_CONCAT_INNER_(a, b) a##b
#define TELIC_CONCAT_(a, b) TELIC_CONCAT_INNER_(a, b)
// Declares `lhs` from the value of a Result expression or returns its error.
#define TELIC_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto TELIC_CONCAT_(telic_result_, __LINE__) = (expr);                     \
  if (!TELIC_CONCAT_(telic_result_, __LINE__))                              \
    return std::unexpected(TELIC_CONCAT_(telic_result_, __LINE__).error()); \
  lhs = std::move(*TELIC_CONCAT_(telic_result_, __LINE__))
