// Tools for multi-turn rollouts: the tool set and its errors as the model sees them,
// the built-in calculator, verl's tool config files, Hermes tool calls in replies and
// verl's truncation of long results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "tests/support/temp_dir.h"
#include "tools/builtin_tools.h"
#include "tools/hermes_tool_calls.h"
#include "tools/tool_config.h"
#include "tools/tool_response.h"

namespace rollout::tools {
namespace {

using nlohmann::ordered_json;
using ::testing::HasSubstr;

ordered_json CalculatorSchema(const std::string& name = "calculator") {
  return ordered_json::parse(R"({"type": "function", "function": {"name": ")" + name +
                             R"(", "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}}})");
}

std::unique_ptr<Tool> Calculator() { return MakeBuiltinTool("calculator", ordered_json::object()).value(); }

TEST(ToolSet, CallsToolsByTheirSchemasName) {
  ToolSet tools;
  ASSERT_TRUE(tools.Add(CalculatorSchema("calc"), Calculator()).ok());
  EXPECT_EQ(tools.Call("calc", {{"expression", "(25 - 5) * 4 / 2"}}), "40");
  EXPECT_EQ(tools.Call("calc", {{"expression", "7 / 2 - 6"}}), "-5/2");
  ASSERT_EQ(tools.schemas().size(), 1u);
  EXPECT_EQ(tools.schemas()[0]["function"]["name"], "calc");
}

TEST(ToolSet, ShowsFailuresToTheModelAsVerlDoes) {
  ToolSet tools;
  ASSERT_TRUE(tools.Add(CalculatorSchema(), Calculator()).ok());
  EXPECT_EQ(tools.Call("search", {{"query", "x"}}),
            "Error when executing tool: no tool is named 'search' (the tools: calculator)");
  EXPECT_EQ(tools.Call("calculator", ordered_json::array()),
            "Error when executing tool: the arguments are not a JSON object");
  EXPECT_EQ(tools.Call("calculator", {{"expr", "1"}}),
            "Error when executing tool: calculator takes a string \"expression\"");
  EXPECT_EQ(tools.Call("calculator", {{"expression", "1 / 0"}}),
            "Error when executing tool: division by zero at column 3");
}

TEST(ToolSet, RefusesSchemasWithoutANameAndTwoToolsOfOneName) {
  ToolSet tools;
  EXPECT_THAT(tools.Add(ordered_json::parse(R"({"type": "function", "function": {}})"), Calculator()).message(),
              HasSubstr("needs a string function.name"));
  ASSERT_TRUE(tools.Add(CalculatorSchema(), Calculator()).ok());
  EXPECT_EQ(tools.Add(CalculatorSchema(), Calculator()).message(), "two tools are named 'calculator'");
  EXPECT_EQ(tools.schemas().size(), 1u);
}

TEST(ToolConfig, ReadsVerlsFileKeepingTheSchemasKeyOrderAndTypes) {
  testing::TempDir dir;
  const std::string path = dir.Write("tools.yaml", R"yaml(tools:
  - class_name: calculator
    config:
      type: native
    tool_schema:
      type: function
      function:
        name: calc
        description: "Evaluates an arithmetic expression: 3 * (4 + 5)"
        parameters:
          type: object
          properties:
            expression: {type: string, description: the expression, maxLength: 200}
            exact: {type: boolean, default: true, weight: 0.5, note: "true", none: null}
          required: [expression]
)yaml");
  absl::StatusOr<ToolSet> tools = LoadToolConfig(path);
  ASSERT_TRUE(tools.ok()) << tools.status();
  ASSERT_EQ(tools->schemas().size(), 1u);
  EXPECT_EQ(tools->schemas()[0].dump(),
            R"j({"type":"function","function":{"name":"calc","description":"Evaluates an arithmetic expression: 3 * (4 + 5)",)j"
            R"("parameters":{"type":"object","properties":{"expression":{"type":"string","description":"the expression",)"
            R"("maxLength":200},"exact":{"type":"boolean","default":true,"weight":0.5,"note":"true","none":null}},)"
            R"("required":["expression"]}}})");
  EXPECT_EQ(tools->Call("calc", {{"expression", "2 + 2"}}), "4");
}

TEST(ToolConfig, NamesTheFileAndTheToolForWhatIsWrong) {
  testing::TempDir dir;
  const auto error = [&](const std::string& text) {
    const std::string path = dir.Write("tools.yaml", text);
    absl::StatusOr<ToolSet> tools = LoadToolConfig(path);
    EXPECT_FALSE(tools.ok());
    return std::string(tools.status().message()).substr(path.size() + std::string("tool config ").size());
  };
  const std::string schema = "tool_schema: {type: function, function: {name: calc}}";
  EXPECT_EQ(error("tools: []"), " has no list of tools under 'tools'");
  EXPECT_EQ(error("tools:\n  - class_name: verl.tools.gsm8k_tool.Gsm8kTool\n    " + schema),
            ": tools[0]: no built-in tool has class_name 'verl.tools.gsm8k_tool.Gsm8kTool' (Python tools cannot be "
            "loaded); the built-in tools: calculator; a tool plug-in is class_name plugin (tools/plugin_api.h)");
  EXPECT_EQ(error("tools:\n  - class_name: calculator\n    config: {type: mcp}\n    " + schema),
            ": tools[0]: has config.type \"mcp\"; only native tools run here (not verl's mcp servers)");
  EXPECT_EQ(error("tools:\n  - class_name: calculator\n    config: {precision: 3}\n    " + schema),
            ": tools[0]: calculator takes no config; got {\"precision\":3}");
  EXPECT_EQ(error("tools:\n  - class_name: calculator"), ": tools[0]: has no tool_schema");
  EXPECT_EQ(error("tools:\n  - {class_name: calculator, " + schema + "}\n  - {class_name: calculator, " + schema + "}"),
            ": tools[1]: two tools are named 'calc'");
  EXPECT_THAT(error("tools: [a: b: c]"), HasSubstr("yaml-cpp"));
  EXPECT_EQ(LoadToolConfig(dir.Path("missing.yaml")).status().code(), absl::StatusCode::kNotFound);
}

// The plug-in sits next to the tool config, which names it by a relative path.
TEST(ToolConfig, RunsAPlugInCreatedWithItsConfig) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileDurably(dir.Path("libecho.so"), ReadFile(ECHO_TOOL_PLUGIN_PATH).value()).ok());
  const std::string path = dir.Write("tools.yaml", R"yaml(tools:
  - class_name: plugin
    config: {library: libecho.so, greeting: hi}
    tool_schema: {type: function, function: {name: weather}}
)yaml");
  absl::StatusOr<ToolSet> tools = LoadToolConfig(path);
  ASSERT_TRUE(tools.ok()) << tools.status();
  EXPECT_EQ(tools->Call("weather", {{"city", "Paris"}}), R"(config={"greeting":"hi"} arguments={"city":"Paris"})");
  EXPECT_EQ(tools->Call("weather", {{"fail", true}}), "Error when executing tool: no such city");
}

