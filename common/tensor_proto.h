// at::Tensor <-> wire formats (proto/tensor.proto).
//
// Supported dtypes: float32, bfloat16, float16, int64, int32, uint8, bool. A tensor
// on any device is read back to host memory; non-contiguous tensors are made
// contiguous. Decoded tensors are on the CPU and own their memory.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "proto/tensor.pb.h"

namespace rollout {

absl::StatusOr<wire::DType> ToWireDType(c10::ScalarType type);
absl::StatusOr<c10::ScalarType> FromWireDType(wire::DType dtype);

// Bytes one element of `dtype` takes on the wire.
int64_t WireElementSize(wire::DType dtype);

absl::StatusOr<wire::TensorProto> TensorToProto(const at::Tensor& tensor);
// InvalidArgument when the byte count does not match dtype and shape.
absl::StatusOr<at::Tensor> TensorFromProto(const wire::TensorProto& proto);

}  // namespace rollout
