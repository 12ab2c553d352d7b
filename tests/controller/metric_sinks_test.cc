// ConsoleSink, JsonlSink and MetricsLogger (the TensorBoard sink has its own file).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/recipe_loader.h"
#include "controller/console_sink.h"
#include "controller/jsonl_sink.h"
#include "controller/metrics_logger.h"
#include "tests/support/temp_dir.h"

namespace rollout::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// A clock that moves 10 s every time it is read; the sink reads it once at
// construction and once per step, so step k is logged at 10*k s.
ConsoleSinkOptions TenSecondsPerStep(int64_t total_steps, bool is_terminal) {
  ConsoleSinkOptions options;
  options.total_steps = total_steps;
  options.is_terminal = is_terminal;
  options.now = [t = absl::UnixEpoch()]() mutable { return t += absl::Seconds(10); };
  return options;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

std::string ReadAll(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

const StepMetrics kTypicalStep = {
    {"critic/score/mean", 0.5},   {"actor/pg_loss", -0.0123},      {"actor/kl_loss", 0.001},
    {"actor/entropy", 1.25},      {"response_length/mean", 123.4}, {"timing_s/step", 12.5},
    {"perf/throughput", 12345.6}, {"timing_s/gen", 7.0},
};

TEST(ConsoleSink, StepLineShowsProgressAndKeyMetricsInFixedOrder) {
  std::ostringstream out;
  ConsoleSink sink(&out, TenSecondsPerStep(4, /*is_terminal=*/false));
  ASSERT_TRUE(sink.Log(1, kTypicalStep).ok());
  EXPECT_EQ(out.str(),
            "step 1/4 25% | 0:00:10 elapsed, ETA 0:00:30 | score 0.5 | pg_loss -0.0123 | "
            "kl_loss 0.001 | resp_len 123.4 | 12.5 s/step | 12346 tok/s\n");
}

TEST(ConsoleSink, NotATerminalGetsOneLinePerStepAndNoControlCharacters) {
  std::ostringstream out;
  ConsoleSink sink(&out, TenSecondsPerStep(3, /*is_terminal=*/false));
  for (int step = 1; step <= 3; ++step) ASSERT_TRUE(sink.Log(step, kTypicalStep).ok());
  ASSERT_TRUE(sink.Close().ok());
  const std::vector<std::string> lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[0], StartsWith("step 1/3 33% | 0:00:10 elapsed, ETA 0:00:20 |"));
  EXPECT_THAT(lines[2], StartsWith("step 3/3 100% | 0:00:30 elapsed, ETA 0:00:00 |"));
  EXPECT_THAT(out.str(), Not(HasSubstr("\r")));
  EXPECT_THAT(out.str(), Not(HasSubstr("\033")));
  EXPECT_THAT(out.str(), Not(HasSubstr("[#")));
}

TEST(ConsoleSink, TerminalKeepsABarOnTheLastLineAndRedrawsItInPlace) {
  std::ostringstream out;
  ConsoleSink sink(&out, TenSecondsPerStep(4, /*is_terminal=*/true));
  ASSERT_TRUE(sink.Log(1, {{"critic/score/mean", 0.25}}).ok());
  EXPECT_EQ(out.str(),
            "step 1/4 25% | 0:00:10 elapsed, ETA 0:00:30 | score 0.25\n"
            "[#######-----------------------] step 1/4 25% | 0:00:10 elapsed, ETA 0:00:30");
  out.str("");
  ASSERT_TRUE(sink.Log(2, {{"critic/score/mean", 0.5}}).ok());
  EXPECT_EQ(out.str(),
            "\r\033[Kstep 2/4 50% | 0:00:20 elapsed, ETA 0:00:20 | score 0.5\n"
            "[###############---------------] step 2/4 50% | 0:00:20 elapsed, ETA 0:00:20");
  out.str("");
  ASSERT_TRUE(sink.Close().ok());
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(out.str(), "\n");
}

TEST(ConsoleSink, ValidationMetricsAreAppendedWhenPresent) {
  std::ostringstream out;
  ConsoleSink sink(&out, TenSecondsPerStep(10, /*is_terminal=*/false));
  ASSERT_TRUE(sink.Log(5, {{"critic/score/mean", 0.5},
                           {"val-core/openai/gsm8k/reward/mean@1", 0.4375},
                           {"val-aux/openai/gsm8k/reward/std@1", 0.1}})
                  .ok());
  EXPECT_THAT(out.str(), HasSubstr("| score 0.5 | val-core/openai/gsm8k/reward/mean@1 0.4375\n"));
  EXPECT_THAT(out.str(), Not(HasSubstr("val-aux")));
}

TEST(ConsoleSink, UnknownTotalShowsNeitherPercentNorEtaNorBar) {
  std::ostringstream out;
  ConsoleSink sink(&out, TenSecondsPerStep(0, /*is_terminal=*/true));
  ASSERT_TRUE(sink.Log(3, {{"actor/pg_loss", 0.5}}).ok());
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(out.str(), "step 3 | 0:00:10 elapsed | pg_loss 0.5\n");
}

TEST(ConsoleSink, ResumedRunEstimatesFromTheStepsItRan) {
  std::ostringstream out;
  ConsoleSinkOptions options = TenSecondsPerStep(20, /*is_terminal=*/false);
  options.initial_step = 10;
  ConsoleSink sink(&out, options);
  ASSERT_TRUE(sink.Log(11, {}).ok());
  // 10 s for one step, 9 to go.
  EXPECT_EQ(out.str(), "step 11/20 55% | 0:00:10 elapsed, ETA 0:01:30\n");
}

TEST(ConsoleSink, NonFiniteValuesArePrintedNotHidden) {
  std::ostringstream out;
  ConsoleSink sink(&out, TenSecondsPerStep(0, /*is_terminal=*/false));
  ASSERT_TRUE(sink.Log(1, {{"actor/pg_loss", std::nan("")}, {"actor/kl_loss", INFINITY}}).ok());
  EXPECT_THAT(out.str(), HasSubstr("pg_loss nan | kl_loss inf"));
}

TEST(ConsoleSink, FailedStreamIsAnError) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  ConsoleSink sink(&out, TenSecondsPerStep(0, /*is_terminal=*/false));
  EXPECT_EQ(sink.Log(1, {}).code(), absl::StatusCode::kUnavailable);
}

