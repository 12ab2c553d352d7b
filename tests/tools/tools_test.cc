// Tools for multi-turn rollouts: the tool set and its errors as the model sees them, a
// trajectory's tools_kwargs and tool selection, the built-in calculator and gsm8k tools,
// Python's repr of tool results, verl's tool config files, Hermes tool calls in replies
// and verl's truncation of long results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "tests/support/temp_dir.h"
#include "tools/builtin_tools.h"
#include "tools/hermes_tool_calls.h"
#include "tools/interaction.h"
#include "tools/python_values.h"
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
  EXPECT_EQ(tools.Call("calc", {{"expression", "(25 - 5) * 4 / 2"}}).text, "40");
  EXPECT_EQ(tools.Call("calc", {{"expression", "7 / 2 - 6"}}).text, "-5/2");
  ASSERT_EQ(tools.schemas().size(), 1u);
  EXPECT_EQ(tools.schemas()[0]["function"]["name"], "calc");
}

TEST(ToolSet, ShowsFailuresToTheModelAsVerlDoes) {
  ToolSet tools;
  ASSERT_TRUE(tools.Add(CalculatorSchema(), Calculator()).ok());
  EXPECT_EQ(tools.Call("search", {{"query", "x"}}).text,
            "Error when executing tool: no tool is named 'search' (the tools: calculator)");
  EXPECT_EQ(tools.Call("calculator", ordered_json::array()).text,
            "Error when executing tool: the arguments are not a JSON object");
  EXPECT_EQ(tools.Call("calculator", {{"expr", "1"}}).text,
            "Error when executing tool: calculator takes a string \"expression\"");
  EXPECT_EQ(tools.Call("calculator", {{"expression", "1 / 0"}}).text,
            "Error when executing tool: division by zero at column 3");
}

ordered_json Gsm8kSchema() {
  return ordered_json::parse(R"({"type": "function", "function": {"name": "calc_gsm8k_reward"}})");
}

ToolSet CalculatorAndGsm8k() {
  ToolSet tools;
  EXPECT_TRUE(tools.Add(CalculatorSchema(), Calculator()).ok());
  EXPECT_TRUE(tools.Add(Gsm8kSchema(), MakeBuiltinTool("gsm8k", ordered_json::object()).value()).ok());
  return tools;
}

// verl's Gsm8kTool: f"Current parsed {answer=} {reward=}", the answer scored with
// "#### " before it (values from verl's tool in Python).
TEST(Gsm8kTool, WritesWhatVerlsToolWritesScoringAgainstTheRowsGroundTruth) {
  const ToolSet tools = CalculatorAndGsm8k();
  Trajectory trajectory;
  trajectory.tools_kwargs = {{"calc_gsm8k_reward", {{"create_kwargs", {{"ground_truth", "72"}}}}}};
  const auto call = [&](const ordered_json& arguments) {
    return tools.Call("calc_gsm8k_reward", arguments, trajectory).text;
  };
  EXPECT_EQ(call({{"answer", "72"}}), "Current parsed answer='72' reward=1.0");
  EXPECT_EQ(call({{"answer", "#### 72"}}), "Current parsed answer='#### 72' reward=1.0");
  EXPECT_EQ(call({{"answer", 72}}), "Current parsed answer='72' reward=1.0");
  EXPECT_EQ(call({{"answer", 72.0}}), "Current parsed answer='72.0' reward=0.0");
  EXPECT_EQ(call({{"answer", "It's 71"}}), "Current parsed answer=\"It's 71\" reward=0.0");
  EXPECT_EQ(call(ordered_json::object()), "Current parsed answer='' reward=0");  // verl's int 0: no number
  trajectory.tools_kwargs["calc_gsm8k_reward"]["create_kwargs"]["ground_truth"] = 18;
  EXPECT_EQ(call({{"answer", "18"}}), "Current parsed answer='18' reward=1.0");
  // verl's tool reward: 0 for a correct answer, -0.05 otherwise; a failed call's is 0.
  EXPECT_EQ(tools.Call("calc_gsm8k_reward", {{"answer", "18"}}, trajectory).reward, 0.0);
  EXPECT_EQ(tools.Call("calc_gsm8k_reward", {{"answer", "17"}}, trajectory).reward, -0.05);
  const ToolResult failed = tools.Call("calc_gsm8k_reward", {{"answer", "18"}});
  EXPECT_EQ(failed.text, "Error when executing tool: needs a ground_truth, which the gsm8k tool scores answers against");
  EXPECT_EQ(failed.reward, 0.0);
}

