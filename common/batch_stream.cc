#include "common/batch_stream.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/tensor_proto.h"

namespace rollout {

absl::Status WriteBatch(const Batch& batch,
                        const std::function<bool(wire::BatchChunk&&)>& sink,
                        int64_t chunk_bytes) {
  wire::BatchChunk first;
  wire::BatchHeader* header = first.mutable_header();
  header->set_size(batch.size());
  std::vector<at::Tensor> host_tensors;
  for (const auto& [name, tensor] : batch.tensors()) {
    ASSIGN_OR_RETURN(wire::DType dtype,
                     WithContext(ToWireDType(tensor.scalar_type()), "tensor '" + name + "'"));
    wire::TensorSpec* spec = header->add_tensors();
    spec->set_name(name);
    spec->set_dtype(dtype);
    for (int64_t dim : tensor.sizes()) spec->add_shape(dim);
    host_tensors.push_back(tensor.to(at::kCPU).contiguous());
  }
  for (const auto& [name, values] : batch.strings()) {
    wire::StringColumn* column = header->add_strings();
    column->set_name(name);
    column->mutable_values()->Assign(values.begin(), values.end());
  }
  header->mutable_meta()->insert(batch.meta().begin(), batch.meta().end());

  // Data pieces fill up to chunk_bytes, crossing tensor boundaries, so a batch of
  // many small tensors still travels in few messages. The first piece rides with the
  // header.
  wire::BatchChunk pending = std::move(first);
  for (const at::Tensor& tensor : host_tensors) {
    const char* data = static_cast<const char*>(tensor.data_ptr());
    int64_t remaining = tensor.nbytes();
    while (remaining > 0) {
      const int64_t room = chunk_bytes - static_cast<int64_t>(pending.data().size());
      if (room <= 0) {
        if (!sink(std::move(pending))) {
          return absl::UnavailableError("batch stream closed by the peer");
        }
        pending = wire::BatchChunk();
        continue;
      }
      const int64_t take = std::min(room, remaining);
      pending.mutable_data()->append(data, take);
      data += take;
      remaining -= take;
    }
  }
  if (!sink(std::move(pending))) {
    return absl::UnavailableError("batch stream closed by the peer");
  }
  return absl::OkStatus();
}

absl::Status BatchAssembler::Add(const wire::BatchChunk& chunk) {
  if (!has_header_) {
    if (!chunk.has_header()) {
      return absl::DataLossError("batch stream: the first chunk has no header");
    }
    header_ = chunk.header();
    for (const wire::TensorSpec& spec : header_.tensors()) {
      ASSIGN_OR_RETURN(c10::ScalarType type,
                       WithContext(FromWireDType(spec.dtype()),
                                   "batch stream: tensor '" + spec.name() + "'"));
      std::vector<int64_t> shape(spec.shape().begin(), spec.shape().end());
      if (shape.empty() || shape[0] != header_.size() ||
          std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; })) {
        return absl::DataLossError(absl::StrCat("batch stream: tensor '", spec.name(),
                                                "' has a shape that does not fit a batch of ",
                                                header_.size(), " rows"));
      }
      tensors_.push_back(at::empty(shape, at::TensorOptions().dtype(type)));
    }
    has_header_ = true;
  } else if (chunk.has_header()) {
    return absl::DataLossError("batch stream: a second header arrived");
  }

  const char* data = chunk.data().data();
  int64_t remaining = static_cast<int64_t>(chunk.data().size());
  while (remaining > 0) {
    while (current_ < tensors_.size() &&
           current_offset_ == static_cast<int64_t>(tensors_[current_].nbytes())) {
      ++current_;
      current_offset_ = 0;
    }
    if (current_ >= tensors_.size()) {
      return absl::DataLossError("batch stream: more data than the header announced");
    }
    at::Tensor& target = tensors_[current_];
    const int64_t take =
        std::min<int64_t>(remaining, static_cast<int64_t>(target.nbytes()) - current_offset_);
    std::memcpy(static_cast<char*>(target.data_ptr()) + current_offset_, data, take);
    current_offset_ += take;
    data += take;
    remaining -= take;
  }
  return absl::OkStatus();
}

absl::StatusOr<Batch> BatchAssembler::Finish() {
  if (!has_header_) {
    return absl::FailedPreconditionError("batch stream ended before its header");
  }
  int64_t expected = 0;
  int64_t received = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    expected += tensors_[i].nbytes();
    if (i < current_) received += tensors_[i].nbytes();
  }
  if (current_ < tensors_.size()) received += current_offset_;
  if (received != expected) {
    return absl::DataLossError(absl::StrCat("batch stream ended after ", received, " of ",
                                            expected, " data bytes"));
  }
  Batch batch;
  for (int i = 0; i < header_.tensors_size(); ++i) {
    RETURN_IF_ERROR(batch.AddTensor(header_.tensors(i).name(), std::move(tensors_[i])));
  }
  for (const wire::StringColumn& column : header_.strings()) {
    std::vector<std::string> values(column.values().begin(), column.values().end());
    if (static_cast<int64_t>(values.size()) != header_.size()) {
      return absl::DataLossError(absl::StrCat("batch stream: string column '", column.name(),
                                              "' has ", values.size(), " rows, header says ",
                                              header_.size()));
    }
    RETURN_IF_ERROR(batch.AddStrings(column.name(), std::move(values)));
  }
  for (const auto& [key, value] : header_.meta()) batch.SetMeta(key, value);
  return batch;
}

}  // namespace rollout
