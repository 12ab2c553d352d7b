// The Communicator (communicator.h) of CPU workers: Gloo's ring all-reduce and its
// broadcast over TCP, connected through the run's rendezvous store.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "workers/communicator.h"

namespace rollout::workers {

// Returns once every rank of the group is connected, so any rank may drop its
// communicator right after without failing a peer that is still connecting.
absl::StatusOr<std::unique_ptr<Communicator>> CreateGlooCommunicator(const CommunicatorOptions& options,
                                                                     RendezvousClient* rendezvous);

}  // namespace rollout::workers