TEST(ConsoleSink, GenerationsAreOneQuotedLineEachUnderTheirStep) {
  std::ostringstream out;
  ConsoleSink sink(&out, TenSecondsPerStep(4, /*is_terminal=*/false));
  ASSERT_TRUE(sink.LogGenerations(2, {{"2+3=", "5\n\"done\"", 1.0}, {"a\tb", "c\\d", 0.25}}).ok());
  EXPECT_EQ(out.str(),
            "validation generations at step 2 (trainer.log_val_generations):\n"
            "  score 1 | input \"2+3=\" | output \"5\\n\\\"done\\\"\"\n"
            "  score 0.25 | input \"a\\tb\" | output \"c\\\\d\"\n");
}

TEST(ConsoleSink, LongGenerationsAreCutAtACharacterBoundary) {
  std::ostringstream out;
  ConsoleSink sink(&out, TenSecondsPerStep(4, /*is_terminal=*/false));
  // 199 bytes, then a three-byte character across the cut.
  const std::string input = std::string(kGenerationTextBytes - 1, 'x') + "\xe4\xbd\xa0" + "tail";
  ASSERT_TRUE(sink.LogGenerations(1, {{input, "short", 0.0}}).ok());
  EXPECT_THAT(out.str(), HasSubstr("input \"" + std::string(kGenerationTextBytes - 1, 'x') + "\"... | output \"short\"\n"));
}

TEST(ConsoleSink, GenerationsOnATerminalKeepTheBarBelowThem) {
  std::ostringstream out;
  ConsoleSink sink(&out, TenSecondsPerStep(4, /*is_terminal=*/true));
  ASSERT_TRUE(sink.Log(1, {{"critic/score/mean", 0.25}}).ok());
  out.str("");
  ASSERT_TRUE(sink.LogGenerations(1, {{"q", "a", 1.0}}).ok());
  EXPECT_THAT(out.str(), StartsWith("\r\033[Kvalidation generations at step 1"));
  EXPECT_THAT(Lines(out.str()).back(), StartsWith("[#######-----------------------] step 1/4 25%"));
}

