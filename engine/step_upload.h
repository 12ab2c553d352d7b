// Sends a step's small host arrays (token ids, positions, slots, block tables, sampling
// parameters) to the model's device in one transfer that the host does not wait for.
//
// A plain `at::tensor(values).to(cuda)` copies from pageable memory and synchronises
// the stream: a step of a dozen such arrays left the GPU idle a dozen times while the
// host caught up. Here the arrays are packed into one pinned buffer and copied with one
// asynchronous copy, ordered on the current stream before the step's kernels. The
// buffer comes from PyTorch's caching host allocator, which does not reuse it until the
// copy has run. On a CPU device the packed buffer itself is the result.
//
// Usage: Add each array (the vectors must stay alive until Send), then Send once.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <vector>

namespace rollout::engine {

class StepUpload {
 public:
  // Queues `values` as a [values.size()] tensor of T's dtype; returns its index in
  // Send()'s result.
  template <typename T>
  size_t Add(const std::vector<T>& values) {
    return Add(values.data(), static_cast<int64_t>(values.size()),
               c10::CppTypeToScalarType<T>::value);
  }

  // The queued arrays on `device`, in the order they were added: views of one device
  // buffer, each 8-byte aligned.
  std::vector<at::Tensor> Send(const c10::Device& device) const;

 private:
  struct Array {
    const void* data;
    int64_t count;
    at::ScalarType dtype;
    int64_t offset;  // bytes into the packed buffer
  };

  size_t Add(const void* data, int64_t count, at::ScalarType dtype);

  std::vector<Array> arrays_;
  int64_t bytes_ = 0;
};

}  // namespace rollout::engine
