#include "common/crc32c.h"

#include <cstring>

#include "absl/strings/str_format.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace rollout::crc32c {
namespace {

constexpr uint32_t kReflectedPolynomial = 0x82F63B78;

// Slicing-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes.
struct Tables {
  uint32_t table[8][256];
};

constexpr Tables MakeTables() {
  Tables tables{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (kReflectedPolynomial & (0u - (crc & 1)));
    tables.table[0][byte] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (int byte = 0; byte < 256; ++byte) {
      const uint32_t previous = tables.table[k - 1][byte];
      tables.table[k][byte] = (previous >> 8) ^ tables.table[0][previous & 0xff];
    }
  }
  return tables;
}

constexpr Tables kTables = MakeTables();

uint32_t LoadLittleEndian32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace

uint32_t ExtendPortable(uint32_t crc, absl::string_view data) {
  const auto& t = kTables.table;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  uint32_t state = ~crc;
  for (; n >= 8; p += 8, n -= 8) {
    const uint32_t low = LoadLittleEndian32(p) ^ state;
    const uint32_t high = LoadLittleEndian32(p + 4);
    state = t[7][low & 0xff] ^ t[6][(low >> 8) & 0xff] ^ t[5][(low >> 16) & 0xff] ^
            t[4][low >> 24] ^ t[3][high & 0xff] ^ t[2][(high >> 8) & 0xff] ^
            t[1][(high >> 16) & 0xff] ^ t[0][high >> 24];
  }
  for (; n > 0; ++p, --n) state = (state >> 8) ^ t[0][(state ^ *p) & 0xff];
  return ~state;
}

#if defined(__x86_64__)

bool HasHardwareSupport() { return __builtin_cpu_supports("sse4.2"); }

__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc, absl::string_view data) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  uint64_t state = ~crc;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    state = _mm_crc32_u64(state, word);
  }
  uint32_t state32 = static_cast<uint32_t>(state);
  for (; n > 0; ++p, --n) state32 = _mm_crc32_u8(state32, *p);
  return ~state32;
}

#else

bool HasHardwareSupport() { return false; }

// No instruction on this architecture: the table implementation stands in.
uint32_t ExtendHardware(uint32_t crc, absl::string_view data) { return ExtendPortable(crc, data); }

#endif

uint32_t Extend(uint32_t crc, absl::string_view data) {
  static const bool hardware = HasHardwareSupport();
  return hardware ? ExtendHardware(crc, data) : ExtendPortable(crc, data);
}

std::string ToHex(uint32_t crc) { return absl::StrFormat("%08x", crc); }

}  // namespace rollout::crc32c
