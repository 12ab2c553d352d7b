#include "workers/nccl_communicator.h"

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <nccl.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::workers {
namespace {

absl::Status NcclStatus(ncclResult_t result, absl::string_view what) {
  if (result == ncclSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": NCCL error ", static_cast<int>(result), " (",
                                          ncclGetErrorString(result), ")"));
}

// NCCL's name for a dtype CheckBroadcastArguments accepts (it admits no other).
ncclDataType_t NcclType(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: return ncclFloat32;
    case at::kBFloat16: return ncclBfloat16;
    case at::kHalf: return ncclFloat16;
    case at::kDouble: return ncclFloat64;
    case at::kLong: return ncclInt64;
    case at::kInt: return ncclInt32;
    case at::kByte:
    default:
      return ncclUint8;
  }
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(ncclComm_t comm, const CommunicatorOptions& options)
      : comm_(comm), options_(options) {}
  ~NcclCommunicator() override { ncclCommDestroy(comm_); }

  int rank() const override { return options_.rank; }
  int world_size() const override { return options_.world_size; }

  absl::Status AllReduceSum(const std::vector<at::Tensor>& tensors) override {
    for (const at::Tensor& tensor : tensors) {
      if (tensor.device() != options_.device || tensor.scalar_type() != at::kFloat || !tensor.is_contiguous()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "all-reduce in group ", options_.group, ": tensors must be contiguous float32 on ",
            options_.device.str(), ", got ", std::string(c10::toString(tensor.scalar_type())), " on ",
            tensor.device().str()));
      }
    }
    const c10::cuda::CUDAGuard guard(options_.device);
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(options_.device.index()).stream();
    RETURN_IF_ERROR(NcclStatus(ncclGroupStart(), "ncclGroupStart"));
    for (const at::Tensor& tensor : tensors) {
      const ncclResult_t result = ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(),
                                                static_cast<size_t>(tensor.numel()), ncclFloat, ncclSum,
                                                comm_, stream);
      if (result != ncclSuccess) {
        ncclGroupEnd();
        return NcclStatus(result, absl::StrCat("all-reduce in group ", options_.group));
      }
    }
    return NcclStatus(ncclGroupEnd(), absl::StrCat("all-reduce in group ", options_.group));
  }

  absl::Status Broadcast(const std::vector<at::Tensor>& tensors, int root) override {
    RETURN_IF_ERROR(CheckBroadcastArguments(tensors, root, options_.world_size, options_.device, options_.group));
    const std::string what = absl::StrCat("broadcast from rank ", root, " in group ", options_.group);
    const c10::cuda::CUDAGuard guard(options_.device);
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(options_.device.index()).stream();
    RETURN_IF_ERROR(NcclStatus(ncclGroupStart(), "ncclGroupStart"));
    for (const at::Tensor& tensor : tensors) {
      // In place: the root sends from the buffer every rank receives into.
      const ncclResult_t result = ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(),
                                                static_cast<size_t>(tensor.numel()),
                                                NcclType(tensor.scalar_type()), root, comm_, stream);
      if (result != ncclSuccess) {
        ncclGroupEnd();
        return NcclStatus(result, what);
      }
    }
    return NcclStatus(ncclGroupEnd(), what);
  }

 private:
  const ncclComm_t comm_;
  const CommunicatorOptions options_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicator(const CommunicatorOptions& options,
                                                                     RendezvousClient* rendezvous) {
  const std::string key = absl::StrCat("nccl/", options.group, "/unique_id");
  ncclUniqueId id;
  if (options.rank == 0) {
    RETURN_IF_ERROR(NcclStatus(ncclGetUniqueId(&id), "ncclGetUniqueId"));
    RETURN_IF_ERROR(rendezvous->Set(key, std::string(id.internal, sizeof(id.internal))));
  } else {
    ASSIGN_OR_RETURN(const std::string bytes, rendezvous->Get(key, options.timeout));
    if (bytes.size() != sizeof(id.internal)) {
      return absl::DataLossError(absl::StrCat("rendezvous key ", key, " holds ", bytes.size(),
                                              " bytes; an NCCL unique id has ", sizeof(id.internal)));
    }
    std::memcpy(id.internal, bytes.data(), bytes.size());
  }
  const c10::cuda::CUDAGuard guard(options.device);
  ncclComm_t comm = nullptr;
  RETURN_IF_ERROR(NcclStatus(ncclCommInitRank(&comm, options.world_size, id, options.rank),
                             absl::StrCat("joining NCCL group ", options.group, " as rank ", options.rank,
                                          " of ", options.world_size, " on ", options.device.str())));
  return std::unique_ptr<Communicator>(new NcclCommunicator(comm, options));
}

}  // namespace rollout::workers
