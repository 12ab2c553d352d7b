#include "common/verl_default_links.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/check.h"
#include "common/recipe_values.h"
#include "common/status_macros.h"

namespace rollout::config {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The message holding the last segment of `key` and that segment's field. The table's
// keys are the schema's own: a missing one is a bug here.
std::pair<Message*, const FieldDescriptor*> Locate(const std::string& key, Message* recipe) {
  const std::vector<std::string> segments = absl::StrSplit(key, '.');
  Message* message = recipe;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    const FieldDescriptor* field = message->GetDescriptor()->FindFieldByName(segments[i]);
    ROLLOUT_CHECK(field != nullptr && field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) << key;
    message = message->GetReflection()->MutableMessage(message, field);
  }
  const FieldDescriptor* field = message->GetDescriptor()->FindFieldByName(segments.back());
  ROLLOUT_CHECK(field != nullptr && !field->is_repeated() && field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE)
      << key;
  return {message, field};
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& VerlDefaultLinks() {
  static const auto* const links = new std::vector<std::pair<std::string, std::string>>{
      {"critic.ppo_mini_batch_size", "actor.ppo_mini_batch_size"},
      {"critic.ppo_epochs", "actor.ppo_epochs"},
      {"critic.shuffle", "actor.shuffle"},
      {"critic.loss_agg_mode", "actor.loss_agg_mode"},
      {"critic.use_dynamic_bsz", "actor.use_dynamic_bsz"},
      {"critic.forward_micro_batch_size_per_gpu", "critic.ppo_micro_batch_size_per_gpu"},
      {"critic.forward_max_token_len_per_gpu", "critic.ppo_max_token_len_per_gpu"},
      {"rollout.log_prob_use_dynamic_bsz", "actor.use_dynamic_bsz"},
      {"rollout.log_prob_max_token_len_per_gpu", "actor.ppo_max_token_len_per_gpu"},
      {"ref.log_prob_use_dynamic_bsz", "actor.use_dynamic_bsz"},
      {"ref.log_prob_max_token_len_per_gpu", "actor.ppo_max_token_len_per_gpu"},
      {"reward_model.use_dynamic_bsz", "critic.use_dynamic_bsz"},
      {"reward_model.forward_max_token_len_per_gpu", "critic.forward_max_token_len_per_gpu"},
  };
  return *links;
}

absl::Status ApplyVerlDefaultLinks(const std::map<std::string, std::string>& sources, Recipe* recipe) {
  for (const auto& [follower, leader] : VerlDefaultLinks()) {
    if (sources.count(follower) > 0) continue;
    const auto [leader_message, leader_field] = Locate(leader, recipe);
    const std::string value = ScalarText(*leader_message, leader_field);
    const auto [message, field] = Locate(follower, recipe);
    RETURN_IF_ERROR(SetScalarFromText(message, field, value, follower,
                                      absl::StrCat("(verl's default: the value of ", leader, ")")));
  }
  return absl::OkStatus();
}

}  // namespace rollout::config
