#include "common/batch.h"

#include <ATen/ATen.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace rollout {
namespace {

std::string ShapeText(const at::Tensor& tensor) {
  return absl::StrCat("[", absl::StrJoin(tensor.sizes(), ", "), "]");
}

template <typename Map>
std::string KeyList(const Map& map) {
  std::vector<std::string> keys;
  for (const auto& entry : map) keys.push_back(entry.first);
  return keys.empty() ? "(none)" : absl::StrJoin(keys, ", ");
}

// Rows `indices` of every column, as a new batch with the same meta.
Batch TakeRows(const Batch& batch, const at::Tensor& index, const std::vector<int64_t>& rows) {
  Batch out;
  for (const auto& [name, tensor] : batch.tensors()) {
    // index_select keeps CPU/GPU placement; the index follows the tensor's device.
    out.AddTensor(name, tensor.index_select(0, index.to(tensor.device()))).IgnoreError();
  }
  for (const auto& [name, values] : batch.strings()) {
    std::vector<std::string> picked;
    picked.reserve(rows.size());
    for (int64_t row : rows) picked.push_back(values[row]);
    out.AddStrings(name, std::move(picked)).IgnoreError();
  }
  for (const auto& [key, value] : batch.meta()) out.SetMeta(key, value);
  return out;
}

at::Tensor IndexTensor(const std::vector<int64_t>& rows) {
  return at::tensor(rows, at::TensorOptions().dtype(at::kLong));
}

}  // namespace

absl::Status Batch::CheckRows(const std::string& name, int64_t rows) const {
  if (!empty() && rows != size_) {
    return absl::InvalidArgumentError(absl::StrCat("column '", name, "' has ", rows,
                                                   " rows but the batch has ", size_));
  }
  return absl::OkStatus();
}

absl::Status Batch::AddTensor(const std::string& name, at::Tensor tensor) {
  if (!tensor.defined() || tensor.dim() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", name, "' needs at least one dimension (the rows)"));
  }
  // Replacing the only column may change the size.
  const bool only_column = tensors_.size() == 1 && strings_.empty() && tensors_.count(name);
  if (!only_column) RETURN_IF_ERROR(CheckRows(name, tensor.size(0)));
  size_ = tensor.size(0);
  tensors_[name] = std::move(tensor);
  return absl::OkStatus();
}

absl::Status Batch::AddStrings(const std::string& name, std::vector<std::string> values) {
  const int64_t rows = static_cast<int64_t>(values.size());
  const bool only_column = strings_.size() == 1 && tensors_.empty() && strings_.count(name);
  if (!only_column) RETURN_IF_ERROR(CheckRows(name, rows));
  size_ = rows;
  strings_[name] = std::move(values);
  return absl::OkStatus();
}

absl::StatusOr<at::Tensor> Batch::Tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    return absl::NotFoundError(
        absl::StrCat("batch has no tensor '", name, "'; tensors: ", KeyList(tensors_)));
  }
  return it->second;
}

absl::StatusOr<std::vector<std::string>> Batch::Strings(const std::string& name) const {
  auto it = strings_.find(name);
  if (it == strings_.end()) {
    return absl::NotFoundError(absl::StrCat("batch has no string column '", name,
                                            "'; string columns: ", KeyList(strings_)));
  }
  return it->second;
}

std::string Batch::Meta(const std::string& key) const {
  auto it = meta_.find(key);
  return it == meta_.end() ? std::string() : it->second;
}

absl::StatusOr<Batch> Batch::Select(const std::vector<std::string>& names) const {
  Batch out;
  for (const std::string& name : names) {
    if (auto t = tensors_.find(name); t != tensors_.end()) {
      RETURN_IF_ERROR(out.AddTensor(name, t->second));
    } else if (auto s = strings_.find(name); s != strings_.end()) {
      RETURN_IF_ERROR(out.AddStrings(name, s->second));
    } else {
      return absl::NotFoundError(absl::StrCat("cannot select '", name, "': tensors: ",
                                              KeyList(tensors_),
                                              "; string columns: ", KeyList(strings_)));
    }
  }
  out.meta_ = meta_;
  return out;
}

absl::Status Batch::Union(const Batch& other) {
  if (!empty() && !other.empty() && other.size_ != size_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot union batches of ", size_, " and ", other.size_, " rows"));
  }
  for (const auto& [name, tensor] : other.tensors_) {
    auto it = tensors_.find(name);
    if (it != tensors_.end() && !(it->second.sizes() == tensor.sizes() &&
                                  it->second.scalar_type() == tensor.scalar_type() &&
                                  at::equal(it->second, tensor.to(it->second.device())))) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot union: tensor '", name, "' differs between the batches"));
    }
  }
  for (const auto& [name, values] : other.strings_) {
    auto it = strings_.find(name);
    if (it != strings_.end() && it->second != values) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot union: string column '", name, "' differs between the batches"));
    }
  }
  for (const auto& [key, value] : other.meta_) {
    auto it = meta_.find(key);
    if (it != meta_.end() && it->second != value) {
      return absl::InvalidArgumentError(absl::StrCat("cannot union: meta '", key, "' is '",
                                                     it->second, "' and '", value, "'"));
    }
  }
  if (empty()) size_ = other.size_;
  for (const auto& entry : other.tensors_) tensors_.insert(entry);
  for (const auto& entry : other.strings_) strings_.insert(entry);
  for (const auto& entry : other.meta_) meta_.insert(entry);
  return absl::OkStatus();
}

