// UTF-8 handling, character classes and NFC (expected values from python3's
// unicodedata).
#include "models/unicode.h"

#include <gtest/gtest.h>

#include "models/nfc.h"

namespace rollout::models {
namespace {

std::string Lossy(absl::string_view bytes) {
  std::string out;
  AppendUtf8Lossy(bytes, /*hold_incomplete_tail=*/false, &out);
  return out;
}

TEST(Utf8, DecodesOneToFourByteCharacters) {
  const std::string text = "a\xc3\xa9\xe4\xbd\xa0\xf0\x9f\x9a\x80";  // a é 你 🚀
  DecodedChar c = DecodeUtf8(text, 0);
  EXPECT_EQ(c.code_point, U'a');
  EXPECT_EQ(c.length, 1u);
  c = DecodeUtf8(text, 1);
  EXPECT_EQ(c.code_point, 0xE9u);
  EXPECT_EQ(c.length, 2u);
  c = DecodeUtf8(text, 3);
  EXPECT_EQ(c.code_point, 0x4F60u);
  EXPECT_EQ(c.length, 3u);
  c = DecodeUtf8(text, 6);
  EXPECT_EQ(c.code_point, 0x1F680u);
  EXPECT_EQ(c.length, 4u);
  EXPECT_EQ(DecodeUtf8(text, text.size()).length, 0u);
}

TEST(Utf8, OverlongSurrogateAndOutOfRangeSequencesAreInvalidBytes) {
  for (const char* bad : {"\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf5", "\x80"}) {
    const DecodedChar c = DecodeUtf8(bad, 0);
    EXPECT_EQ(c.code_point, kInvalidCodePoint) << bad;
    EXPECT_EQ(c.length, 1u);
  }
}

TEST(Utf8, EncodingInvertsDecoding) {
  for (char32_t c :
       {U'a', char32_t{0xE9}, char32_t{0x4F60}, char32_t{0x1F680}, char32_t{0x10FFFF}}) {
    std::string bytes;
    AppendUtf8(c, &bytes);
    EXPECT_EQ(DecodeUtf8(bytes, 0).code_point, c);
    EXPECT_EQ(DecodeUtf8(bytes, 0).length, bytes.size());
  }
}

TEST(Utf8Lossy, ReplacesEachMaximalInvalidSubpartWithOneReplacementCharacter) {
  EXPECT_EQ(Lossy("ok"), "ok");
  EXPECT_EQ(Lossy("\xe4\xbd"), "\xef\xbf\xbd");  // truncated at the end
  EXPECT_EQ(Lossy("\xe4\xbd"
                  "A"),
            "\xef\xbf\xbd"
            "A");  // broken by 'A'
  EXPECT_EQ(Lossy("\xff\xfe"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(Lossy("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // surrogate
}

TEST(Utf8Lossy, HoldsAnUnfinishedCharacterAtTheEndWhenAsked) {
  std::string out;
  EXPECT_EQ(AppendUtf8Lossy("a\xf0\x9f\x9a", /*hold_incomplete_tail=*/true, &out), 1u);
  EXPECT_EQ(out, "a");
  out.clear();
  EXPECT_EQ(AppendUtf8Lossy("\xf0\x9f\x9a\x80", /*hold_incomplete_tail=*/true, &out), 4u);
  EXPECT_EQ(out, "\xf0\x9f\x9a\x80");
  EXPECT_TRUE(IsValidUtf8(out));
  EXPECT_FALSE(IsValidUtf8("\xf0\x9f\x9a"));
}

TEST(CharClasses, LettersNumbersAndWhitespaceBeyondAscii) {
  EXPECT_TRUE(IsLetter(U'a'));
  EXPECT_TRUE(IsLetter(0xE9));    // é
  EXPECT_TRUE(IsLetter(0x4F60));  // 你
  EXPECT_TRUE(IsLetter(0x416));   // Ж
  EXPECT_TRUE(IsNumber(U'7'));
  EXPECT_TRUE(IsNumber(0x663));   // Arabic-Indic three
  EXPECT_TRUE(IsNumber(0xB2));    // superscript two (No)
  EXPECT_TRUE(IsNumber(0x216B));  // roman numeral twelve (Nl)
  EXPECT_TRUE(IsWhitespace(U'\t'));
  EXPECT_TRUE(IsWhitespace(0xA0));    // no-break space
  EXPECT_TRUE(IsWhitespace(0x3000));  // ideographic space
  EXPECT_TRUE(IsWhitespace(0x85));
  EXPECT_EQ(ClassOf(U'!'), CharClass::kOther);
  EXPECT_EQ(ClassOf(0x301), CharClass::kOther);    // combining acute (Mn)
  EXPECT_EQ(ClassOf(0x200B), CharClass::kOther);   // zero width space is not White_Space
  EXPECT_EQ(ClassOf(0x1F680), CharClass::kOther);  // emoji
  EXPECT_EQ(ClassOf(kInvalidCodePoint), CharClass::kOther);
}

TEST(Nfc, ComposesCombiningSequences) {
  EXPECT_EQ(NfcNormalize("e\xcc\x81"), "\xc3\xa9");  // e + U+0301 -> é
  // a + dot below + circumflex, in either order -> U+1EAD
  EXPECT_EQ(NfcNormalize("a\xcc\xa3\xcc\x82"), "\xe1\xba\xad");
  EXPECT_EQ(NfcNormalize("a\xcc\x82\xcc\xa3"), "\xe1\xba\xad");
}

TEST(Nfc, ComposesHangulJamoAlgorithmically) {
  EXPECT_EQ(NfcNormalize("\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8"), "\xea\xb0\x81");  // 각
}

TEST(Nfc, MapsSingletonsAndKeepsCompositionExclusionsDecomposed) {
  EXPECT_EQ(NfcNormalize("\xe2\x84\xab"), "\xc3\x85");  // ANGSTROM SIGN -> Å
  // DEVANAGARI LETTER QA is excluded from composition: NFC is KA + NUKTA.
  EXPECT_EQ(NfcNormalize("\xe0\xa5\x98"), "\xe0\xa4\x95\xe0\xa4\xbc");
}

TEST(Nfc, LeavesNormalizedTextAndInvalidBytesAlone) {
  EXPECT_EQ(NfcNormalize("plain ascii"), "plain ascii");
  EXPECT_EQ(NfcNormalize("强化学习 训练"), "强化学习 训练");
  EXPECT_EQ(NfcNormalize("x\xff"
                         "e\xcc\x81"),
            "x\xff\xc3\xa9");
}

}  // namespace
}  // namespace rollout::models
