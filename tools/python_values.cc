#include "tools/python_values.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace rollout::tools {
namespace {

// The code point at text[*i] (advancing *i past it); a byte that does not start valid
// UTF-8 reads as U+FFFD, one byte long.
uint32_t NextCodePoint(absl::string_view text, size_t* i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(*i);
  int length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || *i + static_cast<size_t>(length) > text.size()) {
    ++*i;
    return 0xFFFD;
  }
  uint32_t code = length == 1 ? lead : lead & (0x7F >> length);
  for (int k = 1; k < length; ++k) {
    if ((byte(*i + k) & 0xC0) != 0x80) {
      ++*i;
      return 0xFFFD;
    }
    code = (code << 6) | (byte(*i + k) & 0x3F);
  }
  *i += static_cast<size_t>(length);
  return code;
}

// Whether Python's str.isprintable() holds, for the categories it excludes that have
// fixed ranges: controls (Cc), format characters (Cf), private use (Co), separators
// other than the space (Zs, Zl, Zp).
bool Printable(uint32_t c) {
  if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD) return false;
  if ((c >= 0x600 && c <= 0x605) || c == 0x61C || c == 0x6DD || c == 0x70F || c == 0x1680 || c == 0x180E) {
    return false;
  }
  if ((c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x206F)) return false;
  if (c == 0x3000 || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) || (c >= 0xE000 && c <= 0xF8FF)) return false;
  if (c == 0x110BD || c == 0x110CD || (c >= 0x1D173 && c <= 0x1D17A) || c == 0xE0001) return false;
  if ((c >= 0xE0020 && c <= 0xE007F) || c >= 0xF0000) return false;
  return true;
}

std::string StringRepr(absl::string_view text) {
  const bool double_quoted = text.find('\'') != absl::string_view::npos && text.find('"') == absl::string_view::npos;
  const char quote = double_quoted ? '"' : '\'';
  std::string out(1, quote);
  for (size_t i = 0; i < text.size();) {
    const size_t begin = i;
    const uint32_t c = NextCodePoint(text, &i);
    if (c == static_cast<uint32_t>(quote) || c == '\\') {
      absl::StrAppend(&out, "\\", std::string(1, static_cast<char>(c)));
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (!Printable(c)) {
      out += c < 0x100 ? absl::StrFormat("\\x%02x", c) : c < 0x10000 ? absl::StrFormat("\\u%04x", c)
                                                                      : absl::StrFormat("\\U%08x", c);
    } else if (c == 0xFFFD && i - begin == 1) {
      out += "\xEF\xBF\xBD";
    } else {
      absl::StrAppend(&out, text.substr(begin, i - begin));
    }
  }
  out += quote;
  return out;
}

// repr(float): the fewest significant digits that read back as `value`, written fixed
// when its exponent is in [-4, 16), else as d.ddde+XX.
std::string FloatRepr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[40];
  for (int precision = 0; precision <= 16; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*e", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  const std::string scientific = buffer;  // [-]d[.ddd]e[+-]XX
  const size_t e = scientific.find('e');
  const int exponent = std::atoi(scientific.c_str() + e + 1);
  const bool negative = scientific[0] == '-';
  std::string digits;
  for (size_t k = negative ? 1 : 0; k < e; ++k) {
    if (scientific[k] != '.') digits += scientific[k];
  }
  const std::string sign = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    const std::string mantissa = digits.size() == 1 ? digits : absl::StrCat(digits.substr(0, 1), ".", digits.substr(1));
    return absl::StrCat(sign, mantissa, "e", exponent < 0 ? "-" : "+", absl::StrFormat("%02d", std::abs(exponent)));
  }
  if (exponent < 0) return absl::StrCat(sign, "0.", std::string(static_cast<size_t>(-exponent - 1), '0'), digits);
  const size_t whole = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= whole) return absl::StrCat(sign, digits, std::string(whole - digits.size(), '0'), ".0");
  return absl::StrCat(sign, digits.substr(0, whole), ".", digits.substr(whole));
}

}  // namespace

std::string PythonRepr(const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case nlohmann::ordered_json::value_t::string:
      return StringRepr(value.get_ref<const std::string&>());
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned:
      return value.dump();
    case nlohmann::ordered_json::value_t::number_float:
      return FloatRepr(value.get<double>());
    case nlohmann::ordered_json::value_t::boolean:
      return value.get<bool>() ? "True" : "False";
    case nlohmann::ordered_json::value_t::array: {
      std::vector<std::string> items;
      for (const auto& item : value) items.push_back(PythonRepr(item));
      return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
    }
    case nlohmann::ordered_json::value_t::object: {
      std::vector<std::string> items;
      for (const auto& [key, item] : value.items()) items.push_back(absl::StrCat(StringRepr(key), ": ", PythonRepr(item)));
      return absl::StrCat("{", absl::StrJoin(items, ", "), "}");
    }
    default:
      return "None";
  }
}

std::string PythonStr(const nlohmann::ordered_json& value) {
  return value.is_string() ? value.get<std::string>() : PythonRepr(value);
}

}  // namespace rollout::tools
