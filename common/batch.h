// Batch: the unit of data between controller and workers (verl's DataProto).
//
// A Batch holds named tensors that share their first dimension (the rows), named
// string columns with one string per row, and string meta (not per row). Its size is
// the number of rows; a Batch with no tensors and no string columns has size 0 and
// takes the size of the first column added.
//
// Tensors are held by reference (at::Tensor is a shared handle): copying a Batch is
// cheap and the copies share tensor storage. Operations that build a new Batch
// (Select, Slice, Repeat, Reorder, Concat, Chunk) never modify their inputs. Not
// thread-safe for concurrent mutation; concurrent const use is fine.
//
// Errors: operations that can fail on caller data (mismatched sizes, missing keys,
// indices out of range) return InvalidArgument / NotFound naming the key and sizes.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rollout {

class Batch {
 public:
  Batch() = default;

  // Rows; 0 for a batch without columns.
  int64_t size() const { return size_; }
  bool empty() const { return tensors_.empty() && strings_.empty(); }

  // Adds or replaces a column. The tensor needs at least one dimension and, unless it
  // is the first column, size(0) == size(). Fails with InvalidArgument otherwise.
  absl::Status AddTensor(const std::string& name, at::Tensor tensor);
  absl::Status AddStrings(const std::string& name, std::vector<std::string> values);
  void SetMeta(const std::string& key, std::string value) { meta_[key] = std::move(value); }

  bool HasTensor(const std::string& name) const { return tensors_.count(name) > 0; }
  bool HasStrings(const std::string& name) const { return strings_.count(name) > 0; }
  // NotFound names the key and the keys that exist.
  absl::StatusOr<at::Tensor> Tensor(const std::string& name) const;
  absl::StatusOr<std::vector<std::string>> Strings(const std::string& name) const;
  // Empty string when absent.
  std::string Meta(const std::string& key) const;

  const std::map<std::string, at::Tensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::vector<std::string>>& strings() const { return strings_; }
  const std::map<std::string, std::string>& meta() const { return meta_; }

  // The named columns (tensors and string columns by name; meta is kept whole).
  // NotFound for a name that is neither.
  absl::StatusOr<Batch> Select(const std::vector<std::string>& names) const;

  // Adds other's columns and meta to this batch. Sizes must match; a name present in
  // both must hold equal values (same shape, dtype and elements; same strings), as in
  // verl's DataProto.union. On error this batch is unchanged.
  absl::Status Union(const Batch& other);

  // Rows [begin, end); 0 <= begin <= end <= size().
  absl::StatusOr<Batch> Slice(int64_t begin, int64_t end) const;

  // Each row `times` times in a row (interleave: a a b b) or the whole batch `times`
  // times (a b a b). times >= 1.
  absl::StatusOr<Batch> Repeat(int64_t times, bool interleave = true) const;

  // Rows in the order given: row i of the result is row indices[i] of this batch.
  // Indices may repeat or omit rows; each must be in [0, size()).
  absl::StatusOr<Batch> Reorder(const std::vector<int64_t>& indices) const;

  // Rows of every batch one after another. All batches need the same tensor names
  // (with equal dtypes and trailing shapes) and string column names; meta is taken
  // from the first batch. An empty list gives an empty Batch.
  static absl::StatusOr<Batch> Concat(const std::vector<Batch>& batches);

  // Splits into `parts` batches of equal size. When size() is not a multiple of
  // `parts`, the batch is first padded with copies of its leading rows (repeated as
  // often as needed, like verl's pad_dataproto_to_divisor); `padding` says how many
  // rows were added, so Concat(parts).Slice(0, size()) restores the original.
  struct Chunks {
    std::vector<Batch> parts;
    int64_t padding = 0;
  };
  absl::StatusOr<Chunks> Chunk(int64_t parts) const;

 private:
  absl::Status CheckRows(const std::string& name, int64_t rows) const;

  int64_t size_ = 0;
  std::map<std::string, at::Tensor> tensors_;
  std::map<std::string, std::vector<std::string>> strings_;
  std::map<std::string, std::string> meta_;
};

}  // namespace rollout
