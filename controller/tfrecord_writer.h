// TFRecord files: the container of TensorBoard's events files. Each record is
//   uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes |
//   data | uint32 masked CRC-32C of data
// where masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (all uint32, the
// CRC words little-endian too). Readers check both CRCs, so a record cut short by a
// crash is detected and skipped rather than misread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::controller {

// CRC-32C (Castagnoli; reflected polynomial 0x82F63B78, initial and final XOR
// 0xFFFFFFFF). Crc32c("123456789") == 0xE3069283.
uint32_t Crc32c(absl::string_view data);

// TFRecord's masking of a CRC stored next to the data it covers.
uint32_t MaskCrc32c(uint32_t crc);

// The bytes of one framed record holding `data`.
std::string FrameTfRecord(absl::string_view data);

// Writes records to a new file, one after another. Each Write() hands the whole
// framed record to the OS before returning, so a crash of this process loses at most
// the record being written. Not thread-safe.
class TfRecordWriter {
 public:
  // Creates `path` (its directory must exist). AlreadyExists when the file exists:
  // a record file is never overwritten or appended to by accident.
  static absl::StatusOr<std::unique_ptr<TfRecordWriter>> Create(const std::string& path);
  ~TfRecordWriter();  // Close(), error dropped
  TfRecordWriter(const TfRecordWriter&) = delete;
  TfRecordWriter& operator=(const TfRecordWriter&) = delete;

  // Appends one record and flushes it. FailedPrecondition after Close().
  absl::Status Write(absl::string_view data);
  // Idempotent.
  absl::Status Close();

  const std::string& path() const { return path_; }

 private:
  TfRecordWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}

  const std::string path_;
  std::FILE* file_;  // null once closed
};

}  // namespace rollout::controller
