// ROLLOUT_CHECK(condition) << "context";  — for programmer errors only (a broken
// invariant, a contract violated by the caller): prints the condition, the place and
// the message on stderr and aborts. Bad input and failed I/O return absl::Status.
#pragma once

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "common/logging.h"

namespace rollout::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition) {
    stream_ << "CHECK failed at " << file << ":" << line << ": " << condition << " ";
  }
  ~CheckFailure() {
    std::cerr << stream_.str() << std::endl;
    std::abort();
  }
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

}  // namespace rollout::internal

#define ROLLOUT_CHECK(condition)    \
  (condition) ? (void)0             \
              : ::rollout::log::Voidify() & \
                    ::rollout::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()
