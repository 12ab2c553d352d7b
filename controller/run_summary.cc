#include "controller/run_summary.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace rollout::controller {
namespace {

bool IsPrefixPattern(absl::string_view pattern) { return absl::EndsWith(pattern, "*"); }

bool Matches(absl::string_view pattern, absl::string_view metric) {
  if (IsPrefixPattern(pattern)) {
    return absl::StartsWith(metric, pattern.substr(0, pattern.size() - 1));
  }
  return pattern == metric;
}

// `text` right-aligned in `width` columns.
std::string PadLeft(const std::string& text, size_t width) {
  return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
}

}  // namespace

std::vector<std::string> DefaultSummaryMetrics() {
  return {kRewardCurveMetric, "val-core/*",    "response_length/mean", "actor/pg_loss",
          "actor/kl_loss",    "actor/entropy", "timing_s/step",        "perf/throughput"};
}

RunSummary::RunSummary(std::vector<std::string> tracked) : tracked_(std::move(tracked)) {}

bool RunSummary::IsTracked(const std::string& metric) const {
  return std::any_of(tracked_.begin(), tracked_.end(),
                     [&](const std::string& pattern) { return Matches(pattern, metric); });
}

void RunSummary::Record(int64_t step, const StepMetrics& metrics) {
  for (const auto& [name, value] : metrics) {
    if (std::isfinite(value) && IsTracked(name)) history_[name][step] = value;
  }
}

std::vector<std::string> RunSummary::Metrics() const {
  std::vector<std::string> metrics;
  for (const std::string& pattern : tracked_) {
    for (const auto& [name, unused_history] : history_) {
      const bool listed = std::find(metrics.begin(), metrics.end(), name) != metrics.end();
      if (Matches(pattern, name) && !listed) metrics.push_back(name);
    }
  }
  return metrics;
}

const std::map<int64_t, double>& RunSummary::History(const std::string& metric) const {
  static const std::map<int64_t, double> kNever;
  const auto it = history_.find(metric);
  return it == history_.end() ? kNever : it->second;
}

RunSummary::Stats RunSummary::StatsOf(const std::string& metric) const {
  const std::map<int64_t, double>& history = History(metric);
  Stats stats;
  if (history.empty()) return stats;
  stats.first = history.begin()->second;
  stats.last = history.rbegin()->second;
  stats.min = stats.max = stats.first;
  double sum = 0;
  for (const auto& [step, value] : history) {
    stats.min = std::min(stats.min, value);
    stats.max = std::max(stats.max, value);
    sum += value;
  }
  stats.steps = static_cast<int64_t>(history.size());
  stats.mean = sum / static_cast<double>(stats.steps);
  return stats;
}

std::string RunSummary::RenderTable() const {
  const std::vector<std::string> metrics = Metrics();
  if (metrics.empty()) return "";
  size_t name_width = std::string("metric").size();
  for (const std::string& name : metrics) name_width = std::max(name_width, name.size());
  constexpr size_t kColumn = 11;

  std::string table =
      absl::StrCat(absl::StrFormat("%-*s", name_width, "metric"), PadLeft("steps", kColumn),
                   PadLeft("first", kColumn), PadLeft("last", kColumn), PadLeft("min", kColumn),
                   PadLeft("max", kColumn), PadLeft("mean", kColumn), "\n");
  for (const std::string& name : metrics) {
    const Stats stats = StatsOf(name);
    absl::StrAppend(&table, absl::StrFormat("%-*s", name_width, name),
                    PadLeft(absl::StrCat(stats.steps), kColumn));
    for (double value : {stats.first, stats.last, stats.min, stats.max, stats.mean}) {
      absl::StrAppend(&table, PadLeft(FormatMetricValue(value), kColumn));
    }
    table += '\n';
  }
  return table;
}

std::string RunSummary::RenderPlot(const std::string& metric, int width, int height) const {
  const std::map<int64_t, double>& history = History(metric);
  if (history.empty()) return absl::StrCat(metric, ": no values recorded\n");
  width = std::max(width, 2);
  height = std::max(height, 2);

  const int64_t first_step = history.begin()->first;
  const int64_t last_step = history.rbegin()->first;
  const Stats stats = StatsOf(metric);
  // A flat curve gets a range around its value, so it is drawn across the middle.
  const double pad = stats.max > stats.min ? 0 : std::max(std::fabs(stats.min) * 0.1, 1e-3);
  const double low = stats.min - pad;
  const double high = stats.max + pad;

  std::vector<std::string> grid(height, std::string(width, ' '));
  for (const auto& [step, value] : history) {
    const int column =
        last_step == first_step
            ? 0
            : static_cast<int>(std::lround(static_cast<double>(step - first_step) * (width - 1) /
                                           static_cast<double>(last_step - first_step)));
    const int row = static_cast<int>(std::lround((high - value) / (high - low) * (height - 1)));
    grid[row][column] = '*';
  }

  // Value labels on the top, middle and bottom rows.
  const int middle_row = (height - 1) / 2;
  std::vector<std::string> labels(height);
  labels.front() = FormatMetricValue(high);
  labels.back() = FormatMetricValue(low);
  labels[middle_row] = FormatMetricValue(high - (high - low) * middle_row / (height - 1));
  size_t label_width = 0;
  for (const std::string& label : labels) label_width = std::max(label_width, label.size());

  std::string plot = absl::StrCat(metric, " over steps ", first_step, "..", last_step, "\n");
  for (int row = 0; row < height; ++row) {
    absl::StrAppend(&plot, PadLeft(labels[row], label_width), " |", grid[row], "\n");
  }
  absl::StrAppend(&plot, std::string(label_width, ' '), " +", std::string(width, '-'), "\n");
  const std::string left = absl::StrCat(first_step);
  const std::string right = last_step == first_step ? "" : absl::StrCat(last_step);
  absl::StrAppend(&plot, std::string(label_width + 2, ' '), left,
                  PadLeft(right, static_cast<size_t>(width) -
                                     std::min(left.size(), static_cast<size_t>(width))),
                  "\n");
  return plot;
}

std::string RunSummary::RenderChange(const std::string& pattern, const std::string& title) const {
  std::vector<std::string> names;
  size_t name_width = 0;
  for (const std::string& name : Metrics()) {
    if (!Matches(pattern, name)) continue;
    names.push_back(name);
    name_width = std::max(name_width, name.size());
  }
  if (names.empty()) return "";
  std::string out = absl::StrCat(title, "\n");
  for (const std::string& name : names) {
    const std::map<int64_t, double>& history = History(name);
    const auto& [first_step, first] = *history.begin();
    const auto& [last_step, last] = *history.rbegin();
    absl::StrAppend(&out, "  ", absl::StrFormat("%-*s", name_width, name), "  ", FormatMetricValue(first),
                    " (step ", first_step, ") -> ", FormatMetricValue(last), " (step ", last_step, ")  ",
                    absl::StrFormat("%+.1f points", 100.0 * (last - first)), "\n");
  }
  return out;
}

std::string RunSummary::Render() const {
  const std::string table = RenderTable();
  if (table.empty()) return "no metrics recorded\n";
  if (History(kRewardCurveMetric).empty()) return table;
  return absl::StrCat(table, "\n", RenderPlot(kRewardCurveMetric));
}

}  // namespace rollout::controller
