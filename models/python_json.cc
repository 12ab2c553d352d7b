#include "models/python_json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rollout::models {
namespace {

using nlohmann::ordered_json;

// A JSON string literal as json.dumps(ensure_ascii=False) writes it.
void AppendString(const std::string& text, std::string* out) {
  out->push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// Python's repr(float): the shortest digits that read back as `value`, in positional
// notation when the decimal exponent is in [-4, 16), else "d.ddde+XX".
std::string PythonFloatRepr(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  std::string scientific;  // "-d.ddde-05" with the fewest digits that round-trip
  for (int precision = 0; precision <= 16; ++precision) {
    scientific = absl::StrFormat("%.*e", precision, value);
    if (std::strtod(scientific.c_str(), nullptr) == value) break;
  }
  const bool negative = scientific[0] == '-';
  const size_t e = scientific.find('e');
  const int exponent = std::atoi(scientific.c_str() + e + 1);
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i) {
    if (scientific[i] != '.') digits.push_back(scientific[i]);
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    absl::StrAppend(&out, digits.substr(0, 1), digits.size() > 1 ? "." : "", digits.substr(1), "e",
                    exponent < 0 ? "-" : "+", absl::StrFormat("%02d", std::abs(exponent)));
    return out;
  }
  const int point = exponent + 1;  // digits before the decimal point
  if (point <= 0) {
    absl::StrAppend(&out, "0.", std::string(-point, '0'), digits);
  } else if (point >= static_cast<int>(digits.size())) {
    absl::StrAppend(&out, digits, std::string(point - digits.size(), '0'), ".0");
  } else {
    absl::StrAppend(&out, digits.substr(0, point), ".", digits.substr(point));
  }
  return out;
}

// How containers lay out their items: on one line, or one item a line.
struct Layout {
  int indent;  // < 0: one line
  int depth;   // containers around the value being written

  // What goes before item `i` of a container (its closing bracket when i is its size).
  std::string Before(size_t i, size_t size) const {
    if (indent < 0) return i == 0 || i == size ? "" : ", ";
    const int level = i == size ? depth : depth + 1;
    return absl::StrCat(i == 0 || i == size ? "" : ",", "\n", std::string(static_cast<size_t>(level * indent), ' '));
  }
  Layout Inside() const { return {indent, depth + 1}; }
};

void AppendValue(const ordered_json& value, const Layout& layout, std::string* out) {
  switch (value.type()) {
    case ordered_json::value_t::object: {
      out->push_back('{');
      size_t i = 0;
      for (const auto& [key, item] : value.items()) {
        *out += layout.Before(i++, value.size());
        AppendString(key, out);
        *out += ": ";
        AppendValue(item, layout.Inside(), out);
      }
      if (!value.empty()) *out += layout.Before(value.size(), value.size());
      out->push_back('}');
      return;
    }
    case ordered_json::value_t::array: {
      out->push_back('[');
      for (size_t i = 0; i < value.size(); ++i) {
        *out += layout.Before(i, value.size());
        AppendValue(value[i], layout.Inside(), out);
      }
      if (!value.empty()) *out += layout.Before(value.size(), value.size());
      out->push_back(']');
      return;
    }
    case ordered_json::value_t::string:
      AppendString(value.get_ref<const std::string&>(), out);
      return;
    case ordered_json::value_t::number_float:
      *out += PythonFloatRepr(value.get<double>());
      return;
    case ordered_json::value_t::boolean:
      *out += value.get<bool>() ? "true" : "false";
      return;
    case ordered_json::value_t::null:
    case ordered_json::value_t::discarded:
      *out += "null";
      return;
    default:  // integers (signed, unsigned) and binary, which JSON text never holds
      *out += value.dump();
  }
}

}  // namespace

std::string PythonJsonDumps(const ordered_json& value, int indent) {
  std::string out;
  AppendValue(value, Layout{indent, 0}, &out);
  return out;
}

}  // namespace rollout::models
