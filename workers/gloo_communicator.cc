#include "workers/gloo_communicator.h"

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::workers {
namespace {

std::chrono::milliseconds ToMilliseconds(absl::Duration duration) {
  return std::chrono::milliseconds(absl::ToInt64Milliseconds(duration));
}

// Gloo's store interface over the run's rendezvous client, keys under `prefix`. Gloo
// expects failures as exceptions; ConnectFullMesh turns them back into a Status.
class RendezvousStoreAdapter final : public gloo::rendezvous::Store {
 public:
  RendezvousStoreAdapter(RendezvousClient* client, std::string prefix, absl::Duration timeout)
      : client_(client), prefix_(std::move(prefix)), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    const absl::Status status = client_->Set(prefix_ + key, std::string(data.begin(), data.end()));
    if (!status.ok()) throw std::runtime_error(std::string(status.message()));
  }

  std::vector<char> get(const std::string& key) override {
    absl::StatusOr<std::string> value = client_->Get(prefix_ + key, timeout_);
    if (!value.ok()) throw std::runtime_error(std::string(value.status().message()));
    return std::vector<char>(value->begin(), value->end());
  }

  void wait(const std::vector<std::string>& keys) override { wait(keys, ToMilliseconds(timeout_)); }

  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    for (const std::string& key : keys) {
      const absl::StatusOr<std::string> value = client_->Get(prefix_ + key, absl::FromChrono(timeout));
      if (!value.ok()) throw std::runtime_error(std::string(value.status().message()));
    }
  }

 private:
  RendezvousClient* const client_;
  const std::string prefix_;
  const absl::Duration timeout_;
};

class GlooCommunicator final : public Communicator {
 public:
  GlooCommunicator(std::shared_ptr<gloo::rendezvous::Context> context, std::string group)
      : context_(std::move(context)), group_(std::move(group)) {}

  int rank() const override { return context_->rank; }
  int world_size() const override { return context_->size; }

  absl::Status AllReduceSum(const std::vector<at::Tensor>& tensors) override {
    for (const at::Tensor& tensor : tensors) {
      if (!tensor.device().is_cpu() || tensor.scalar_type() != at::kFloat || !tensor.is_contiguous()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "all-reduce in group ", group_, ": tensors must be contiguous float32 on the CPU, got ",
            std::string(c10::toString(tensor.scalar_type())), " on ", tensor.device().str()));
      }
      if (tensor.numel() == 0) continue;
      gloo::AllreduceOptions options(context_);
      options.setOutput(tensor.data_ptr<float>(), static_cast<size_t>(tensor.numel()));
      void (*sum)(void*, const void*, const void*, size_t) = &gloo::sum<float>;
      options.setReduceFunction(sum);
      try {
        gloo::allreduce(options);
      } catch (const std::exception& e) {
        return absl::UnavailableError(absl::StrCat("all-reduce in group ", group_, " (rank ", rank(), " of ",
                                                   world_size(), "): ", e.what()));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Broadcast(const std::vector<at::Tensor>& tensors, int root) override {
    RETURN_IF_ERROR(CheckBroadcastArguments(tensors, root, world_size(), c10::Device(c10::kCPU), group_));
    for (const at::Tensor& tensor : tensors) {
      if (tensor.numel() == 0) continue;
      gloo::BroadcastOptions options(context_);
      // A broadcast copies bytes and computes nothing, so the element type only sets
      // their size; bytes also serve bfloat16, for which Gloo has no type.
      options.setOutput(static_cast<uint8_t*>(tensor.data_ptr()), tensor.nbytes());
      options.setRoot(root);
      try {
        gloo::broadcast(options);
      } catch (const std::exception& e) {
        return absl::UnavailableError(absl::StrCat("broadcast from rank ", root, " in group ", group_, " (rank ",
                                                   rank(), " of ", world_size(), "): ", e.what()));
      }
    }
    return absl::OkStatus();
  }

 private:
  const std::shared_ptr<gloo::rendezvous::Context> context_;
  const std::string group_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Communicator>> CreateGlooCommunicator(const CommunicatorOptions& options,
                                                                     RendezvousClient* rendezvous) {
  RendezvousStoreAdapter store(rendezvous, absl::StrCat("gloo/", options.group, "/"), options.timeout);
  auto context = std::make_shared<gloo::rendezvous::Context>(options.rank, options.world_size);
  context->setTimeout(ToMilliseconds(options.timeout));
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = options.hostname;
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
    context->connectFullMesh(store, device);
    // A rank's side of the mesh can be complete while a peer still reads the handshake
    // on the same socket; a rank that then dropped its communicator at once would make
    // that peer's connect fail with "connection closed by peer". The barrier returns
    // only once every rank is connected.
    gloo::BarrierOptions everyone_connected(context);
    gloo::barrier(everyone_connected);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("connecting rank ", options.rank, " of group ", options.group,
                                               " (", options.world_size, " ranks) over Gloo at ",
                                               options.hostname, ": ", e.what()));
  }
  return std::unique_ptr<Communicator>(new GlooCommunicator(std::move(context), options.group));
}

}  // namespace rollout::workers
