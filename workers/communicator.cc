#include "workers/communicator.h"

#include "absl/strings/str_cat.h"
#ifdef ROLLOUT_WITH_GLOO
#include "workers/gloo_communicator.h"
#endif
#ifdef ROLLOUT_WITH_NCCL
#include "workers/nccl_communicator.h"
#endif

namespace rollout::workers {

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
