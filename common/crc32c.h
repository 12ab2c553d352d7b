// CRC32C (Castagnoli, the checksum of iSCSI, ext4 metadata and LevelDB), used to
// catch corrupt checkpoint files. Uses the SSE4.2 `crc32` instruction when the CPU
// has it (checked once at run time), a table otherwise; both give the same values.
//
//   uint32_t crc = 0;
//   for (chunk : file) crc = crc32c::Extend(crc, chunk);   // == Value(whole file)
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace rollout::crc32c {

// The CRC32C of A+data, given `crc` == the CRC32C of A (0 for the empty string).
uint32_t Extend(uint32_t crc, absl::string_view data);

inline uint32_t Value(absl::string_view data) { return Extend(0, data); }

// Eight lowercase hex digits, as MANIFEST.json stores checksums.
std::string ToHex(uint32_t crc);

// The two implementations Extend() chooses between, for tests and benchmarks.
// ExtendHardware may be called only when HasHardwareSupport().
bool HasHardwareSupport();
uint32_t ExtendPortable(uint32_t crc, absl::string_view data);
uint32_t ExtendHardware(uint32_t crc, absl::string_view data);

}  // namespace rollout::crc32c
