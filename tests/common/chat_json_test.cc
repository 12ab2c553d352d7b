// The chat message and tool shapes the controller and the workers both accept: OpenAI's
// tool calls (wrapped in "function" or not), tool results, tools as a list or its JSON
// text; anything else says what is wrong.
#include "common/chat_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace rollout {
namespace {

using nlohmann::ordered_json;
using ::testing::HasSubstr;

absl::Status Check(const std::string& message) { return CheckChatMessage(ordered_json::parse(message)); }

TEST(ChatJson, MessagesMayCallToolsAndReturnTheirResults) {
  EXPECT_TRUE(Check(R"({"role": "user", "content": "q"})").ok());
  EXPECT_TRUE(Check(R"({"role": "tool", "content": "42", "tool_call_id": "c1"})").ok());
  EXPECT_TRUE(Check(R"({"role": "assistant", "content": null, "tool_calls": [{"type": "function",
      "function": {"name": "add", "arguments": {"a": 1}}}]})").ok());
  EXPECT_TRUE(Check(R"({"role": "assistant", "tool_calls": [{"name": "add", "arguments": "{\"a\": 1}"}]})").ok());
  EXPECT_TRUE(Check(R"({"role": "assistant", "content": "a", "tool_calls": null})").ok());
}

TEST(ChatJson, BadMessagesSayWhatIsWrong) {
  EXPECT_EQ(Check(R"({"role": "user"})").message(),
            "has no string \"content\" (only a message making tool calls may leave it null)");
  EXPECT_EQ(Check(R"({"content": "q"})").message(), "has no string \"role\"");
  EXPECT_EQ(Check(R"(["user", "q"])").message(), "is not a {\"role\": ..., \"content\": ...} object but array");
  EXPECT_EQ(Check(R"({"role": "function", "content": "q"})").message(),
            "has role 'function'; supported roles are system, user, assistant and tool");
  EXPECT_EQ(Check(R"({"role": "user", "content": "q", "tool_calls": [{"name": "f", "arguments": {}}]})").message(),
            "has \"tool_calls\" but role 'user'; only assistant messages make tool calls");
  EXPECT_EQ(Check(R"({"role": "assistant", "content": "", "tool_calls": []})").message(),
            "\"tool_calls\" must be a non-empty list, not []");
  EXPECT_EQ(Check(R"({"role": "assistant", "tool_calls": [{"function": {"arguments": {}}}]})").message(),
            "tool call 0 has no string \"name\"");
  EXPECT_EQ(Check(R"({"role": "assistant", "tool_calls": [{"name": "f", "arguments": 3}]})").message(),
            "tool call 0 (f) has no \"arguments\" object or JSON string");
  EXPECT_EQ(Check(R"({"role": "assistant", "tool_calls": ["f"]})").message(),
            "tool call 0 is not {\"function\": {\"name\": ..., \"arguments\": ...}}");
}

TEST(ChatJson, ToolCallsUnwrapTheirFunction) {
  const std::vector<ordered_json> calls = ToolCalls(ordered_json::parse(
      R"({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f",
          "arguments": {"b": 1, "a": 2}}}, {"name": "g", "arguments": "{}"}]})"));
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].dump(), R"({"name":"f","arguments":{"b":1,"a":2}})");
  EXPECT_EQ(calls[1].dump(), R"({"name":"g","arguments":"{}"})");
  EXPECT_TRUE(ToolCalls(ordered_json::parse(R"({"role": "user", "content": "q"})")).empty());
}

TEST(ChatJson, ToolsAreAListOfSchemasOrItsJsonText) {
  const std::string schema = R"({"type":"function","function":{"name":"f","parameters":{}}})";
  absl::StatusOr<std::vector<ordered_json>> listed = ToolSchemas(ordered_json::parse("[" + schema + "]"));
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].dump(), schema);
  absl::StatusOr<std::vector<ordered_json>> text = ToolSchemas(ordered_json("[" + schema + "]"));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ((*text)[0].dump(), schema);
  EXPECT_TRUE(ToolSchemas(ordered_json()).value().empty());
  EXPECT_TRUE(ToolSchemas(ordered_json::array()).value().empty());
  EXPECT_EQ(ToolSchemas(ordered_json("[{")).status().message(),
            "is a string but not the JSON text of a list of tools");
  EXPECT_EQ(ToolSchemas(ordered_json::parse(schema)).status().message(), "must be a list of tool schemas, not object");
  EXPECT_THAT(ToolSchemas(ordered_json::parse(R"([{}, "f"])")).status().message(),
              HasSubstr("tool 1 is not a JSON schema object but string"));
}

}  // namespace
}  // namespace rollout