TEST(FormatClockDuration, HoursMinutesSecondsOrDashesWhenUnknown) {
  EXPECT_EQ(FormatClockDuration(absl::Seconds(3723)), "1:02:03");
  EXPECT_EQ(FormatClockDuration(absl::Hours(100)), "100:00:00");
  EXPECT_EQ(FormatClockDuration(-absl::Seconds(1)), "--:--");
  EXPECT_EQ(FormatClockDuration(absl::InfiniteDuration()), "--:--");
}

TEST(JsonlSink, WritesOneObjectPerStepWithStepFirst) {
  testing::TempDir dir;
  const std::string path = dir.Path("metrics.jsonl");
  absl::StatusOr<std::unique_ptr<JsonlSink>> sink = JsonlSink::Open(path);
  ASSERT_TRUE(sink.ok()) << sink.status();
  ASSERT_TRUE((*sink)->Log(1, {{"critic/score/mean", 0.25}, {"actor/pg_loss", -0.5}}).ok());
  // Flushed per line: readable before Close().
  EXPECT_EQ(ReadAll(path), "{\"step\":1,\"actor/pg_loss\":-0.5,\"critic/score/mean\":0.25}\n");
  ASSERT_TRUE((*sink)->Log(2, {{"critic/score/mean", 0.1}}).ok());
  ASSERT_TRUE((*sink)->Close().ok());

  const std::vector<std::string> lines = Lines(ReadAll(path));
  ASSERT_EQ(lines.size(), 2u);
  const nlohmann::json second = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(second["step"], 2);
  EXPECT_DOUBLE_EQ(second["critic/score/mean"].get<double>(), 0.1);
}

TEST(JsonlSink, NonFiniteValuesAreWrittenAsNull) {
  EXPECT_EQ(
      FormatJsonlLine(3, {{"a", std::nan("")}, {"b", INFINITY}, {"c", -INFINITY}, {"d", 1.5}}),
      "{\"step\":3,\"a\":null,\"b\":null,\"c\":null,\"d\":1.5}");
}

TEST(JsonlSink, ReopeningAppendsSoAResumedRunContinuesTheFile) {
  testing::TempDir dir;
  const std::string path = dir.Path("metrics.jsonl");
  for (int step = 1; step <= 2; ++step) {
    absl::StatusOr<std::unique_ptr<JsonlSink>> sink = JsonlSink::Open(path);
    ASSERT_TRUE(sink.ok()) << sink.status();
    ASSERT_TRUE((*sink)->Log(step, {{"x", step}}).ok());
  }
  EXPECT_THAT(Lines(ReadAll(path)),
              ElementsAre("{\"step\":1,\"x\":1.0}", "{\"step\":2,\"x\":2.0}"));
}

TEST(JsonlSink, CreatesMissingParentDirectories) {
  testing::TempDir dir;
  const std::string path = dir.Path("jsonl_log/project/experiment/metrics.jsonl");
  absl::StatusOr<std::unique_ptr<JsonlSink>> sink = JsonlSink::Open(path);
  ASSERT_TRUE(sink.ok()) << sink.status();
  ASSERT_TRUE((*sink)->Log(1, {}).ok());
  EXPECT_EQ(ReadAll(path), "{\"step\":1}\n");
}

TEST(JsonlSink, UnwritablePathIsAnErrorNamingIt) {
  testing::TempDir dir;
  const std::string blocker = dir.Write("not_a_dir", "x");
  const std::string path = JoinPath(blocker, "metrics.jsonl");
  absl::StatusOr<std::unique_ptr<JsonlSink>> sink = JsonlSink::Open(path);
  ASSERT_FALSE(sink.ok());
  EXPECT_THAT(sink.status().message(), HasSubstr(path));
}

