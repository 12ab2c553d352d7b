#include "workers/communicator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#ifdef ROLLOUT_WITH_GLOO
#include "workers/gloo_communicator.h"
#endif
#ifdef ROLLOUT_WITH_NCCL
#include "workers/nccl_communicator.h"
#endif

namespace rollout::workers {

const std::vector<at::ScalarType>& BroadcastDtypes() {
  static const std::vector<at::ScalarType>* const dtypes = new std::vector<at::ScalarType>{
      at::kFloat, at::kBFloat16, at::kHalf, at::kDouble, at::kLong, at::kInt, at::kByte};
  return *dtypes;
}

absl::Status CheckBroadcastArguments(const std::vector<at::Tensor>& tensors, int root, int world_size,
                                     c10::Device device, const std::string& group) {
  if (root < 0 || root >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("broadcast in group ", group, ": root ", root, " is not in a world of ", world_size));
  }
  const std::vector<at::ScalarType>& dtypes = BroadcastDtypes();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor& tensor = tensors[i];
    const bool known_dtype = std::find(dtypes.begin(), dtypes.end(), tensor.scalar_type()) != dtypes.end();
    if (!tensor.defined() || tensor.device() != device || !tensor.is_contiguous() || !known_dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "broadcast in group ", group, ": tensor ", i, " must be contiguous on ", device.str(),
          " and float32, bfloat16, float16, float64, int64, int32 or uint8; got ",
          tensor.defined() ? std::string(c10::toString(tensor.scalar_type())) : "an undefined tensor", " on ",
          tensor.defined() ? tensor.device().str() : "no device",
          tensor.defined() && !tensor.is_contiguous() ? " (not contiguous)" : ""));
    }
  }
  return absl::OkStatus();
}

bool HasCollectivesFor(c10::Device device) {
#ifdef ROLLOUT_WITH_GLOO
  if (device.is_cpu()) return true;
#endif
#ifdef ROLLOUT_WITH_NCCL
  if (device.is_cuda()) return true;
#endif
  return false;
}

absl::StatusOr<std::unique_ptr<Communicator>> CreateCommunicator(const CommunicatorOptions& options,
                                                                 RendezvousClient* rendezvous) {
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size) {
    return absl::InvalidArgumentError(absl::StrCat("communicator for group ", options.group, ": rank ",
                                                   options.rank, " is not in a world of ", options.world_size));
  }
#ifdef ROLLOUT_WITH_GLOO
  if (options.device.is_cpu()) return CreateGlooCommunicator(options, rendezvous);
#endif
#ifdef ROLLOUT_WITH_NCCL
  if (options.device.is_cuda()) return CreateNcclCommunicator(options, rendezvous);
#endif
  return absl::UnimplementedError(absl::StrCat("group ", options.group, ": this build has no collectives for ",
                                               options.device.str(), " (CPU pools need Gloo, CUDA pools NCCL)"));
}

}  // namespace rollout::workers
