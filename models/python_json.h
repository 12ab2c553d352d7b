// JSON written as transformers' `tojson` chat-template filter writes it: Python's
// json.dumps(value, ensure_ascii=False, indent=...) — ", " between items (with an
// indent: "," and a new line indented `indent` spaces a level), ": " after keys, keys in
// the order the value holds them (nlohmann::ordered_json keeps a file's order), non-ASCII
// text as is, control characters escaped (\n, \t, ... else \u00xx), floats as Python's
// repr writes them ("1.0", "1e-05", "1e+16"; NaN, Infinity, -Infinity). Tool schemas and
// tool-call arguments reach a chat prompt this way, so the model sees the text it would
// under transformers.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace rollout::models {

// `indent` < 0 is Python's indent=None: all on one line.
std::string PythonJsonDumps(const nlohmann::ordered_json& value, int indent = -1);

}  // namespace rollout::models
