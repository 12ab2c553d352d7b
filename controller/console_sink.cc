#include "controller/console_sink.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace rollout::controller {
namespace {

// The metrics of the compact line, in order, with the words around the value.
struct KeyMetric {
  absl::string_view name;
  absl::string_view before;
  absl::string_view after;
};
constexpr KeyMetric kKeyMetrics[] = {
    {"critic/score/mean", "score ", ""}, {"actor/pg_loss", "pg_loss ", ""},
    {"actor/kl_loss", "kl_loss ", ""},   {"critic/vf_loss", "vf_loss ", ""},  // PPO
    {"response_length/mean", "resp_len ", ""},
    {"train/loss", "loss ", ""},         {"val/loss", "val_loss ", ""},  // SFT / DPO
    {"timing_s/step", "", " s/step"},    {"perf/throughput", "", " tok/s"},
};
constexpr absl::string_view kValidationPrefix = "val-core/";
constexpr int kBarWidth = 30;
// Erases the terminal line the cursor is on.
constexpr absl::string_view kClearLine = "\r\033[K";

// `text` on one line and quoted: line breaks, tabs and quotes escaped, cut after
// kGenerationTextBytes bytes at the start of a UTF-8 character.
std::string OneLineQuote(absl::string_view text) {
  bool cut = false;
  if (text.size() > kGenerationTextBytes) {
    size_t end = kGenerationTextBytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text = text.substr(0, end);
    cut = true;
  }
  std::string quoted = "\"";
  for (char c : text) {
    switch (c) {
      case '\n': quoted += "\\n"; break;
      case '\r': quoted += "\\r"; break;
      case '\t': quoted += "\\t"; break;
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      default: quoted += c;
    }
  }
  return quoted + (cut ? "\"..." : "\"");
}

}  // namespace

std::string FormatClockDuration(absl::Duration duration) {
  if (duration < absl::ZeroDuration() || duration == absl::InfiniteDuration()) return "--:--";
  const int64_t seconds = absl::ToInt64Seconds(duration);
  return absl::StrFormat("%d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60);
}

ConsoleSink::ConsoleSink(std::ostream* out, ConsoleSinkOptions options)
    : out_(out), options_(std::move(options)), start_(options_.now()) {}

ConsoleSink::~ConsoleSink() { Close().IgnoreError(); }

std::string ConsoleSink::ProgressText(int64_t step, absl::Duration elapsed) const {
  const int64_t total = options_.total_steps;
  if (total <= 0) {
    return absl::StrCat("step ", step, " | ", FormatClockDuration(elapsed), " elapsed");
  }
  // The pace of the steps this process ran, so a resumed run's ETA is not skewed;
  // unknown (infinite) before its first step.
  const int64_t done = step - options_.initial_step;
  const absl::Duration eta = done <= 0       ? absl::InfiniteDuration()
                             : step >= total ? absl::ZeroDuration()
                                             : elapsed / done * (total - step);
  return absl::StrCat("step ", step, "/", total, " ", step * 100 / total, "% | ",
                      FormatClockDuration(elapsed), " elapsed, ETA ", FormatClockDuration(eta));
}

std::string ConsoleSink::ProgressBar(int64_t step, absl::Duration elapsed) const {
  const int64_t filled =
      std::min<int64_t>(kBarWidth, std::max<int64_t>(0, step * kBarWidth / options_.total_steps));
  return absl::StrCat("[", std::string(filled, '#'), std::string(kBarWidth - filled, '-'), "] ",
                      ProgressText(step, elapsed));
}

absl::Status ConsoleSink::Log(int64_t step, const StepMetrics& metrics) {
  const absl::Duration elapsed = options_.now() - start_;
  std::string line = ProgressText(step, elapsed);
  for (const KeyMetric& key : kKeyMetrics) {
    const auto it = metrics.find(std::string(key.name));
    if (it == metrics.end()) continue;
    absl::StrAppend(&line, " | ", key.before, FormatMetricValue(it->second), key.after);
  }
  for (auto it = metrics.lower_bound(std::string(kValidationPrefix));
       it != metrics.end() && absl::StartsWith(it->first, kValidationPrefix); ++it) {
    absl::StrAppend(&line, " | ", it->first, " ", FormatMetricValue(it->second));
  }

  if (bar_shown_) *out_ << kClearLine;
  *out_ << line << '\n';
  bar_shown_ = options_.is_terminal && options_.total_steps > 0;
  if (bar_shown_) *out_ << ProgressBar(step, elapsed);
  out_->flush();
  if (!*out_) {
    return absl::UnavailableError(absl::StrCat("writing step ", step, " to the console failed"));
  }
  return absl::OkStatus();
}

absl::Status ConsoleSink::LogGenerations(int64_t step, const std::vector<GenerationSample>& samples) {
  if (bar_shown_) *out_ << kClearLine;
  *out_ << "validation generations at step " << step << " (trainer.log_val_generations):\n";
  for (const GenerationSample& sample : samples) {
    *out_ << "  score " << FormatMetricValue(sample.score) << " | input " << OneLineQuote(sample.input)
          << " | output " << OneLineQuote(sample.output) << '\n';
  }
  if (bar_shown_) *out_ << ProgressBar(step, options_.now() - start_);
  out_->flush();
  if (!*out_) {
    return absl::UnavailableError(absl::StrCat("writing the generations of step ", step, " to the console failed"));
  }
  return absl::OkStatus();
}

absl::Status ConsoleSink::Close() {
  if (!bar_shown_) return absl::OkStatus();
  bar_shown_ = false;
  *out_ << '\n';
  out_->flush();
  if (!*out_) return absl::UnavailableError("ending the progress bar on the console failed");
  return absl::OkStatus();
}

}  // namespace rollout::controller
