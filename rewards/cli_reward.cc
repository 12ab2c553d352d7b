#include "rewards/cli_reward.h"

#include <iostream>
#include <ostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "common/output_command.h"
#include "common/status_macros.h"
#include "rewards/reward_selector.h"

namespace rollout::rewards {
namespace {

using nlohmann::json;

// One input line as a RewardInput; `where` is "stdin:LINE".
absl::StatusOr<RewardInput> ParseSample(const std::string& line, const std::string& where) {
  const json value = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": not a JSON object"));
  }
  if (!value.contains("response")) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": \"response\" is missing"));
  }
  // The ground truth at the top level, else where verl's rows keep it.
  const json* ground_truth = value.contains("ground_truth") ? &value.at("ground_truth") : nullptr;
  if (ground_truth == nullptr && value.contains("reward_model") && value.at("reward_model").is_object() &&
      value.at("reward_model").contains("ground_truth")) {
    ground_truth = &value.at("reward_model").at("ground_truth");
  }
  if (ground_truth == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": no ground truth: neither \"ground_truth\" nor \"reward_model\": {\"ground_truth\": ...} "
               "(a reward that needs none takes \"ground_truth\": \"\")"));
  }
  RewardInput input;
  const std::pair<const json*, std::string*> fields[] = {
      {&value.at("response"), &input.response},
      {ground_truth, &input.ground_truth},
      {value.contains("prompt") ? &value.at("prompt") : nullptr, &input.prompt},
      {value.contains("data_source") ? &value.at("data_source") : nullptr, &input.data_source}};
  for (const auto& [field, target] : fields) {
    if (field == nullptr) continue;
    // Ground truths are often numbers or objects in datasets; keep them as JSON text.
    *target = field->is_string() ? field->get<std::string>() : field->dump();
  }
  if (value.contains("extra_info")) input.extra_info = value.at("extra_info").dump();
  return input;
}

// Scores stdin line by line with the selector's reward for each line.
absl::Status ScoreLines(const RewardSelector& selector, std::ostream& out) {
  std::string line;
  for (int number = 1; std::getline(std::cin, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = absl::StrCat("stdin:", number);
    ASSIGN_OR_RETURN(const RewardInput input, ParseSample(line, where));
    absl::StatusOr<const RewardFunction*> reward = selector.Select(input);
    absl::StatusOr<RewardOutput> output =
        reward.ok() ? selector.Score(input) : absl::StatusOr<RewardOutput>(reward.status());
    if (!output.ok()) {
      return absl::Status(output.status().code(), absl::StrCat(where, ": ", output.status().message()));
    }
    out << json{{"score", output->score}, {"reward", (*reward)->name()}, {"extra", output->extra}}.dump()
        << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

int RunRewardCommand(const std::vector<std::string>& args) {
  std::string name, plugin, output;
  FlagSet flags("rollout reward [--name NAME | --plugin LIB.so] [--output FILE] < samples.jsonl",
                "Scores JSON lines {\"response\", \"ground_truth\", optional \"prompt\",\n"
                "\"data_source\", \"extra_info\"} from stdin (the ground truth may sit in verl's\n"
                "\"reward_model\": {\"ground_truth\": ...}); writes {\"score\", \"reward\",\n"
                "\"extra\"} per line. Without --name or --plugin, each line's data_source picks\n"
                "the reward.");
  flags.AddString("name", &name, "reward function (gsm8k, countdown, math, exact_match, format)");
  flags.AddString("plugin", &plugin, "a reward plug-in library (rewards/plugin_api.h)");
  flags.AddString("output", &output, "write here instead of stdout");
  return RunOutputCommand("reward", flags, args, &output, [&](std::ostream& out) -> absl::Status {
    RewardSpec spec;
    spec.name = name;
    spec.plugin = plugin;
    ASSIGN_OR_RETURN(std::shared_ptr<const RewardSelector> selector, RewardSelector::Create(spec));
    return ScoreLines(*selector, out);
  });
}

}  // namespace rollout::rewards
