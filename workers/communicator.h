// Collectives among a group of workers — a pool's data-parallel group, or the
// weight-sync group of an actor and a rollout in another pool (weight_broadcast.h):
// Gloo over TCP for CPU workers, NCCL for CUDA workers (builds with ROLLOUT_WITH_NCCL).
// verl's torch.distributed process group, reduced to what training needs.
//
// Every rank must make the same calls in the same order with tensors of the same
// shapes and dtypes. A peer that is gone or too slow ends a Gloo call with an error
// after the options' timeout; NCCL reports errors it detects (a dead peer may block
// it, and then the controller's worker watchdog ends the run).
// Not thread-safe: one collective at a time.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "workers/rendezvous_client.h"

namespace rollout::workers {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Sums each tensor element-wise over the ranks, in place. Tensors must be contiguous,
  // float32 and on the communicator's device; InvalidArgument otherwise.
  virtual absl::Status AllReduceSum(const std::vector<at::Tensor>& tensors) = 0;
  // Copies each tensor of rank `root` into the same tensor of every other rank, in
  // place (the root's are read only). Tensors must be contiguous, on the
  // communicator's device, of a dtype in BroadcastDtypes(), with the same shapes and
  // dtypes on every rank; InvalidArgument otherwise and for a root outside the world,
  // found before anything moves.
  virtual absl::Status Broadcast(const std::vector<at::Tensor>& tensors, int root) = 0;
};

// What Broadcast moves: the dtypes models train in (float32, bfloat16, float16), and
// float64, int64, int32 and uint8 for what goes with them (headers, names as bytes).
const std::vector<at::ScalarType>& BroadcastDtypes();

// Broadcast's argument check, shared by the implementations: InvalidArgument naming
// `group` and the offending tensor.
absl::Status CheckBroadcastArguments(const std::vector<at::Tensor>& tensors, int root, int world_size,
                                     c10::Device device, const std::string& group);

struct CommunicatorOptions {
  // Names the group within the run (the pool, or the weight-sync group); prefixes its
  // rendezvous keys.
  std::string group;
  int rank = 0;
  int world_size = 1;
  c10::Device device = c10::Device(c10::kCPU);
  // Gloo: the address this rank accepts its peers' connections on.
  std::string hostname = "127.0.0.1";
  // Rendezvous and, for Gloo, each collective.
  absl::Duration timeout = absl::Seconds(120);
};

// Whether this build has collectives for `device`'s type (CPU: Gloo; CUDA: NCCL).
bool HasCollectivesFor(c10::Device device);

// Connects this rank to the others of the group, which call it at the same time.
// Unimplemented for a device this build has no collectives for; InvalidArgument for a
// rank outside [0, world_size); an error naming the group and rank when a peer does
// not show up within the timeout or connecting fails.
absl::StatusOr<std::unique_ptr<Communicator>> CreateCommunicator(const CommunicatorOptions& options,
                                                                 RendezvousClient* rendezvous);

}  // namespace rollout::workers
