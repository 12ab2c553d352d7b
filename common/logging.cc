#include "common/logging.h"

#include <sys/time.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace rollout::log {
namespace {

std::atomic<int> g_min_level{static_cast<int>(Level::kInfo)};
std::atomic<int64_t> g_step{-1};
std::mutex g_mutex;  // guards g_tag and serialises writes
std::string g_tag = "rollout";

char LevelLetter(Level level) {
  switch (level) {
    case Level::kDebug: return 'D';
    case Level::kInfo: return 'I';
    case Level::kWarning: return 'W';
    case Level::kError: return 'E';
  }
  return '?';
}

}  // namespace

void SetMinLevel(Level level) { g_min_level = static_cast<int>(level); }

void SetProcessTag(std::string tag) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_tag = std::move(tag);
}

void SetStep(int64_t step) { g_step = step; }

bool ParseLevel(absl::string_view name, Level* level) {
  if (name == "debug") *level = Level::kDebug;
  else if (name == "info") *level = Level::kInfo;
  else if (name == "warning") *level = Level::kWarning;
  else if (name == "error") *level = Level::kError;
  else return false;
  return true;
}

bool IsEnabled(Level level) { return static_cast<int>(level) >= g_min_level.load(); }

LogMessage::LogMessage(Level level) : level_(level) {}

LogMessage::~LogMessage() {
  timeval now;
  gettimeofday(&now, nullptr);
  tm local;
  localtime_r(&now.tv_sec, &local);
  char clock[16];
  strftime(clock, sizeof(clock), "%H:%M:%S", &local);
  const int64_t step = g_step.load();
  std::string text = stream_.str();
  if (!text.empty() && text.back() == '\n') text.pop_back();

  std::lock_guard<std::mutex> lock(g_mutex);
  if (step >= 0) {
    std::fprintf(stderr, "%c %s.%03d [%s | step %lld] %s\n", LevelLetter(level_), clock,
                 static_cast<int>(now.tv_usec / 1000), g_tag.c_str(),
                 static_cast<long long>(step), text.c_str());
  } else {
    std::fprintf(stderr, "%c %s.%03d [%s] %s\n", LevelLetter(level_), clock,
                 static_cast<int>(now.tv_usec / 1000), g_tag.c_str(), text.c_str());
  }
  std::fflush(stderr);
}

}  // namespace rollout::log
