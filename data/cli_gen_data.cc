#include "data/cli_gen_data.h"

#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/file_util.h"
#include "common/flags.h"
#include "common/status_macros.h"
#include "data/task_generators.h"

namespace rollout::data {
namespace {

using nlohmann::json;

struct GenDataOptions {
  std::string out;
  SplitOptions split;
  ArithmeticOptions arithmetic;
  CountdownOptions countdown;
};

absl::StatusOr<TaskSplits> Generate(const std::string& task, const GenDataOptions& options) {
  if (task == "arithmetic") return GenerateArithmetic(options.arithmetic, options.split);
  if (task == "countdown") return GenerateCountdown(options.countdown, options.split);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown task '", task, "'; tasks: arithmetic, countdown"));
}

std::string PromptRows(const std::vector<Problem>& problems, const std::string& split) {
  std::string text;
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem& problem = problems[i];
    const json row = {{"prompt", problem.prompt},
                      {"data_source", problem.data_source},
                      {"ground_truth", json::parse(problem.ground_truth_json)},
                      {"extra_info", {{"split", split}, {"index", i}}}};
    absl::StrAppend(&text, row.dump(), "\n");
  }
  return text;
}

std::string SftRows(const std::vector<Problem>& problems) {
  std::string text;
  for (const Problem& problem : problems) {
    absl::StrAppend(&text, json{{"prompt", problem.prompt}, {"response", problem.response}}.dump(),
                    "\n");
  }
  return text;
}

std::string PreferenceRows(const std::vector<Problem>& problems) {
  std::string text;
  for (const Problem& problem : problems) {
    const json row = {{"prompt", problem.prompt},
                      {"chosen", problem.response},
                      {"rejected", problem.wrong_response}};
    absl::StrAppend(&text, row.dump(), "\n");
  }
  return text;
}

absl::Status WriteDataset(const TaskSplits& splits, const std::string& dir) {
  const std::pair<const char*, std::string> files[] = {
      {"train.jsonl", PromptRows(splits.train, "train")},
      {"val.jsonl", PromptRows(splits.validation, "val")},
      {"sft_train.jsonl", SftRows(splits.train)},
      {"sft_val.jsonl", SftRows(splits.validation)},
      {"dpo_train.jsonl", PreferenceRows(splits.train)},
      {"dpo_val.jsonl", PreferenceRows(splits.validation)},
  };
  for (const auto& [name, contents] : files) {
    RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, name), contents));
  }
  return absl::OkStatus();
}

}  // namespace

int RunGenDataCommand(const std::vector<std::string>& args) {
  GenDataOptions options;
  FlagSet flags("rollout gen-data TASK --out DIR [flags]   (TASK: arithmetic | countdown)",
                "Writes a generated task dataset as JSON lines in DIR: train.jsonl and\n"
                "val.jsonl (prompts with ground truths), sft_train.jsonl and sft_val.jsonl\n"
                "(prompt, response), dpo_train.jsonl and dpo_val.jsonl (prompt, chosen,\n"
                "rejected). No problem is in both splits. Deterministic for a seed.");
  flags.AddString("out", &options.out, "directory to write");
  flags.AddInt("train", &options.split.train_size, "training problems");
  flags.AddInt("val", &options.split.validation_size, "validation problems");
  flags.AddInt("seed", &options.split.seed, "random seed");
  flags.AddInt("min_digits", &options.arithmetic.min_digits,
               "arithmetic: fewest digits of an operand");
  flags.AddInt("max_digits", &options.arithmetic.max_digits,
               "arithmetic: most digits of an operand (<= 9)");
  flags.AddString("operators", &options.arithmetic.operators, "arithmetic: any of + - *");
  flags.AddInt("min_numbers", &options.countdown.min_numbers,
               "countdown: fewest numbers per problem (>= 2)");
  flags.AddInt("max_numbers", &options.countdown.max_numbers,
               "countdown: most numbers per problem (<= 6)");
  flags.AddInt("max_number", &options.countdown.max_number,
               "countdown: numbers are 1..max_number (<= 1000)");
  flags.AddInt("max_target", &options.countdown.max_target, "countdown: targets are 1..max_target");
  const auto usage_error = [](absl::string_view message) {
    std::cerr << "rollout gen-data: " << message << "\n";
    return 2;
  };
  absl::StatusOr<FlagSet::Parsed> parsed = flags.Parse(args);
  if (!parsed.ok()) return usage_error(parsed.status().message());
  if (parsed->help) {
    std::cout << flags.Usage();
    return 0;
  }
  if (parsed->positional.size() != 1 || options.out.empty()) {
    return usage_error("need one TASK and --out DIR (see --help)");
  }
  const std::string& task = parsed->positional[0];
  absl::StatusOr<TaskSplits> splits = Generate(task, options);
  if (!splits.ok()) return usage_error(splits.status().message());
  if (absl::Status written = WriteDataset(*splits, options.out); !written.ok()) {
    std::cerr << "rollout gen-data: writing " << options.out << ": " << written.message() << "\n";
    return 1;
  }
  std::cout << "wrote " << splits->train.size() << " training and " << splits->validation.size()
            << " validation " << task << " problems to " << options.out << "\n";
  return 0;
}

}  // namespace rollout::data
