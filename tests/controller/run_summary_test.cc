#include "controller/run_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"

namespace rollout::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

// The plot area of RenderPlot's output: the text right of " |" on each row.
std::vector<std::string> PlotRows(const std::string& plot) {
  std::vector<std::string> rows;
  for (absl::string_view line : absl::StrSplit(plot, '\n')) {
    const size_t bar = line.find(" |");
    if (bar != absl::string_view::npos) rows.emplace_back(line.substr(bar + 2));
  }
  return rows;
}

int CountPoints(const std::vector<std::string>& rows) {
  int points = 0;
  for (const std::string& row : rows)
    points += static_cast<int>(std::count(row.begin(), row.end(), '*'));
  return points;
}

TEST(RunSummary, StatsAreFirstLastMinMaxMeanOverTheStepsThatReported) {
  RunSummary summary;
  summary.Record(1, {{"critic/score/mean", 0.5}});
  summary.Record(2, {{"critic/score/mean", 0.1}});
  summary.Record(3, {});
  summary.Record(4, {{"critic/score/mean", 0.9}});
  const RunSummary::Stats stats = summary.StatsOf("critic/score/mean");
  EXPECT_EQ(stats.steps, 3);
  EXPECT_DOUBLE_EQ(stats.first, 0.5);
  EXPECT_DOUBLE_EQ(stats.last, 0.9);
  EXPECT_DOUBLE_EQ(stats.min, 0.1);
  EXPECT_DOUBLE_EQ(stats.max, 0.9);
  EXPECT_DOUBLE_EQ(stats.mean, 0.5);
  EXPECT_EQ(summary.StatsOf("actor/pg_loss").steps, 0);
}

TEST(RunSummary, KeepsOnlyTrackedMetricsWithPrefixPatterns) {
  RunSummary summary({"val-core/*", "actor/pg_loss"});
  summary.Record(1, {{"actor/pg_loss", 1},
                     {"actor/entropy", 2},
                     {"val-core/gsm8k/acc/mean@1", 3},
                     {"val-aux/gsm8k/acc/std@1", 4},
                     {"val-core/countdown/acc/mean@1", 5}});
  EXPECT_THAT(summary.Metrics(), ElementsAre("val-core/countdown/acc/mean@1",
                                             "val-core/gsm8k/acc/mean@1", "actor/pg_loss"));
}

TEST(RunSummary, NonFiniteValuesAreNotRecorded) {
  RunSummary summary({"actor/pg_loss"});
  summary.Record(1, {{"actor/pg_loss", 2.0}});
  summary.Record(2, {{"actor/pg_loss", std::nan("")}});
  summary.Record(3, {{"actor/pg_loss", INFINITY}});
  EXPECT_EQ(summary.StatsOf("actor/pg_loss").steps, 1);
  EXPECT_DOUBLE_EQ(summary.StatsOf("actor/pg_loss").mean, 2.0);
}

TEST(RunSummary, RepeatedStepKeepsTheLaterValue) {
  RunSummary summary({"x"});
  summary.Record(5, {{"x", 1.0}});
  summary.Record(5, {{"x", 3.0}});
  EXPECT_EQ(summary.History("x").size(), 1u);
  EXPECT_DOUBLE_EQ(summary.History("x").at(5), 3.0);
}

