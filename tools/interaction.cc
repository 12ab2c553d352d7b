#include "tools/interaction.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "rewards/builtin_rewards.h"
#include "tools/builtin_tools.h"
#include "tools/plugin_config.h"
#include "tools/plugin_interaction.h"
#include "tools/yaml_json.h"

namespace rollout::tools {
namespace {

using json = nlohmann::ordered_json;

// As verl's Gsm8kInteraction reads the reply: the content of the last assistant message
// ("" when there is none or it is not a string).
std::string LastAssistantContent(const json& messages) {
  for (auto message = messages.rbegin(); message != messages.rend(); ++message) {
    if (message->is_object() && message->value("role", json()) == "assistant") {
      const json content = message->value("content", json());
      return content.is_string() ? content.get<std::string>() : "";
    }
  }
  return "";
}

class Gsm8kInteraction : public Interaction {
 public:
  Gsm8kInteraction()
      : reward_(rewards::MakeGsm8kReward({/*method=*/"flexible", /*format_score=*/0.0, /*score=*/1.0})) {}

  absl::Status CheckKwargs(const json& interaction_kwargs) const override {
    return Gsm8kGroundTruth(interaction_kwargs, kScorer).status();
  }

  absl::StatusOr<UserTurn> Respond(const json& messages, const json& interaction_kwargs) const override {
    rewards::RewardInput input;
    input.response = LastAssistantContent(messages);
    ASSIGN_OR_RETURN(input.ground_truth, Gsm8kGroundTruth(interaction_kwargs, kScorer));
    ASSIGN_OR_RETURN(const rewards::RewardOutput scored, reward_->Score(input));
    UserTurn turn;
    turn.score = scored.score;
    turn.ends = scored.score == 1.0;
    turn.content = turn.ends ? "Your response is correct!"
                             : "Your response is incorrect! You need to reflect on your answer and try again.";
    return turn;
  }

 private:
  static constexpr absl::string_view kScorer = "the gsm8k interaction scores replies";
  std::unique_ptr<rewards::RewardFunction> reward_;
};

// The interaction `class_name` with its config's object: a plug-in (its library relative
// to the config file's folder) or a built-in one.
absl::StatusOr<std::unique_ptr<Interaction>> MakeInteraction(const std::string& class_name, json config,
                                                             const std::string& config_path) {
  if (class_name == "plugin") {
    ASSIGN_OR_RETURN(const PluginConfig plugin, ReadPluginConfig(std::move(config), config_path));
    return LoadInteractionPlugin(plugin.library, plugin.config);
  }
  if (class_name == "gsm8k" || class_name == "verl.interactions.gsm8k_interaction.Gsm8kInteraction") {
    if (!config.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(class_name, " takes no config; got ", config.dump()));
    }
    return std::make_unique<Gsm8kInteraction>();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no built-in interaction has class_name '", class_name,
                   "' (Python interactions cannot be loaded); the built-in interactions: gsm8k, "
                   "verl.interactions.gsm8k_interaction.Gsm8kInteraction; your own: class_name plugin "
                   "(tools/interaction_plugin_api.h)"));
}

// verl's default name: the class name's last part, lowercased, without "Interaction".
std::string DefaultName(const std::string& class_name) {
  std::string name = class_name.substr(class_name.rfind('.') + 1);
  if (absl::EndsWith(name, "Interaction")) name.resize(name.size() - std::string("Interaction").size());
  return absl::AsciiStrToLower(name);
}

absl::Status AddInteraction(const json& entry, const std::string& config_path, InteractionSet& interactions) {
  if (!entry.is_object()) return absl::InvalidArgumentError("is not a map");
  const auto class_name = entry.find("class_name");
  if (class_name == entry.end() || !class_name->is_string()) {
    return absl::InvalidArgumentError("has no string class_name");
  }
  json config = entry.value("config", json::object());
  if (config.is_null()) config = json::object();
  if (!config.is_object()) return absl::InvalidArgumentError("has a config that is not a map");
  const json name = entry.value("name", json());
  if (!name.is_null() && !name.is_string()) return absl::InvalidArgumentError("has a name that is not a string");
  ASSIGN_OR_RETURN(std::unique_ptr<Interaction> interaction,
                   MakeInteraction(class_name->get<std::string>(), std::move(config), config_path));
  return interactions.Add(name.is_string() ? name.get<std::string>() : DefaultName(class_name->get<std::string>()),
                          std::move(interaction));
}

}  // namespace

absl::Status Interaction::CheckKwargs(const json& /*interaction_kwargs*/) const { return absl::OkStatus(); }

absl::Status InteractionSet::Add(const std::string& name, std::unique_ptr<Interaction> interaction) {
  if (by_name_.count(name) > 0) {
    return absl::InvalidArgumentError(absl::StrCat("two interactions are named '", name, "'"));
  }
  by_name_[name] = std::move(interaction);
  return absl::OkStatus();
}

absl::Status InteractionSet::CheckInteractionKwargs(const json& interaction_kwargs) const {
  if (!interaction_kwargs.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("must be an object, not ", interaction_kwargs.type_name()));
  }
  const json name = interaction_kwargs.value("name", json());
  std::vector<std::string> names;
  for (const auto& [known, interaction] : by_name_) names.push_back(known);
  if (!name.is_string()) {
    return absl::InvalidArgumentError(absl::StrCat("needs the string \"name\" of its interaction (one of ",
                                                   absl::StrJoin(names, ", "), ")"));
  }
  const auto interaction = by_name_.find(name.get<std::string>());
  if (interaction == by_name_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("names ", name.get<std::string>(),
                                                   ", which rollout.multi_turn.interaction_config_path does not hold "
                                                   "(it holds ", absl::StrJoin(names, ", "), ")"));
  }
  if (absl::Status status = interaction->second->CheckKwargs(interaction_kwargs); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("for ", interaction->first, " ", status.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<UserTurn> InteractionSet::Respond(const json& messages, const json& interaction_kwargs) const {
  RETURN_IF_ERROR(CheckInteractionKwargs(interaction_kwargs));
  return by_name_.at(interaction_kwargs["name"].get<std::string>())->Respond(messages, interaction_kwargs);
}

absl::StatusOr<InteractionSet> LoadInteractionConfig(const std::string& path) {
  ASSIGN_OR_RETURN(const json config,
                   LoadYamlAsJson(path, "interaction config", "rollout.multi_turn.interaction_config_path"));
  const auto list = config.is_object() ? config.find("interaction") : config.end();
  if (list == config.end() || !list->is_array() || list->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("interaction config ", path, " has no list of interactions under 'interaction'"));
  }
  InteractionSet interactions;
  for (size_t i = 0; i < list->size(); ++i) {
    if (absl::Status added = AddInteraction((*list)[i], path, interactions); !added.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("interaction config ", path, ": interaction[", i, "]: ", added.message()));
    }
  }
  return interactions;
}

absl::StatusOr<InteractionSet> LoadMultiTurnInteractions(const config::MultiTurnConfig& multi_turn) {
  if (!multi_turn.enable() || multi_turn.interaction_config_path().empty()) return InteractionSet();
  return LoadInteractionConfig(multi_turn.interaction_config_path());
}

}  // namespace rollout::tools
