// `trainer.logger: [console]`: training progress for a person watching.
//
// Per step, one compact line with the progress and a handful of key metrics (those
// that are present), e.g.
//   step 30/100 30% | 0:01:23 elapsed, ETA 0:03:14 | score 0.512 | pg_loss -0.0123 |
//   kl_loss 0.0012 | resp_len 123.4 | 12.3 s/step | 1235 tok/s
// (one line), followed by every `val-core/...` metric on validation steps. On a
// terminal a progress bar is kept on the last line and redrawn in place (carriage
// return) below the step lines; on anything else (a log file, a test) only the lines
// are written, so no control characters reach the file. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "controller/metric_sink.h"

namespace rollout::controller {

struct ConsoleSinkOptions {
  // Whether the stream shows on a terminal (the caller knows, e.g. isatty(2)).
  bool is_terminal = false;
  // Steps of the whole run; 0 when unknown (then no percentage, bar or ETA).
  int64_t total_steps = 0;
  // The global step the run starts after: 0 for a fresh run, the checkpoint's step
  // for a resumed one. The ETA uses the pace of the steps done since.
  int64_t initial_step = 0;
  // The clock for elapsed time and ETA; tests pass a fake one.
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

// How much of a logged generation's input or output the console shows.
inline constexpr size_t kGenerationTextBytes = 200;

class ConsoleSink final : public MetricSink {
 public:
  // `out` must outlive the sink. Elapsed time counts from construction.
  ConsoleSink(std::ostream* out, ConsoleSinkOptions options);
  ~ConsoleSink() override;  // Close()

  absl::Status Log(int64_t step, const StepMetrics& metrics) override;
  // A line each, under a heading naming the step: the score, then the input and the
  // output quoted, with line breaks and tabs escaped, each cut after
  // kGenerationTextBytes bytes (at a character boundary, marked "...").
  absl::Status LogGenerations(int64_t step, const std::vector<GenerationSample>& samples) override;
  // Ends the progress bar's line on a terminal. Idempotent.
  absl::Status Close() override;

 private:
  std::string ProgressText(int64_t step, absl::Duration elapsed) const;
  std::string ProgressBar(int64_t step, absl::Duration elapsed) const;

  std::ostream* const out_;
  const ConsoleSinkOptions options_;
  const absl::Time start_;
  bool bar_shown_ = false;  // the last line on the terminal is the bar
};

// "1:02:03" (hours unbounded), or "--:--" for a negative or infinite duration.
std::string FormatClockDuration(absl::Duration duration);

}  // namespace rollout::controller
