// PythonJsonDumps against what Python's json.dumps(value, ensure_ascii=False) printed
// for the same values (transformers' tojson).
#include "models/python_json.h"

#include <gtest/gtest.h>

#include <limits>

namespace rollout::models {
namespace {

using nlohmann::ordered_json;

TEST(PythonJson, KeysKeepTheirOrderWithPythonsSeparators) {
  const ordered_json value = ordered_json::parse(R"({"z": {"b": 1, "a": [true, false, null, -5]}, "a": []})");
  EXPECT_EQ(PythonJsonDumps(value), R"({"z": {"b": 1, "a": [true, false, null, -5]}, "a": []})");
  EXPECT_EQ(PythonJsonDumps(ordered_json::parse("18446744073709551615")), "18446744073709551615");
  EXPECT_EQ(PythonJsonDumps(ordered_json::object()), "{}");
}

TEST(PythonJson, StringsEscapeControlsAndKeepOtherText) {
  const ordered_json value = std::string("a\"b\\c\n\t\r\b\f\x01\x7f \xC3\xA9 \xE4\xB8\xAD");
  EXPECT_EQ(PythonJsonDumps(value), "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\x7f \xC3\xA9 \xE4\xB8\xAD\"");
}

// json.dumps(indent=4), as Llama 3.1+ templates write tool schemas.
TEST(PythonJson, AnIndentPutsEachItemOnItsOwnLine) {
  const ordered_json value = ordered_json::parse(R"({"a": [1, {"b": []}, {}], "c": {"d": "x"}})");
  EXPECT_EQ(PythonJsonDumps(value, 4),
            "{\n    \"a\": [\n        1,\n        {\n            \"b\": []\n        },\n        {}\n    ],\n    \"c\": "
            "{\n        \"d\": \"x\"\n    }\n}");
  EXPECT_EQ(PythonJsonDumps(ordered_json::parse("[]"), 4), "[]");
  EXPECT_EQ(PythonJsonDumps(ordered_json("s"), 4), "\"s\"");
}

TEST(PythonJson, FloatsAreWrittenAsPythonsRepr) {
  const ordered_json value = ordered_json::parse(
      "[0.0, -0.0, 1.0, 0.5, 1e-05, 0.0001, 1e16, 1e15, 123456789.125, 1.5e-7, 2.5e300, -3.14159, "
      "0.30000000000000004]");
  EXPECT_EQ(PythonJsonDumps(value),
            "[0.0, -0.0, 1.0, 0.5, 1e-05, 0.0001, 1e+16, 1000000000000000.0, 123456789.125, 1.5e-07, 2.5e+300, "
            "-3.14159, 0.30000000000000004]");
  EXPECT_EQ(PythonJsonDumps(ordered_json(std::numeric_limits<double>::quiet_NaN())), "NaN");
  EXPECT_EQ(PythonJsonDumps(ordered_json(-std::numeric_limits<double>::infinity())), "-Infinity");
}

}  // namespace
}  // namespace rollout::models
