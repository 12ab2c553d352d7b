#include "common/tensor_proto.h"

#include <ATen/ATen.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rollout {

absl::StatusOr<wire::DType> ToWireDType(c10::ScalarType type) {
  switch (type) {
    case at::kFloat: return wire::FLOAT32;
    case at::kBFloat16: return wire::BFLOAT16;
    case at::kHalf: return wire::FLOAT16;
    case at::kLong: return wire::INT64;
    case at::kInt: return wire::INT32;
    case at::kByte: return wire::UINT8;
    case at::kBool: return wire::BOOL;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "dtype ", c10::toString(type),
          " cannot cross the wire (float32, bfloat16, float16, int64, int32, uint8, bool)"));
  }
}

absl::StatusOr<c10::ScalarType> FromWireDType(wire::DType dtype) {
  switch (dtype) {
    case wire::FLOAT32: return at::kFloat;
    case wire::BFLOAT16: return at::kBFloat16;
    case wire::FLOAT16: return at::kHalf;
    case wire::INT64: return at::kLong;
    case wire::INT32: return at::kInt;
    case wire::UINT8: return at::kByte;
    case wire::BOOL: return at::kBool;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown wire dtype ", dtype));
  }
}

int64_t WireElementSize(wire::DType dtype) {
  switch (dtype) {
    case wire::FLOAT32:
    case wire::INT32: return 4;
    case wire::BFLOAT16:
    case wire::FLOAT16: return 2;
    case wire::INT64: return 8;
    case wire::UINT8:
    case wire::BOOL: return 1;
    default: return 0;
  }
}

absl::StatusOr<wire::TensorProto> TensorToProto(const at::Tensor& tensor) {
  absl::StatusOr<wire::DType> dtype = ToWireDType(tensor.scalar_type());
  if (!dtype.ok()) return dtype.status();
  const at::Tensor host = tensor.to(at::kCPU).contiguous();
  wire::TensorProto proto;
  proto.set_dtype(*dtype);
  for (int64_t dim : host.sizes()) proto.add_shape(dim);
  proto.set_data(static_cast<const char*>(host.data_ptr()), host.nbytes());
  return proto;
}

absl::StatusOr<at::Tensor> TensorFromProto(const wire::TensorProto& proto) {
  absl::StatusOr<c10::ScalarType> type = FromWireDType(proto.dtype());
  if (!type.ok()) return type.status();
  std::vector<int64_t> shape(proto.shape().begin(), proto.shape().end());
  int64_t elements = 1;
  for (int64_t dim : shape) {
    if (dim < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor shape [", absl::StrJoin(shape, ", "), "] has a negative dimension"));
    }
    elements *= dim;
  }
  const int64_t expected = elements * WireElementSize(proto.dtype());
  if (static_cast<int64_t>(proto.data().size()) != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor of shape [", absl::StrJoin(shape, ", "), "] and dtype ", c10::toString(*type),
        " needs ", expected, " bytes, got ", proto.data().size()));
  }
  at::Tensor tensor = at::empty(shape, at::TensorOptions().dtype(*type));
  if (expected > 0) std::memcpy(tensor.data_ptr(), proto.data().data(), expected);
  return tensor;
}

}  // namespace rollout
