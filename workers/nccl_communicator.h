// The Communicator (communicator.h) of CUDA workers: NCCL all-reduce and broadcast on
// the device's current CUDA stream; rank 0's unique id reaches the others through the rendezvous
// store. Built only with ROLLOUT_WITH_NCCL.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "workers/communicator.h"

namespace rollout::workers {

absl::StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicator(const CommunicatorOptions& options,
                                                                     RendezvousClient* rendezvous);

}  // namespace rollout::workers