TEST(ToolConfig, NamesWhatKeepsAPlugInFromLoading) {
  testing::TempDir dir;
  const auto error = [&](const std::string& config) {
    const std::string path = dir.Write(
        "tools.yaml", "tools:\n  - class_name: plugin\n    config: " + config +
                          "\n    tool_schema: {type: function, function: {name: weather}}\n");
    absl::StatusOr<ToolSet> tools = LoadToolConfig(path);
    EXPECT_FALSE(tools.ok());
    return std::string(tools.status().message());
  };
  EXPECT_THAT(error("{}"), HasSubstr("tools[0]: is a plugin without config.library, the path of its shared library"));
  EXPECT_THAT(error("{library: libnothing.so}"), HasSubstr("cannot load tool plug-in " + dir.Path("libnothing.so")));
  EXPECT_THAT(error("{library: " REWARD_PLUGIN_PATH "}"),
              HasSubstr("does not export rollout_tool_abi_version (see tools/plugin_api.h)"));
  EXPECT_THAT(error("{library: " ECHO_TOOL_PLUGIN_PATH ", refuse: true}"),
              HasSubstr("could not create its tool: told to refuse"));
}

TEST(ToolConfig, MultiTurnNeedsAToolConfig) {
  config::MultiTurnConfig multi_turn;
  EXPECT_TRUE(LoadMultiTurnTools(multi_turn)->empty());  // off: no tools
  multi_turn.set_enable(true);
  EXPECT_EQ(LoadMultiTurnTools(multi_turn).status().message(),
            "rollout.multi_turn.enable needs rollout.multi_turn.tool_config_path: the tools the model may call");
}

TEST(HermesToolCalls, ParsesEachBlockAndSkipsMalformedOnes) {
  const HermesToolCalls parsed = ParseHermesToolCalls(
      "Let me see.\n<tool_call>\n{\"name\": \"calc\", \"arguments\": {\"b\": 1, \"a\": \"x\"}}\n</tool_call>\n"
      "<tool_call>{\"name\": \"calc\", \"arguments\": \"{\\\"expression\\\": \\\"1+1\\\"}\"}</tool_call>"
      "<tool_call>{not json}</tool_call><tool_call>{\"name\": 3, \"arguments\": {}}</tool_call>"
      "<tool_call>{\"name\": \"calc\", \"arguments\": [1]}</tool_call><tool_call>{\"name\": \"calc\"");
  ASSERT_EQ(parsed.calls.size(), 2u);
  EXPECT_EQ(parsed.calls[0].name, "calc");
  EXPECT_EQ(parsed.calls[0].arguments.dump(), R"({"b":1,"a":"x"})");  // the reply's key order
  EXPECT_EQ(parsed.calls[1].arguments.dump(), R"({"expression":"1+1"})");
  EXPECT_EQ(parsed.malformed, 3);  // the unclosed last block is no call at all
  EXPECT_TRUE(ParseHermesToolCalls("The answer is 4.").calls.empty());
}

TEST(ToolResponse, CutsLongResultsAsVerlDoesCountingCharacters) {
  EXPECT_EQ(TruncateToolResponse("0123456789", 10, "middle"), "0123456789");
  EXPECT_EQ(TruncateToolResponse("0123456789", 4, "left"), "0123...(truncated)");
  EXPECT_EQ(TruncateToolResponse("0123456789", 4, "right"), "(truncated)...6789");
  EXPECT_EQ(TruncateToolResponse("0123456789", 5, "middle"), "01...(truncated)...89");
  // Characters, not bytes: "é" and "€" are one each.
  EXPECT_EQ(TruncateToolResponse("é€abc€é", 7, "middle"), "é€abc€é");
  EXPECT_EQ(TruncateToolResponse("é€abc€é", 4, "middle"), "é€...(truncated)...€é");
  EXPECT_EQ(TruncateToolResponse("é€abc€é", 2, "right"), "(truncated)...€é");
}

}  // namespace
}  // namespace rollout::tools