TEST(JsonlSink, LogAfterCloseIsFailedPrecondition) {
  testing::TempDir dir;
  absl::StatusOr<std::unique_ptr<JsonlSink>> sink = JsonlSink::Open(dir.Path("m.jsonl"));
  ASSERT_TRUE(sink.ok()) << sink.status();
  ASSERT_TRUE((*sink)->Close().ok());
  EXPECT_EQ((*sink)->Log(1, {}).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(JsonlSink, KeepsNumbersOnlySoGenerationsAddNothing) {
  testing::TempDir dir;
  absl::StatusOr<std::unique_ptr<JsonlSink>> sink = JsonlSink::Open(dir.Path("m.jsonl"));
  ASSERT_TRUE(sink.ok()) << sink.status();
  ASSERT_TRUE((*sink)->LogGenerations(1, {{"q", "a", 1.0}}).ok());
  ASSERT_TRUE((*sink)->Close().ok());
  EXPECT_EQ(ReadAll(dir.Path("m.jsonl")), "");
}

TEST(MetricsLogger, GenerationsGoToEverySinkAndNoneAreNothing) {
  std::ostringstream out;
  MetricsLoggerOptions options;
  options.console = &out;
  options.console_options = TenSecondsPerStep(3, /*is_terminal=*/false);
  absl::StatusOr<std::unique_ptr<MetricsLogger>> logger = MetricsLogger::Create(options);
  ASSERT_TRUE(logger.ok()) << logger.status();
  ASSERT_TRUE((*logger)->LogGenerations(1, {}).ok());
  EXPECT_EQ(out.str(), "");
  ASSERT_TRUE((*logger)->LogGenerations(1, {{"q", "a", 1.0}}).ok());
  EXPECT_THAT(out.str(), HasSubstr("input \"q\" | output \"a\""));
  ASSERT_TRUE((*logger)->Close().ok());
  EXPECT_EQ((*logger)->LogGenerations(2, {{"q", "a", 1.0}}).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(MetricsLogger, UnknownLoggerNamesTheSupportedOnes) {
  std::ostringstream out;
  MetricsLoggerOptions options;
  options.console = &out;
  options.loggers = {"console", "wandb"};
  options.tensorboard_dir = "tensorboard_log/p/e";
  absl::StatusOr<std::unique_ptr<MetricsLogger>> logger = MetricsLogger::Create(options);
  ASSERT_EQ(logger.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(logger.status().message(),
            "unknown trainer.logger 'wandb'; supported: console, jsonl, tensorboard (for wandb: "
            "add tensorboard to trainer.logger, then `wandb sync --sync-tensorboard "
            "tensorboard_log/p/e`)");
  options.loggers = {"mlflow"};
  EXPECT_EQ(MetricsLogger::Create(options).status().message(),
            "unknown trainer.logger 'mlflow'; supported: console, jsonl, tensorboard");
}

TEST(MetricsLogger, BadLoggerListCreatesNoFiles) {
  testing::TempDir dir;
  MetricsLoggerOptions options;
  options.loggers = {"jsonl", "tensorboard", "mlflow"};
  options.jsonl_path = dir.Path("metrics.jsonl");
  options.tensorboard_dir = dir.Path("tb");
  ASSERT_FALSE(MetricsLogger::Create(options).ok());
  absl::StatusOr<std::vector<std::string>> files = ListDirectory(dir.path());
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_TRUE(files->empty());
}

TEST(MetricsLogger, RepeatedOrUnconfiguredLoggersAreInvalidArgument) {
  MetricsLoggerOptions repeated;
  repeated.loggers = {"jsonl", "jsonl"};
  repeated.jsonl_path = "unused.jsonl";
  EXPECT_EQ(MetricsLogger::Create(repeated).status().message(),
            "trainer.logger lists 'jsonl' twice");

  MetricsLoggerOptions no_stream;  // default loggers: console
  EXPECT_EQ(MetricsLogger::Create(no_stream).status().code(), absl::StatusCode::kInvalidArgument);
  MetricsLoggerOptions no_dir;
  no_dir.loggers = {"tensorboard"};
  EXPECT_THAT(MetricsLogger::Create(no_dir).status().message(), HasSubstr("needs a log directory"));
}

TEST(MetricsLogger, FansEachStepOutToEverySinkAndPrintsTheSummaryOnClose) {
  testing::TempDir dir;
  std::ostringstream out;
  MetricsLoggerOptions options;
  options.loggers = {"console", "jsonl", "tensorboard"};
  options.console = &out;
  options.console_options = TenSecondsPerStep(3, /*is_terminal=*/false);
  options.jsonl_path = dir.Path("metrics.jsonl");
  options.tensorboard_dir = dir.Path("tb");
  absl::StatusOr<std::unique_ptr<MetricsLogger>> logger = MetricsLogger::Create(options);
  ASSERT_TRUE(logger.ok()) << logger.status();
  for (int step = 1; step <= 3; ++step) {
    ASSERT_TRUE(
        (*logger)->Log(step, {{"critic/score/mean", 0.1 * step}, {"timing_s/gen", 1.0}}).ok());
  }
  ASSERT_TRUE((*logger)->Close().ok());
  ASSERT_TRUE((*logger)->Close().ok());

  EXPECT_EQ(Lines(ReadAll(options.jsonl_path)).size(), 3u);
  absl::StatusOr<std::vector<std::string>> events = ListDirectory(options.tensorboard_dir);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 1u);
  EXPECT_THAT((*events)[0], HasSubstr("tfevents"));

  const std::string console = out.str();
  EXPECT_THAT(console, HasSubstr("step 3/3 100%"));
  EXPECT_THAT(console, HasSubstr("critic/score/mean over steps 1..3"));  // the reward curve
  EXPECT_EQ((*logger)->summary().StatsOf("critic/score/mean").steps, 3);
  // Printed once, though Close() ran twice.
  EXPECT_EQ(console.find("over steps"), console.rfind("over steps"));
  EXPECT_EQ((*logger)->Log(4, {}).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(MetricsLogger, NoLoggersWritesNothingButKeepsTheSummary) {
  MetricsLoggerOptions options;
  options.loggers = {};
  absl::StatusOr<std::unique_ptr<MetricsLogger>> logger = MetricsLogger::Create(options);
  ASSERT_TRUE(logger.ok()) << logger.status();
  ASSERT_TRUE((*logger)->Log(1, {{"critic/score/mean", 1.0}}).ok());
  EXPECT_EQ((*logger)->summary().StatsOf("critic/score/mean").steps, 1);
  EXPECT_TRUE((*logger)->Close().ok());
}

TEST(MetricsLogger, FailingSinkIsNamedAndOthersStillGetTheStep) {
  testing::TempDir dir;
  std::ostringstream out;
  MetricsLoggerOptions options;
  options.loggers = {"jsonl", "console"};
  options.console = &out;
  options.jsonl_path = dir.Path("metrics.jsonl");
  absl::StatusOr<std::unique_ptr<MetricsLogger>> logger = MetricsLogger::Create(options);
  ASSERT_TRUE(logger.ok()) << logger.status();
  ASSERT_TRUE((*logger)->Log(1, {}).ok());
  out.setstate(std::ios::badbit);  // the console breaks
  const absl::Status status = (*logger)->Log(2, {});
  EXPECT_THAT(std::string(status.message()), StartsWith("trainer.logger 'console': "));
  EXPECT_EQ(Lines(ReadAll(options.jsonl_path)).size(), 2u);
}

TEST(MetricsLoggerOptionsFor, RecipeLoggersAndVerlsDirectories) {
  absl::StatusOr<config::LoadedRecipe> recipe = config::ParseRecipeYaml(
      "trainer: {project_name: gsm8k, experiment_name: qwen_grpo, logger: [console, "
      "tensorboard]}\n",
      "test.yaml");
  ASSERT_TRUE(recipe.ok()) << recipe.status();
  const MetricsLoggerOptions options = MetricsLoggerOptionsFor(recipe->recipe.trainer());
  EXPECT_THAT(options.loggers, ElementsAre("console", "tensorboard"));
  EXPECT_EQ(options.tensorboard_dir, "tensorboard_log/gsm8k/qwen_grpo");
  EXPECT_EQ(options.jsonl_path, "jsonl_log/gsm8k/qwen_grpo/metrics.jsonl");
}

TEST(MetricsLoggerOptionsFor, RecipeDefaultIsConsoleOnly) {
  absl::StatusOr<config::LoadedRecipe> recipe =
      config::ParseRecipeYaml("trainer: {}\n", "test.yaml");
  ASSERT_TRUE(recipe.ok()) << recipe.status();
  EXPECT_THAT(MetricsLoggerOptionsFor(recipe->recipe.trainer()).loggers, ElementsAre("console"));
}

}  // namespace
}  // namespace rollout::controller
