// absl::Status plumbing. Abseil 20220623 ships no status macros, so they are defined
// once here. Use them at every fallible boundary; add context as errors travel:
//   RETURN_IF_ERROR(WithContext(LoadManifest(dir), "loading " + dir));
#pragma once

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout {

// Same code, message prefixed with `context: `. OK passes through unchanged.
absl::Status WithContext(const absl::Status& status, absl::string_view context);

template <typename T>
absl::StatusOr<T> WithContext(absl::StatusOr<T> result, absl::string_view context) {
  if (result.ok()) return result;
  return WithContext(result.status(), context);
}

}  // namespace rollout

#define ROLLOUT_STATUS_CONCAT_INNER(a, b) a##b
#define ROLLOUT_STATUS_CONCAT(a, b) ROLLOUT_STATUS_CONCAT_INNER(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define RETURN_IF_ERROR(expr)                                          \
  do {                                                                 \
    const ::absl::Status rollout_status_ = (expr);                     \
    if (!rollout_status_.ok()) return rollout_status_;                 \
  } while (false)

// `ASSIGN_OR_RETURN(auto x, MakeX());` — declares/assigns `x` from a StatusOr or
// returns its error.
#define ASSIGN_OR_RETURN(lhs, rexpr)                                          \
  ROLLOUT_ASSIGN_OR_RETURN_IMPL(ROLLOUT_STATUS_CONCAT(rollout_statusor_, __LINE__), \
                                lhs, rexpr)

#define ROLLOUT_ASSIGN_OR_RETURN_IMPL(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()
