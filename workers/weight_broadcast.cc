#include "workers/weight_broadcast.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace rollout::workers {
namespace {

constexpr int kRoot = 0;

// One line "name dtype [d0,d1]" per tensor, in order.
std::string Manifest(const NamedTensors& tensors) {
  std::string manifest;
  for (const auto& [name, tensor] : tensors) {
    absl::StrAppend(&manifest, name, " ", c10::toString(tensor->scalar_type()), " [",
                    absl::StrJoin(tensor->sizes(), ","), "]\n");
  }
  return manifest;
}

// What makes the received manifest `sent` differ from this rank's `own`; empty when
// they are equal.
std::string FirstDifference(const std::string& sent, const std::string& own) {
  if (sent == own) return "";
  const std::vector<std::string> sent_lines = absl::StrSplit(sent, '\n', absl::SkipEmpty());
  const std::vector<std::string> own_lines = absl::StrSplit(own, '\n', absl::SkipEmpty());
  const std::string hint = " (the actor and the rollout must load the same model: actor.model.*)";
  for (size_t i = 0; i < sent_lines.size() && i < own_lines.size(); ++i) {
    if (sent_lines[i] != own_lines[i]) {
      return absl::StrCat("tensor ", i, " differs: the actor sends '", sent_lines[i], "', this rollout's model has '",
                          own_lines[i], "'", hint);
    }
  }
  return absl::StrCat("the actor sends ", sent_lines.size(), " tensors, this rollout's model has ", own_lines.size(),
                      hint);
}

// [n] uint8 on `device` holding `text`.
at::Tensor BytesOf(const std::string& text, c10::Device device) {
  at::Tensor bytes = at::empty({static_cast<int64_t>(text.size())}, at::kByte);
  std::memcpy(bytes.data_ptr(), text.data(), text.size());
  return bytes.to(device);
}

std::string TextOf(const at::Tensor& bytes) {
  const at::Tensor host = bytes.cpu();
  return std::string(static_cast<const char*>(host.data_ptr()), static_cast<size_t>(host.numel()));
}

// Rank 0's manifest reaches every rank, each receiver compares it with `manifest`
// (its own), and every rank learns whether any receiver disagreed: OK on every rank,
// or FailedPrecondition on every rank.
absl::Status AgreeOnManifest(Communicator& group, const std::string& manifest, c10::Device device) {
  const bool root = group.rank() == kRoot;
  at::Tensor length = at::full({1}, root ? static_cast<int64_t>(manifest.size()) : int64_t{0},
                               at::TensorOptions().dtype(at::kLong).device(device));
  RETURN_IF_ERROR(group.Broadcast({length}, kRoot));
  at::Tensor sent = root ? BytesOf(manifest, device)
                         : at::empty({length.item<int64_t>()}, at::TensorOptions().dtype(at::kByte).device(device));
  RETURN_IF_ERROR(group.Broadcast({sent}, kRoot));
  const std::string difference = root ? "" : FirstDifference(TextOf(sent), manifest);
  at::Tensor disagreeing = at::full({1}, difference.empty() ? 0.0f : 1.0f,
                                    at::TensorOptions().dtype(at::kFloat).device(device));
  RETURN_IF_ERROR(group.AllReduceSum({disagreeing}));
  if (!difference.empty()) return absl::FailedPreconditionError(difference);
  const int64_t receivers_disagreeing = static_cast<int64_t>(disagreeing.item<float>());
  if (receivers_disagreeing > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        receivers_disagreeing, " of the ", group.world_size() - 1,
        " rollout workers hold tensors that differ from the actor's; nothing was sent (their errors name the tensor)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<WeightSyncMembership>> WeightSyncMembershipFrom(const Batch& init,
                                                                             const std::string& pool, int rank) {
  WeightSyncMembership membership;
  membership.group = init.Meta("weight_sync_group");
  if (membership.group.empty()) return std::nullopt;
  const std::string actor_pool = init.Meta("weight_sync_actor_pool");
  const std::string rollout_pool = init.Meta("weight_sync_rollout_pool");
  const std::string world = init.Meta("weight_sync_world_size");
  if (actor_pool.empty() || rollout_pool.empty() || actor_pool == rollout_pool ||
      !absl::SimpleAtoi(world, &membership.world_size) || membership.world_size < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "weight-sync group ", membership.group, ": needs an actor pool and another rollout pool and a world of 2 or more; got '",
        actor_pool, "', '", rollout_pool, "' and '", world, "'"));
  }
  if (pool == actor_pool && rank == 0) {
    membership.rank = 0;
  } else if (pool == rollout_pool) {
    membership.rank = 1 + rank;
  } else {
    return std::nullopt;
  }
  if (membership.rank >= membership.world_size) {
    return absl::InvalidArgumentError(absl::StrCat("weight-sync group ", membership.group, ": rollout rank ", rank,
                                                   " of pool ", pool, " does not fit a world of ",
                                                   membership.world_size));
  }
  return membership;
}

absl::Status BroadcastNamedTensors(Communicator& group, const NamedTensors& tensors, c10::Device device) {
  c10::NoGradGuard no_grad;
  RETURN_IF_ERROR(AgreeOnManifest(group, Manifest(tensors), device));
  std::vector<at::Tensor> sent;
  sent.reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) sent.push_back(tensor->detach().contiguous());
  return group.Broadcast(sent, kRoot);
}

absl::Status ReceiveNamedTensors(Communicator& group, const NamedTensors& tensors, c10::Device device) {
  c10::NoGradGuard no_grad;
  RETURN_IF_ERROR(AgreeOnManifest(group, Manifest(tensors), device));
  // Straight into the tensors where they are contiguous (parameters are), else into a
  // copy that is copied back.
  std::vector<at::Tensor> received;
  received.reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) received.push_back(tensor->detach().contiguous());
  RETURN_IF_ERROR(group.Broadcast(received, kRoot));
  for (size_t i = 0; i < tensors.size(); ++i) {
    at::Tensor& target = *tensors[i].second;
    if (received[i].data_ptr() != target.data_ptr()) target.copy_(received[i]);
  }
  return absl::OkStatus();
}

}  // namespace rollout::workers
