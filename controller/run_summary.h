// RunSummary: what a run looked like, printed when it ends.
//
// It keeps the history of a chosen set of metrics (exact names, or prefixes written
// as "val-core/*") and renders
//  * a table: per metric, the first, last, min, max and mean over the steps that
//    reported it, and how many steps that was;
//  * a text plot of one metric over the steps (the reward curve,
//    critic/score/mean), `width` x `height` characters of plot area with the value
//    range on the left and the step range below.
// NaN and infinite values are not recorded (they would make every statistic NaN);
// a step logged twice (a resumed run repeating steps) keeps the later value.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "controller/metric_sink.h"

namespace rollout::controller {

// critic/score/mean, val-core/*, response_length/mean, actor/pg_loss,
// actor/kl_loss, actor/entropy, timing_s/step, perf/throughput.
std::vector<std::string> DefaultSummaryMetrics();

inline constexpr char kRewardCurveMetric[] = "critic/score/mean";

class RunSummary {
 public:
  struct Stats {
    double first = 0, last = 0, min = 0, max = 0, mean = 0;
    int64_t steps = 0;
  };

  // `tracked`: names, or prefixes ending in '*'; the table lists them in this order
  // (names matched by one prefix in name order).
  explicit RunSummary(std::vector<std::string> tracked = DefaultSummaryMetrics());

  void Record(int64_t step, const StepMetrics& metrics);

  // Tracked metrics that were recorded at least once, in table order.
  std::vector<std::string> Metrics() const;
  // Statistics of `metric`; steps == 0 when it was never recorded.
  Stats StatsOf(const std::string& metric) const;
  // Step -> value; empty when `metric` was never recorded.
  const std::map<int64_t, double>& History(const std::string& metric) const;

  // A header line, then one line per recorded metric; "" when none was recorded.
  std::string RenderTable() const;
  // The plot of `metric`, titled with its name, ending in '\n'; a one-line note
  // when it was never recorded. `width` or `height` below 2 is raised to 2.
  std::string RenderPlot(const std::string& metric, int width = 60, int height = 12) const;
  // For each recorded metric matching `pattern` (a name, or a prefix ending in '*'):
  // its first and last value side by side with their steps and the change in points
  // (x100, for rates in [0, 1]), under `title`:
  //   <title>
  //     val-core/arithmetic/reward/mean@1   0.312 (step 0) -> 0.547 (step 40)   +23.5 points
  // "" when no such metric was recorded.
  std::string RenderChange(const std::string& pattern, const std::string& title) const;
  // The table and the reward curve (when rewards were recorded: SFT, DPO and
  // validation-only runs have none): what the trainer prints at the end.
  std::string Render() const;

 private:
  bool IsTracked(const std::string& metric) const;

  const std::vector<std::string> tracked_;
  std::map<std::string, std::map<int64_t, double>> history_;
};

}  // namespace rollout::controller
