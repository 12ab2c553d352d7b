// safetensors files (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length, a JSON header {name: {dtype, shape, data_offsets}, and
// optionally "__metadata__": {str: str}}, then the raw little-endian tensor bytes.
//
// Reading copies one tensor at a time with large positioned reads (pread) into memory
// LibTorch owns (or straight into a destination tensor), so a model loads without
// holding a second full copy, and front to back (NamesInFileOrder) at about the disk's
// sequential speed. A model directory has
// either `model.safetensors` or sharded files listed in `model.safetensors.index.json`
// ({"weight_map": {tensor name: file name}}).
//
// Opening validates the whole header: its length within the file, every tensor's
// data_offsets inside the data section and equal to dtype x shape bytes, no name
// twice, no two tensors sharing bytes. A reader is immutable once open, so its const
// methods may be called from several threads. It keeps the files open for its
// lifetime; replacing a file by rename meanwhile is safe, truncating it in place makes
// later reads fail (DataLoss).
//
// Writing is crash-safe: a temporary file, fsync, rename (common/atomic_file_writer.h).
// The tensors are streamed to it one at a time (a host copy of one GPU tensor at most).
// Header entries are in name order; the data is packed without gaps, widest elements
// first (as the Python library does), so every tensor is aligned to its element size.
//
// Supported dtypes: F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL. Errors name
// the file and, where one is involved, the tensor: NotFound (missing file or
// tensor), DataLoss (malformed header or index, offsets outside the file, shape/size
// mismatch), InvalidArgument (unsupported dtype: writing one, or opening a file that
// holds one; repeated or reserved names when writing).
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rollout::models {

struct TensorInfo {
  c10::ScalarType dtype;
  std::vector<int64_t> shape;
};

class SafetensorsReader {
 public:
  // One .safetensors file.
  static absl::StatusOr<std::unique_ptr<SafetensorsReader>> OpenFile(const std::string& path);
  // A model directory: model.safetensors.index.json if present (exactly the tensors of
  // its weight_map, each shard opened once; DataLoss when a shard lacks a listed
  // tensor), else model.safetensors.
  static absl::StatusOr<std::unique_ptr<SafetensorsReader>> OpenDirectory(const std::string& dir);
  virtual ~SafetensorsReader() = default;

  // Tensor names, sorted.
  virtual std::vector<std::string> Names() const = 0;
  // The same names in the order their bytes lie (file by file for a sharded directory):
  // loading in this order reads every file front to back, which the kernel's readahead
  // serves at disk speed (name order jumps around: data are laid out widest dtype first).
  virtual std::vector<std::string> NamesInFileOrder() const = 0;
  virtual bool Has(const std::string& name) const = 0;
  virtual absl::StatusOr<TensorInfo> Info(const std::string& name) const = 0;
  // A contiguous CPU tensor owning a copy of the bytes.
  virtual absl::StatusOr<at::Tensor> Load(const std::string& name) const = 0;
  // The bytes straight into `destination`, a contiguous CPU tensor of the entry's
  // dtype and shape (InvalidArgument otherwise, nothing written); no intermediate copy.
  virtual absl::Status ReadInto(const std::string& name, at::Tensor& destination) const = 0;
  // "__metadata__" of the file; for a sharded directory, of the first shard by name.
  virtual std::map<std::string, std::string> Metadata() const = 0;
};

// Writes `tensors` (any device, any layout: copied to contiguous CPU bytes) in name
// order, with `metadata` as "__metadata__". Names must be unique.
absl::Status WriteSafetensors(const std::string& path,
                              const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

}  // namespace rollout::models
