#include "common/crc32c.h"

#include <random>
#include <string>

#include <gtest/gtest.h>

namespace rollout {
namespace {

// RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32c, RfcTestVectors) {
  EXPECT_EQ(crc32c::Value(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c::Value(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(crc32c::Value(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c::Value(descending), 0x113FDB5Cu);
  EXPECT_EQ(crc32c::Value("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c::Value(""), 0u);
}

TEST(Crc32c, PortableImplementationMatchesTheVectors) {
  EXPECT_EQ(crc32c::ExtendPortable(0, std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c::ExtendPortable(0, "123456789"), 0xE3069283u);
}

TEST(Crc32c, ExtendOverPiecesEqualsValueOfTheWhole) {
  const std::string data = "the quick brown fox jumps over the lazy dog, twice over";
  for (size_t split = 0; split <= data.size(); ++split) {
    const uint32_t first = crc32c::Extend(0, absl::string_view(data).substr(0, split));
    EXPECT_EQ(crc32c::Extend(first, absl::string_view(data).substr(split)), crc32c::Value(data))
        << split;
  }
}

TEST(Crc32c, HardwareEqualsPortableOnRandomBuffers) {
  if (!crc32c::HasHardwareSupport()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string buffer(random() % 5000, '\0');
    for (char& c : buffer) c = static_cast<char>(random());
    const size_t offset = buffer.empty() ? 0 : random() % buffer.size();  // unaligned starts
    const absl::string_view view = absl::string_view(buffer).substr(offset);
    const uint32_t seed = random();
    EXPECT_EQ(crc32c::ExtendHardware(seed, view), crc32c::ExtendPortable(seed, view)) << trial;
  }
}

TEST(Crc32c, OneFlippedBitChangesTheValue) {
  std::string data(4096, 'x');
  const uint32_t clean = crc32c::Value(data);
  data[1234] ^= 0x10;
  EXPECT_NE(crc32c::Value(data), clean);
}

TEST(Crc32c, HexIsEightLowercaseDigits) {
  EXPECT_EQ(crc32c::ToHex(0x8A9136AA), "8a9136aa");
  EXPECT_EQ(crc32c::ToHex(0x1), "00000001");
}

}  // namespace
}  // namespace rollout