TEST(ToolSet, ChecksATrajectorysToolsKwargsNamingTheEntry) {
  const ToolSet tools = CalculatorAndGsm8k();
  const auto check = [&](const std::string& tools_kwargs, const std::vector<std::string>& offered) {
    return std::string(tools.CheckToolsKwargs(ordered_json::parse(tools_kwargs), offered).message());
  };
  const std::vector<std::string> all;
  EXPECT_EQ(check(R"({"calc_gsm8k_reward": {"create_kwargs": {"ground_truth": "3"}, "execute_kwargs": {}}})", all), "");
  EXPECT_EQ(check(R"({"calculator": {}})", {"calculator"}), "");  // the gsm8k tool is not offered
  EXPECT_EQ(check(R"([])", all), "must be an object of tool names, not array");
  EXPECT_EQ(check(R"({"calc": {}})", all),
            "names calc, which the prompt does not offer (it offers calc_gsm8k_reward, calculator)");
  EXPECT_EQ(check(R"({"calc_gsm8k_reward": {"create_kwargs": {"ground_truth": "3"}}})", {"calculator"}),
            "names calc_gsm8k_reward, which the prompt does not offer (it offers calculator)");
  EXPECT_EQ(check(R"({"calculator": 3})", all), "calculator must be an object, not number");
  EXPECT_EQ(check(R"({"calculator": {"create_kwargs": "x"}})", all),
            "calculator.create_kwargs must be an object, not string");
  EXPECT_EQ(check(R"({})", all),
            "calc_gsm8k_reward.create_kwargs needs a ground_truth, which the gsm8k tool scores answers against");
  EXPECT_EQ(check(R"({"calc_gsm8k_reward": {"create_kwargs": {"ground_truth": [3]}}})", all),
            "calc_gsm8k_reward.create_kwargs has a ground_truth that is array, not a string or an integer");
}

TEST(ToolSet, CallsOnlyTheToolsATrajectoryOffers) {
  const ToolSet tools = CalculatorAndGsm8k();
  Trajectory trajectory;
  trajectory.offered = {"calculator"};
  EXPECT_EQ(tools.Call("calculator", {{"expression", "2 * 3"}}, trajectory).text, "6");
  EXPECT_EQ(tools.Call("calc_gsm8k_reward", {{"answer", "6"}}, trajectory).text,
            "Error when executing tool: no tool is named 'calc_gsm8k_reward' (the tools: calculator)");
}

