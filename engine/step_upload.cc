#include "engine/step_upload.h"

#include <ATen/ATen.h>

#include <cstring>

namespace rollout::engine {

size_t StepUpload::Add(const void* data, int64_t count, at::ScalarType dtype) {
  arrays_.push_back({data, count, dtype, bytes_});
  const int64_t size = count * static_cast<int64_t>(c10::elementSize(dtype));
  bytes_ += (size + 7) / 8 * 8;
  return arrays_.size() - 1;
}

std::vector<at::Tensor> StepUpload::Send(const c10::Device& device) const {
  at::TensorOptions host_options = at::TensorOptions().dtype(at::kByte);
  if (device.is_cuda()) host_options = host_options.pinned_memory(true);
  const at::Tensor host = at::empty({bytes_}, host_options);
  uint8_t* base = host.data_ptr<uint8_t>();
  for (const Array& array : arrays_) {
    std::memcpy(base + array.offset, array.data,
                array.count * static_cast<int64_t>(c10::elementSize(array.dtype)));
  }
  const at::Tensor packed =
      device.is_cpu() ? host : host.to(device, at::kByte, /*non_blocking=*/true);
  std::vector<at::Tensor> out;
  out.reserve(arrays_.size());
  for (const Array& array : arrays_) {
    const int64_t size = array.count * static_cast<int64_t>(c10::elementSize(array.dtype));
    out.push_back(packed.narrow(0, array.offset, size).view(array.dtype));
  }
  return out;
}

}  // namespace rollout::engine