TEST(RunSummary, TableHasAHeaderAndOneRowPerMetricInTrackedOrder) {
  RunSummary summary;
  summary.Record(1, {{"timing_s/step", 10}, {"critic/score/mean", 0.25}});
  summary.Record(2, {{"timing_s/step", 20}, {"critic/score/mean", 0.75}});
  const std::vector<std::string> lines =
      absl::StrSplit(summary.RenderTable(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "metric                 steps      first       last        min        max       mean");
  EXPECT_EQ(lines[1],
            "critic/score/mean          2       0.25       0.75       0.25       0.75        0.5");
  EXPECT_EQ(lines[2],
            "timing_s/step              2         10         20         10         20         15");
}

TEST(RunSummary, TableIsEmptyWhenNothingWasRecorded) {
  RunSummary summary;
  summary.Record(1, {{"untracked", 1}});
  EXPECT_EQ(summary.RenderTable(), "");
  EXPECT_EQ(summary.Render(), "no metrics recorded\n");
}

TEST(RunSummary, RisingCurveRunsFromBottomLeftToTopRight) {
  RunSummary summary({"r"});
  for (int step = 1; step <= 100; ++step) summary.Record(step, {{"r", step / 100.0}});
  const std::string plot = summary.RenderPlot("r", 60, 12);
  EXPECT_THAT(plot, StartsWith("r over steps 1..100\n"));
  const std::vector<std::string> rows = PlotRows(plot);
  ASSERT_EQ(rows.size(), 12u);
  for (const std::string& row : rows) EXPECT_EQ(row.size(), 60u);
  EXPECT_EQ(rows.back()[0], '*');
  EXPECT_EQ(rows.front()[59], '*');
  EXPECT_EQ(rows.front()[0], ' ');
  EXPECT_EQ(rows.back()[59], ' ');
  // Value labels: maximum on top, minimum at the bottom, right-aligned.
  EXPECT_THAT(plot, HasSubstr("\n   1 | "));
  EXPECT_THAT(plot, HasSubstr("\n0.01 |*"));
  // The step range under the axis, first step at its start and last at its end.
  const std::vector<std::string> lines = absl::StrSplit(plot, '\n', absl::SkipEmpty());
  EXPECT_EQ(lines[lines.size() - 2], "     +" + std::string(60, '-'));
  EXPECT_EQ(lines.back(), "      1" + std::string(56, ' ') + "100");
}

TEST(RunSummary, SinglePointIsPlottedOnce) {
  RunSummary summary({"r"});
  summary.Record(7, {{"r", 0.3}});
  const std::string plot = summary.RenderPlot("r", 20, 5);
  const std::vector<std::string> rows = PlotRows(plot);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(CountPoints(rows), 1);
  EXPECT_THAT(plot, HasSubstr("steps 7..7"));
}

TEST(RunSummary, ConstantCurveIsAFlatLineAcrossTheMiddle) {
  RunSummary summary({"r"});
  for (int step = 1; step <= 10; ++step) summary.Record(step, {{"r", 1.0}});
  const std::vector<std::string> rows = PlotRows(summary.RenderPlot("r", 10, 5));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[2], "**********");
  EXPECT_EQ(CountPoints(rows), 10);
}

TEST(RunSummary, ConstantZeroCurveStillPlots) {
  RunSummary summary({"r"});
  summary.Record(1, {{"r", 0.0}});
  summary.Record(2, {{"r", 0.0}});
  const std::vector<std::string> rows = PlotRows(summary.RenderPlot("r", 10, 5));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[2], "*        *");
}

TEST(RunSummary, PlotOfAnUnrecordedMetricSaysSo) {
  RunSummary summary;
  EXPECT_EQ(summary.RenderPlot("critic/score/mean"), "critic/score/mean: no values recorded\n");
}

TEST(RunSummary, TinyPlotSizesAreRaisedToTwo) {
  RunSummary summary({"r"});
  summary.Record(1, {{"r", 0.0}});
  summary.Record(2, {{"r", 1.0}});
  const std::vector<std::string> rows = PlotRows(summary.RenderPlot("r", 0, 1));
  EXPECT_THAT(rows, ElementsAre(" *", "* "));
}

TEST(RunSummary, RenderIsTheTableThenTheRewardCurve) {
  RunSummary summary;
  summary.Record(1, {{"critic/score/mean", 0.2}, {"response_length/mean", 100}});
  summary.Record(2, {{"critic/score/mean", 0.4}, {"response_length/mean", 120}});
  const std::string text = summary.Render();
  EXPECT_THAT(text, StartsWith(summary.RenderTable() + "\n"));
  EXPECT_THAT(text, HasSubstr(summary.RenderPlot("critic/score/mean")));
  EXPECT_THAT(PlotRows(text), Not(IsEmpty()));
}

TEST(RunSummary, RenderWithoutRewardsIsTheTableAlone) {
  RunSummary summary({"val/loss"});
  summary.Record(0, {{"val/loss", 6.2}});
  summary.Record(1, {{"val/loss", 5.1}});
  EXPECT_THAT(summary.RenderTable(), HasSubstr("val/loss"));
  EXPECT_EQ(summary.Render(), summary.RenderTable());
}

}  // namespace
}  // namespace rollout::controller