// Expected values from Python 3's repr().
TEST(PythonValues, WritesReprAsPythonDoes) {
  const auto repr = [](const ordered_json& value) { return PythonRepr(value); };
  EXPECT_EQ(repr("72"), "'72'");
  EXPECT_EQ(repr("It's 5"), "\"It's 5\"");
  EXPECT_EQ(repr("say \"hi\""), "'say \"hi\"'");
  EXPECT_EQ(repr("both ' and \""), "'both \\' and \"'");
  EXPECT_EQ(repr("tab\there\nnl\r"), "'tab\\there\\nnl\\r'");
  EXPECT_EQ(repr("back\\slash"), "'back\\\\slash'");
  EXPECT_EQ(repr("\x7f\u0085\u00a0\u00e9\u20ac\u2028\u200b\U0001F600"),
            "'\\x7f\\x85\\xa0\u00e9\u20ac\\u2028\\u200b\U0001F600'");
  EXPECT_EQ(repr(72), "72");
  EXPECT_EQ(repr(72.0), "72.0");
  EXPECT_EQ(repr(0.1), "0.1");
  EXPECT_EQ(repr(1e16), "1e+16");
  EXPECT_EQ(repr(1.5e-05), "1.5e-05");
  EXPECT_EQ(repr(1e-4), "0.0001");
  EXPECT_EQ(repr(-0.0), "-0.0");
  EXPECT_EQ(repr(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(repr(2.5e-300), "2.5e-300");
  EXPECT_EQ(repr(true), "True");
  EXPECT_EQ(repr(nullptr), "None");
  EXPECT_EQ(repr(ordered_json::parse(R"([1, "a", [2.0]])")), "[1, 'a', [2.0]]");
  EXPECT_EQ(repr(ordered_json::parse(R"({"k": "v", "n": null})")), "{'k': 'v', 'n': None}");
  EXPECT_EQ(PythonStr("It's"), "It's");
  EXPECT_EQ(PythonStr(3.0), "3.0");
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
  EXPECT_EQ(tools->Call("calc", {{"expression", "2 + 2"}}).text, "4");
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
  EXPECT_EQ(error("tools:\n  - class_name: verl.tools.search_tool.SearchTool\n    " + schema),
            ": tools[0]: no built-in tool has class_name 'verl.tools.search_tool.SearchTool' (Python tools cannot be "
            "loaded); the built-in tools: calculator, gsm8k, verl.tools.gsm8k_tool.Gsm8kTool; a tool plug-in is "
            "class_name plugin (tools/plugin_api.h)");
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

TEST(ToolConfig, LoadsTheShippedToolConfigsTheGsm8kToolUnderVerlsClassName) {
  const std::string folder = std::string(ROLLOUT_SOURCE_DIR) + "/recipes/tools/";
  absl::StatusOr<ToolSet> calculator = LoadToolConfig(folder + "calculator.yaml");
  ASSERT_TRUE(calculator.ok()) << calculator.status();
  EXPECT_EQ(calculator->Call("calculator", {{"expression", "(25 - 5) * 4 / 2"}}).text, "40");
  absl::StatusOr<ToolSet> gsm8k = LoadToolConfig(folder + "gsm8k.yaml");
  ASSERT_TRUE(gsm8k.ok()) << gsm8k.status();
  Trajectory trajectory;
  trajectory.tools_kwargs = ordered_json::parse(R"({"calc_gsm8k_reward": {"create_kwargs": {"ground_truth": "5"}}})");
  EXPECT_EQ(gsm8k->Call("calc_gsm8k_reward", {{"answer", "5"}}, trajectory).text, "Current parsed answer='5' reward=1.0");
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
  EXPECT_EQ(tools->Call("weather", {{"city", "Paris"}}).text,
            R"(config={"greeting":"hi"} arguments={"city":"Paris"} create_kwargs={})");
  Trajectory trajectory;
  trajectory.tools_kwargs = {{"weather", {{"create_kwargs", {{"units", "metric"}}}}}};
  EXPECT_EQ(tools->Call("weather", {{"city", "Oslo"}}, trajectory).text,
            R"(config={"greeting":"hi"} arguments={"city":"Oslo"} create_kwargs={"units":"metric"})");
  EXPECT_EQ(tools->Call("weather", {{"city", "Oslo"}}).reward, 0.5);
  const ToolResult failed = tools->Call("weather", {{"fail", true}});
  EXPECT_EQ(failed.text, "Error when executing tool: no such city");
  EXPECT_EQ(failed.reward, 0.0);  // whatever the plug-in wrote
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
            "rollout.multi_turn.enable needs rollout.multi_turn.tool_config_path (the tools the model may call) or "
            "interaction_config_path (simulated users, tools/interaction.h)");
  multi_turn.set_interaction_config_path(std::string(ROLLOUT_SOURCE_DIR) + "/recipes/tools/gsm8k_interaction.yaml");
  EXPECT_TRUE(LoadMultiTurnTools(multi_turn)->empty());  // simulated users only
  EXPECT_FALSE(LoadMultiTurnInteractions(multi_turn)->empty());
}

// verl's Gsm8kInteraction: the reply's last number against the row's ground truth.
TEST(Interaction, AnswersAsVerlsGsm8kUserDoesAndEndsOnACorrectReply) {
  const InteractionSet interactions =
      LoadInteractionConfig(std::string(ROLLOUT_SOURCE_DIR) + "/recipes/tools/gsm8k_interaction.yaml").value();
  const ordered_json kwargs = {{"name", "gsm8k"}, {"query", "2 + 3?"}, {"ground_truth", "5"}};
  // The conversation so far, its last assistant message the reply to answer.
  const auto replying = [](const std::string& reply) {
    return ordered_json::array({{{"role", "user"}, {"content", "2 + 3?"}},
                                {{"role", "assistant"}, {"content", "It is 5"}},
                                {{"role", "user"}, {"content", "Sure?"}},
                                {{"role", "assistant"}, {"content", reply}}});
  };
  const UserTurn right = interactions.Respond(replying("2 + 3 = 5"), kwargs).value();
  EXPECT_EQ(right.content, "Your response is correct!");
  EXPECT_TRUE(right.ends);
  EXPECT_EQ(right.score, 1.0);
  const UserTurn wrong = interactions.Respond(replying("2 + 3 = 6"), kwargs).value();
  EXPECT_EQ(wrong.content, "Your response is incorrect! You need to reflect on your answer and try again.");
  EXPECT_FALSE(wrong.ends);
  EXPECT_EQ(wrong.score, 0.0);
  EXPECT_EQ(interactions.Respond(replying("no idea"), {{"name", "gsm8k"}, {"ground_truth", 5}})->score, 0.0);
  EXPECT_EQ(interactions.Respond(ordered_json::array(), kwargs)->score, 0.0);  // no reply: verl's ""
}

// The plug-in sits next to the interaction config, which names it by a relative path.
TEST(Interaction, RunsAPlugInCreatedWithItsConfig) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileDurably(dir.Path("libtutor.so"), ReadFile(ECHO_INTERACTION_PLUGIN_PATH).value()).ok());
  const absl::StatusOr<InteractionSet> interactions = LoadInteractionConfig(dir.Write("users.yaml", R"yaml(interaction:
  - name: tutor
    class_name: plugin
    config: {library: libtutor.so, patience: 3}
)yaml"));
  ASSERT_TRUE(interactions.ok()) << interactions.status();
  EXPECT_EQ(interactions->CheckInteractionKwargs({{"name", "tutor"}, {"topic", "sums"}}).message(), "");
  EXPECT_EQ(interactions->CheckInteractionKwargs({{"name", "tutor"}}).message(),
            "for tutor needs a topic to talk about");
  const ordered_json messages = ordered_json::array({{{"role", "user"}, {"content", "2 + 3?"}},
                                                     {{"role", "assistant"}, {"content", "5"}}});
  const UserTurn turn = interactions->Respond(messages, {{"name", "tutor"}, {"topic", "sums"}}).value();
  EXPECT_EQ(turn.content,
            R"(config={"patience":3} messages=[{"role":"user","content":"2 + 3?"},{"role":"assistant","content":"5"}])"
            R"( kwargs={"name":"tutor","topic":"sums"})");
  EXPECT_EQ(turn.score, 0.25);
  EXPECT_FALSE(turn.ends);
  ordered_json goodbye = messages;
  goodbye.push_back({{"role", "assistant"}, {"content", "bye"}});
  EXPECT_TRUE(interactions->Respond(goodbye, {{"name", "tutor"}, {"topic", "sums"}})->ends);
  const ordered_json failing = {{"name", "tutor"}, {"topic", "sums"}, {"fail", true}};
  EXPECT_THAT(interactions->Respond(messages, failing).status().message(),
              HasSubstr("libtutor.so failed (code 3): lost my voice"));
}

TEST(Interaction, NamesWhatKeepsAPlugInFromLoading) {
  testing::TempDir dir;
  const auto error = [&](const std::string& config) {
    const absl::StatusOr<InteractionSet> interactions =
        LoadInteractionConfig(dir.Write("users.yaml", "interaction:\n  - class_name: plugin\n    config: " + config));
    EXPECT_FALSE(interactions.ok());
    return std::string(interactions.status().message());
  };
  EXPECT_THAT(error("{}"),
              HasSubstr("interaction[0]: is a plugin without config.library, the path of its shared library"));
  EXPECT_THAT(error("{library: libnothing.so}"),
              HasSubstr("cannot load interaction plug-in " + dir.Path("libnothing.so")));
  EXPECT_THAT(error("{library: " ECHO_TOOL_PLUGIN_PATH "}"),
              HasSubstr("does not export rollout_interaction_abi_version (see tools/interaction_plugin_api.h)"));
  EXPECT_THAT(error("{library: " ECHO_INTERACTION_PLUGIN_PATH ", refuse: true}"),
              HasSubstr("could not create its interaction: told to refuse"));
}

TEST(Interaction, ChecksARowsInteractionKwargsAndTheConfigFile) {
  testing::TempDir dir;
  const auto load = [&](const std::string& text) { return LoadInteractionConfig(dir.Write("users.yaml", text)); };
  const InteractionSet interactions =
      load("interaction:\n  - class_name: verl.interactions.gsm8k_interaction.Gsm8kInteraction\n"
           "  - {name: strict, class_name: gsm8k}\n")
          .value();
  const auto check = [&](const std::string& kwargs) {
    return std::string(interactions.CheckInteractionKwargs(ordered_json::parse(kwargs)).message());
  };
  EXPECT_EQ(check(R"({"name": "gsm8k", "ground_truth": "5"})"), "");  // named after its class, as verl names it
  EXPECT_EQ(check(R"({"name": "strict", "ground_truth": 5})"), "");
  EXPECT_EQ(check(R"([])"), "must be an object, not array");
  EXPECT_EQ(check(R"({"ground_truth": "5"})"), "needs the string \"name\" of its interaction (one of gsm8k, strict)");
  EXPECT_EQ(check(R"({"name": "math"})"),
            "names math, which rollout.multi_turn.interaction_config_path does not hold (it holds gsm8k, strict)");
  EXPECT_EQ(check(R"({"name": "gsm8k"})"),
            "for gsm8k needs a ground_truth, which the gsm8k interaction scores replies against");
  const auto error = [&](const std::string& text) {
    const absl::StatusOr<InteractionSet> loaded = load(text);
    const std::string message(loaded.status().message());
    return message.substr(message.find("users.yaml") + std::string("users.yaml").size());
  };
  EXPECT_EQ(error("interaction: []"), " has no list of interactions under 'interaction'");
  EXPECT_EQ(error("interaction:\n  - class_name: my.module.WeatherInteraction"),
            ": interaction[0]: no built-in interaction has class_name 'my.module.WeatherInteraction' (Python "
            "interactions cannot be loaded); the built-in interactions: gsm8k, "
            "verl.interactions.gsm8k_interaction.Gsm8kInteraction; your own: class_name plugin "
            "(tools/interaction_plugin_api.h)");
  EXPECT_EQ(error("interaction:\n  - {class_name: gsm8k}\n  - {class_name: gsm8k}"),
            ": interaction[1]: two interactions are named 'gsm8k'");
  EXPECT_EQ(error("interaction:\n  - {class_name: gsm8k, config: {strict: true}}"),
            ": interaction[0]: gsm8k takes no config; got {\"strict\":true}");
  EXPECT_EQ(LoadInteractionConfig(dir.Path("missing.yaml")).status().code(), absl::StatusCode::kNotFound);
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
