#include "controller/tfrecord_writer.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace rollout::controller {
namespace {

constexpr uint32_t kCastagnoliReflected = 0x82F63B78u;
constexpr uint32_t kMaskDelta = 0xa282ead8u;

// Byte-at-a-time table: entry i is the CRC register after shifting in byte i.
constexpr std::array<uint32_t, 256> MakeCrc32cTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1u) ? (crc >> 1) ^ kCastagnoliReflected : crc >> 1;
    }
    table[i] = crc;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrc32cTable = MakeCrc32cTable();

void AppendLittleEndian(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

absl::Status IoError(absl::string_view action, const std::string& path, int error) {
  return absl::UnavailableError(absl::StrCat(action, " ", path, ": ", std::strerror(error)));
}

}  // namespace

uint32_t Crc32c(absl::string_view data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : data) crc = kCrc32cTable[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

std::string FrameTfRecord(absl::string_view data) {
  std::string record;
  record.reserve(data.size() + 16);
  AppendLittleEndian(data.size(), 8, &record);
  AppendLittleEndian(MaskCrc32c(Crc32c(record)), 4, &record);
  record.append(data.data(), data.size());
  AppendLittleEndian(MaskCrc32c(Crc32c(data)), 4, &record);
  return record;
}

absl::StatusOr<std::unique_ptr<TfRecordWriter>> TfRecordWriter::Create(const std::string& path) {
  // "x": fail if the file exists; "e": close-on-exec, so launched workers never hold it.
  std::FILE* file = std::fopen(path.c_str(), "wbxe");
  if (file == nullptr) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(
          absl::StrCat("creating record file ", path, ": it already exists"));
    }
    return IoError("creating record file", path, errno);
  }
  return std::unique_ptr<TfRecordWriter>(new TfRecordWriter(path, file));
}

TfRecordWriter::~TfRecordWriter() { Close().IgnoreError(); }

absl::Status TfRecordWriter::Write(absl::string_view data) {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("writing to record file ", path_, " after Close()"));
  }
  const std::string record = FrameTfRecord(data);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() ||
      std::fflush(file_) != 0) {
    return IoError("writing a record to", path_, errno);
  }
  return absl::OkStatus();
}

absl::Status TfRecordWriter::Close() {
  if (file_ == nullptr) return absl::OkStatus();
  std::FILE* file = std::exchange(file_, nullptr);
  if (std::fclose(file) != 0) return IoError("closing record file", path_, errno);
  return absl::OkStatus();
}

}  // namespace rollout::controller
