// The project's logger: one line per message on stderr, with a level, a wall-clock
// time, the process tag (role, rank) and the current training step:
//   I 19:35:01.123 [worker 2 actor+rollout r1 | step 3] loaded 24 layers
// Thread-safe: each line is written whole. Metrics go to metric sinks, not here.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "absl/strings/string_view.h"

namespace rollout::log {

enum class Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Process-wide settings; set once at start by the entry point (and the step by the
// trainer loop).
void SetMinLevel(Level level);
void SetProcessTag(std::string tag);
void SetStep(int64_t step);  // negative: no step shown
// Parses "debug|info|warning|error".
bool ParseLevel(absl::string_view name, Level* level);

// Builds one line and writes it when destroyed; use the ROLLOUT_LOG macro.
class LogMessage {
 public:
  explicit LogMessage(Level level);
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  Level level_;
  std::ostringstream stream_;
};

bool IsEnabled(Level level);

}  // namespace rollout::log

namespace rollout::log::severity {
// The spellings ROLLOUT_LOG accepts.
constexpr Level DEBUG = Level::kDebug;
constexpr Level INFO = Level::kInfo;
constexpr Level WARNING = Level::kWarning;
constexpr Level ERROR = Level::kError;
}  // namespace rollout::log::severity

namespace rollout::log {
// Lets ROLLOUT_LOG be one expression (safe inside an unbraced if/else).
struct Voidify {
  void operator&(std::ostream&) {}
};
}  // namespace rollout::log

// ROLLOUT_LOG(INFO) << "loaded " << n << " layers";
#define ROLLOUT_LOG(severity_name)                                              \
  !::rollout::log::IsEnabled(::rollout::log::severity::severity_name)           \
      ? (void)0                                                                 \
      : ::rollout::log::Voidify() &                                             \
            ::rollout::log::LogMessage(::rollout::log::severity::severity_name).stream()
