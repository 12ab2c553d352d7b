#include "common/verl_default_links.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/recipe_schema.h"
#include "common/recipe_values.h"
#include "common/status_macros.h"

namespace rollout::config {

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
    google::protobuf::Message* leader_message = recipe;
    const google::protobuf::FieldDescriptor* leader_field = FieldAt(leader, &leader_message);
    const std::string value = ScalarText(*leader_message, leader_field);
    google::protobuf::Message* message = recipe;
    const google::protobuf::FieldDescriptor* field = FieldAt(follower, &message);
    RETURN_IF_ERROR(SetScalarFromText(message, field, value, follower,
                                      absl::StrCat("(verl's default: the value of ", leader, ")")));
  }
  return absl::OkStatus();
}

}  // namespace rollout::config
