#include "workers/optimizer_shards.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/check.h"
#include "common/status_macros.h"

namespace rollout::workers {

std::vector<int> BalancedOwners(const std::vector<at::Tensor*>& params, int world_size) {
  ROLLOUT_CHECK(world_size >= 1);
  int64_t total = 0;
  for (const at::Tensor* param : params) total += param->numel();
  std::vector<int> owners;
  int64_t before = 0;  // elements of the tensors before this one
  for (const at::Tensor* param : params) {
    // Twice the middle element's position, so that odd sizes stay exact.
    const int64_t middle2 = 2 * before + param->numel();
    const int64_t owner = total == 0 ? 0 : middle2 * world_size / (2 * total);
    owners.push_back(static_cast<int>(std::min<int64_t>(owner, world_size - 1)));
    before += param->numel();
  }
  return owners;
}

StateShards ShardsFor(const std::vector<at::Tensor*>& params, const Communicator* group) {
  if (group == nullptr || group->world_size() == 1) return StateShards();
  return StateShards{group->rank(), group->world_size(), BalancedOwners(params, group->world_size())};
}

std::string ShareOf(const AdamW& optimizer) {
  const std::vector<at::Tensor*>& params = optimizer.params();
  int64_t tensors = 0, elements = 0, total = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    total += params[i]->numel();
    if (!optimizer.Owns(i)) continue;
    ++tensors;
    elements += params[i]->numel();
  }
  return absl::StrFormat(
      "optimizer state sharded over %d ranks (ZeRO-1): rank %d steps %d of %d tensors, %d of %d elements (%.1f%%)",
      optimizer.shards().world_size, optimizer.shards().rank, tensors, params.size(), elements, total,
      total == 0 ? 0.0 : 100.0 * static_cast<double>(elements) / static_cast<double>(total));
}

absl::Status BroadcastStepped(Communicator& group, const AdamW& optimizer) {
  const std::vector<at::Tensor*>& params = optimizer.params();
  const std::vector<int>& owners = optimizer.shards().owners;
  ROLLOUT_CHECK(owners.size() == params.size());
  c10::NoGradGuard no_grad;
  for (int root = 0; root < group.world_size(); ++root) {
    std::vector<at::Tensor> stepped;
    for (size_t i = 0; i < params.size(); ++i) {
      if (owners[i] == root && params[i]->grad().defined()) stepped.push_back(*params[i]);
    }
    if (stepped.empty()) continue;
    RETURN_IF_ERROR(WithContext(group.Broadcast(stepped, root),
                                absl::StrCat("copying the parameters rank ", root, " stepped")));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<AdamW::State>> GatherStates(Communicator& group, const AdamW& optimizer) {
  const std::vector<at::Tensor*>& params = optimizer.params();
  const std::vector<AdamW::State>& states = optimizer.states();
  const std::vector<int>& owners = optimizer.shards().owners;
  ROLLOUT_CHECK(owners.size() == params.size());
  const int64_t count = static_cast<int64_t>(params.size());
  if (count == 0) return std::vector<AdamW::State>();
  c10::NoGradGuard no_grad;
  // Per parameter, filled in by its owner and summed over the group: whether it has
  // state, and whether that state has a master.
  at::Tensor kinds = at::zeros({count, 2}, at::kFloat);
  for (int64_t i = 0; i < count; ++i) {
    if (!optimizer.Owns(i)) continue;
    kinds[i][0] = states[i].step.defined() ? 1 : 0;
    kinds[i][1] = states[i].master.defined() ? 1 : 0;
  }
  at::Tensor summed = kinds.to(params.front()->device());
  RETURN_IF_ERROR(WithContext(group.AllReduceSum({summed}), "gathering the optimizer state's layout"));
  kinds = summed.cpu();
  const auto kinds_at = kinds.accessor<float, 2>();
  std::vector<AdamW::State> gathered(group.rank() == 0 ? count : 0);
  for (int64_t i = 0; i < count; ++i) {
    if (kinds_at[i][0] == 0) continue;  // never stepped: no state anywhere
    const at::Tensor& param = *params[i];
    AdamW::State state = states[i];
    if (!optimizer.Owns(i)) {
      state.exp_avg = at::empty(param.sizes(), StateOptions(param));
      state.exp_avg_sq = at::empty(param.sizes(), StateOptions(param));
      state.step = at::empty({}, param.options().dtype(at::kFloat));
      if (kinds_at[i][1] != 0) state.master = at::empty(param.sizes(), param.options().dtype(at::kFloat));
    }
    std::vector<at::Tensor> parts = {state.exp_avg, state.exp_avg_sq, state.step};
    if (state.master.defined()) parts.push_back(state.master);
    RETURN_IF_ERROR(WithContext(group.Broadcast(parts, owners[i]),
                                absl::StrCat("gathering the optimizer state of parameter ", i)));
    if (group.rank() != 0) continue;
    if (optimizer.Owns(i)) {
      gathered[i] = std::move(state);
    } else {
      gathered[i] = AdamW::State{state.exp_avg.cpu(), state.exp_avg_sq.cpu(), state.step.cpu(),
                                 state.master.defined() ? state.master.cpu() : at::Tensor()};
    }
  }
  return gathered;
}

absl::Status GatherForSave(Communicator* group, const CheckpointParts& parts, RoleCheckpoint& role) {
  if (!parts.optimizer || !role.optimizer->sharded()) return absl::OkStatus();
  ROLLOUT_CHECK(group != nullptr);
  ASSIGN_OR_RETURN(role.gathered_states, GatherStates(*group, *role.optimizer));
  return absl::OkStatus();
}

}  // namespace rollout::workers
