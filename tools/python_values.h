// Python's str() and repr() of the values json.loads makes (str, int, float, bool,
// None, list, dict), for built-in tools whose text must read as verl's Python tools
// write it (f"{answer=}" is repr(answer)).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace rollout::tools {

// repr(value): strings quoted as Python quotes them (single quotes unless the text holds
// a single quote and no double quote) with backslash escapes for the quote, backslashes
// and characters Python does not print (controls, separators, format characters;
// unassigned code points print as themselves); floats in their shortest form that reads
// back exactly ("72.0", "1e+16", "1.5e-05"); True, False, None; lists and dicts with ", "
// and ": " between their items' reprs.
std::string PythonRepr(const nlohmann::ordered_json& value);

// str(value): a string's own text, any other value's repr.
std::string PythonStr(const nlohmann::ordered_json& value);

}  // namespace rollout::tools