absl::StatusOr<Batch> Batch::Slice(int64_t begin, int64_t end) const {
  if (begin < 0 || begin > end || end > size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("slice [", begin, ", ", end, ") out of range for ", size_, " rows"));
  }
  Batch out;
  for (const auto& [name, tensor] : tensors_) {
    RETURN_IF_ERROR(out.AddTensor(name, tensor.slice(0, begin, end)));
  }
  for (const auto& [name, values] : strings_) {
    RETURN_IF_ERROR(out.AddStrings(
        name, std::vector<std::string>(values.begin() + begin, values.begin() + end)));
  }
  out.meta_ = meta_;
  return out;
}

absl::StatusOr<Batch> Batch::Repeat(int64_t times, bool interleave) const {
  if (times < 1) {
    return absl::InvalidArgumentError(absl::StrCat("repeat needs times >= 1, got ", times));
  }
  std::vector<int64_t> rows;
  rows.reserve(size_ * times);
  if (interleave) {
    for (int64_t row = 0; row < size_; ++row) rows.insert(rows.end(), times, row);
  } else {
    for (int64_t t = 0; t < times; ++t) {
      for (int64_t row = 0; row < size_; ++row) rows.push_back(row);
    }
  }
  return Reorder(rows);
}

absl::StatusOr<Batch> Batch::Reorder(const std::vector<int64_t>& indices) const {
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= size_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reorder index ", indices[i], " at position ", i, " out of range for ", size_, " rows"));
    }
  }
  if (empty()) {
    Batch out;
    out.meta_ = meta_;
    return out;
  }
  return TakeRows(*this, IndexTensor(indices), indices);
}

absl::StatusOr<Batch> Batch::Concat(const std::vector<Batch>& batches) {
  if (batches.empty()) return Batch();
  const Batch& first = batches.front();
  for (size_t i = 1; i < batches.size(); ++i) {
    const Batch& b = batches[i];
    if (KeyList(b.tensors_) != KeyList(first.tensors_) ||
        KeyList(b.strings_) != KeyList(first.strings_)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot concat: batch ", i, " has tensors {", KeyList(b.tensors_), "} and strings {",
          KeyList(b.strings_), "}, batch 0 has {", KeyList(first.tensors_), "} and {",
          KeyList(first.strings_), "}"));
    }
    for (const auto& [name, tensor] : b.tensors_) {
      const at::Tensor& ref = first.tensors_.at(name);
      if (tensor.scalar_type() != ref.scalar_type() ||
          tensor.sizes().slice(1) != ref.sizes().slice(1)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot concat tensor '", name, "': batch ", i, " has ", ShapeText(tensor), " ",
            c10::toString(tensor.scalar_type()), ", batch 0 has ", ShapeText(ref), " ",
            c10::toString(ref.scalar_type())));
      }
    }
  }
  Batch out;
  for (const auto& entry : first.tensors_) {
    std::vector<at::Tensor> parts;
    parts.reserve(batches.size());
    for (const Batch& b : batches) parts.push_back(b.tensors_.at(entry.first));
    RETURN_IF_ERROR(out.AddTensor(entry.first, at::cat(parts, 0)));
  }
  for (const auto& entry : first.strings_) {
    std::vector<std::string> values;
    for (const Batch& b : batches) {
      const auto& part = b.strings_.at(entry.first);
      values.insert(values.end(), part.begin(), part.end());
    }
    RETURN_IF_ERROR(out.AddStrings(entry.first, std::move(values)));
  }
  out.meta_ = first.meta_;
  return out;
}

absl::StatusOr<Batch::Chunks> Batch::Chunk(int64_t parts) const {
  if (parts < 1) {
    return absl::InvalidArgumentError(absl::StrCat("chunk needs parts >= 1, got ", parts));
  }
  Chunks chunks;
  const Batch* source = this;
  Batch padded;
  if (size_ % parts != 0) {
    chunks.padding = parts - size_ % parts;
    std::vector<int64_t> rows;
    for (int64_t row = 0; row < size_ + chunks.padding; ++row) rows.push_back(row % size_);
    ASSIGN_OR_RETURN(padded, Reorder(rows));
    source = &padded;
  }
  const int64_t per_part = source->size() / parts;
  for (int64_t p = 0; p < parts; ++p) {
    ASSIGN_OR_RETURN(Batch part, source->Slice(p * per_part, (p + 1) * per_part));
    chunks.parts.push_back(std::move(part));
  }
  return chunks;
}

}  // namespace rollout
