// Multi-turn rollouts with tools: the loop over replies, tool calls and tool turns, with
// the tiny Qwen2 fixture's tokenizer under Qwen2.5's and Qwen3's whole templates. The
// replies come from a script (the fixture's random weights never call a tool): each
// generate call answers its requests from the script in order and records them. And the
// multi-turn columns of the rollout batch.
#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "tools/builtin_tools.h"
#include "workers/multi_turn_rollout.h"

namespace rollout::workers {
namespace {

using nlohmann::ordered_json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kResponseLength = 600;  // the fixture's 514-token vocabulary spends about a token a character

const char kCall[] =
    "Let me compute.\n<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"3 * 7 + 1\"}}\n"
    "</tool_call>";
const char kToolTurn[] = "\n<|im_start|>user\n<tool_response>\n22\n</tool_response><|im_end|>\n<|im_start|>assistant\n";

std::unique_ptr<models::Tokenizer> Fixture(const std::string& template_file, bool enable_thinking = true) {
  models::TokenizerOptions options;
  options.chat_template = ReadFile("tests/data/" + template_file).value();
  options.enable_thinking = enable_thinking;
  return models::Tokenizer::Load("tests/data/tiny-qwen2", options).value();
}

ordered_json CalculatorSchema() {
  return ordered_json::parse(R"({"type": "function", "function": {"name": "calculator", "description": "Exact )"
                             R"(arithmetic", "parameters": {"type": "object", "properties": {"expression": {"type": )"
                             R"("string"}}, "required": ["expression"]}}})");
}

tools::ToolSet Calculator() {
  tools::ToolSet tools;
  EXPECT_TRUE(tools.Add(CalculatorSchema(), tools::MakeBuiltinTool("calculator", ordered_json::object()).value()).ok());
  return tools;
}

struct ScriptedReply {
  std::string text;
  engine::FinishReason finish = engine::FinishReason::kEos;
  std::string end_token = "<|im_end|>";  // what ends a kEos reply
};

// Answers each request's samples with the next replies of the script.
class ScriptedModel {
 public:
  ScriptedModel(const models::Tokenizer& tokenizer, std::deque<ScriptedReply> script)
      : tokenizer_(tokenizer), script_(std::move(script)) {}

  GenerateReplies AsGenerate() {
    return [this](const std::vector<engine::GenerationRequest>& requests) {
      calls_.push_back(requests);
      std::vector<engine::RequestOutput> outputs;
      for (const engine::GenerationRequest& request : requests) {
        engine::RequestOutput& output = outputs.emplace_back();
        for (int32_t s = 0; s < request.params.n; ++s) {
          EXPECT_FALSE(script_.empty()) << "the loop asked for more replies than the script holds";
          const ScriptedReply reply = script_.empty() ? ScriptedReply{"", engine::FinishReason::kLength} : script_.front();
          if (!script_.empty()) script_.pop_front();
          engine::Completion& completion = output.samples.emplace_back();
          const bool ends = reply.finish == engine::FinishReason::kEos;
          completion.tokens = tokenizer_.Encode(reply.text + (ends ? reply.end_token : ""));
          completion.log_probs.assign(completion.tokens.size(), -0.5f);
          completion.finish_reason = reply.finish;
          completion.text = tokenizer_.Decode(completion.tokens, /*skip_special_tokens=*/true);
        }
      }
      return outputs;
    };
  }

  const std::vector<std::vector<engine::GenerationRequest>>& calls() const { return calls_; }
  bool done() const { return script_.empty(); }

 private:
  const models::Tokenizer& tokenizer_;
  std::deque<ScriptedReply> script_;
  std::vector<std::vector<engine::GenerationRequest>> calls_;
};

struct MultiTurnRun {
  std::vector<int32_t> prompt;
  std::vector<std::vector<RolloutResponse>> responses;
};

MultiTurnRun Generate(const models::Tokenizer& tokenizer, ScriptedModel& model, int32_t n, const MultiTurnOptions& options,
             const std::string& question = "What is 3 * 7 + 1?") {
  models::ChatPrompt conversation{{{"user", question}}, {CalculatorSchema()}};
  engine::GenerationRequest request;
  request.prompt = tokenizer.EncodeChat(conversation.messages, true, conversation.tools).value();
  request.params.n = n;
  request.params.max_tokens = options.max_response_length;
  request.params.seed = 11;
  absl::StatusOr<std::vector<std::vector<RolloutResponse>>> responses =
      GenerateMultiTurn(model.AsGenerate(), tokenizer, Calculator(), {}, {conversation}, {request}, options);
  EXPECT_TRUE(responses.ok()) << responses.status();
  EXPECT_TRUE(model.done()) << "the loop stopped before the script's end";
  return MultiTurnRun{request.prompt, responses.value_or(std::vector<std::vector<RolloutResponse>>{})};
}

MultiTurnOptions Options() {
  MultiTurnOptions options;
  options.max_response_length = kResponseLength;
  return options;
}

// The tokens of `response` that are (generated) or are not (!generated) the model's.
std::string Part(const models::Tokenizer& tokenizer, const RolloutResponse& response, bool generated) {
  std::vector<int32_t> ids;
  for (size_t t = 0; t < response.tokens.size(); ++t) {
    if (response.generated[t] == generated) ids.push_back(response.tokens[t]);
  }
  return tokenizer.Decode(ids);
}

TEST(MultiTurnRollout, AResponseReadsAsTheTemplateRendersTheWholeConversation) {
  const auto tokenizer = Fixture("qwen2.5_chat_template.jinja");
  ScriptedModel model(*tokenizer, {{kCall}, {"The answer is 22."}});
  const MultiTurnRun run = Generate(*tokenizer, model, 1, Options());
  ASSERT_EQ(run.responses.size(), 1u);
  ASSERT_EQ(run.responses[0].size(), 1u);
  const RolloutResponse& response = run.responses[0][0];

  std::vector<models::ChatMessage> whole = {
      {"user", "What is 3 * 7 + 1?"},
      {"assistant", "Let me compute.", {{"calculator", ordered_json{{"expression", "3 * 7 + 1"}}}}},
      {"tool", "22"},
      {"assistant", "The answer is 22."}};
  std::vector<int32_t> sequence = run.prompt;
  sequence.insert(sequence.end(), response.tokens.begin(), response.tokens.end());
  // The template ends the last reply with "<|im_end|>\n"; the model stopped at its end token.
  EXPECT_EQ(tokenizer->Decode(sequence) + "\n", tokenizer->RenderChat(whole, false, {CalculatorSchema()}).value());

  EXPECT_EQ(Part(*tokenizer, response, false), kToolTurn);
  EXPECT_EQ(Part(*tokenizer, response, true), std::string(kCall) + "<|im_end|>The answer is 22.<|im_end|>");
  for (size_t t = 0; t < response.tokens.size(); ++t) {
    EXPECT_EQ(response.log_probs[t], response.generated[t] ? -0.5f : 0.0f) << t;
  }
  EXPECT_EQ(response.num_turns, 4);  // the prompt, two replies, one tool turn
  EXPECT_EQ(response.finish_reason, "eos");
  EXPECT_THAT(response.text, HasSubstr("</tool_call>\nuser\n<tool_response>\n22\n</tool_response>\nassistant\n"));
  EXPECT_THAT(response.text, ::testing::EndsWith("The answer is 22."));

  // The second reply continued the conversation so far, in the room left.
  ASSERT_EQ(model.calls().size(), 2u);
  const engine::GenerationRequest& second = model.calls()[1].at(0);
  const size_t so_far = response.tokens.size() - tokenizer->Encode("The answer is 22.<|im_end|>").size();
  std::vector<int32_t> expected_prompt = run.prompt;
  expected_prompt.insert(expected_prompt.end(), response.tokens.begin(), response.tokens.begin() + so_far);
  EXPECT_EQ(second.prompt, expected_prompt);
  EXPECT_EQ(second.params.n, 1);
  EXPECT_EQ(second.params.max_tokens, kResponseLength - static_cast<int64_t>(so_far));
  EXPECT_NE(second.params.seed, 11u);
}

TEST(MultiTurnRollout, Qwen3sToolTurnEndsWithItsGenerationPrompt) {
  const auto tokenizer = Fixture("qwen3_chat_template.jinja", /*enable_thinking=*/false);
  ScriptedModel model(*tokenizer, {{kCall}, {"22"}});
  const MultiTurnRun run = Generate(*tokenizer, model, 1, Options());
  EXPECT_EQ(Part(*tokenizer, run.responses.at(0).at(0), false),
            "\n<|im_start|>user\n<tool_response>\n22\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
            "<think>\n\n</think>\n\n");
}

TEST(MultiTurnRollout, EachSampleOfAGroupGoesItsOwnWay) {
  const auto tokenizer = Fixture("qwen2.5_chat_template.jinja");
  const std::string two_calls = std::string(kCall) +
                                "\n<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2\"}}\n"
                                "</tool_call>";
  // Sample 0 calls twice in one reply (one call runs: max_parallel_calls 1), then again;
  // sample 1 answers at once; sample 2 calls once.
  ScriptedModel model(*tokenizer, {{two_calls}, {"22"}, {kCall}, {kCall}, {"done"}, {"22"}});
  const MultiTurnRun run = Generate(*tokenizer, model, 3, Options());
  ASSERT_EQ(run.responses.at(0).size(), 3u);
  const std::vector<RolloutResponse>& samples = run.responses[0];
  EXPECT_EQ(samples[0].num_turns, 6);
  EXPECT_EQ(samples[1].num_turns, 2);
  EXPECT_EQ(samples[2].num_turns, 4);
  EXPECT_EQ(Part(*tokenizer, samples[0], false), std::string(kToolTurn) + kToolTurn);  // 22 once per turn
  EXPECT_EQ(samples[1].text, "22");
  EXPECT_EQ(Part(*tokenizer, samples[2], true), std::string(kCall) + "<|im_end|>done<|im_end|>");
  // Three calls of the model: the group, then samples 0 and 2, then sample 0.
  ASSERT_EQ(model.calls().size(), 3u);
  EXPECT_EQ(model.calls()[1].size(), 2u);
  EXPECT_EQ(model.calls()[2].size(), 1u);
  EXPECT_NE(model.calls()[1][0].params.seed, model.calls()[1][1].params.seed);
}

// finish_target (verl's rollout.over_sample_rate): the conversations still going when
// a round leaves enough of them ended come back empty, as aborted.
TEST(MultiTurnRollout, AbortsTheConversationsStillGoingOnceEnoughHaveEnded) {
  const auto tokenizer = Fixture("qwen2.5_chat_template.jinja");
  const auto expect_aborted = [](const RolloutResponse& response) {
    EXPECT_TRUE(response.tokens.empty());
    EXPECT_TRUE(response.log_probs.empty());
    EXPECT_TRUE(response.generated.empty());
    EXPECT_TRUE(response.tool_rewards.empty());
    EXPECT_EQ(response.text, "");
    EXPECT_EQ(response.finish_reason, "abort");
    EXPECT_EQ(response.num_turns, 1);
  };
  MultiTurnOptions options = Options();
  {
    // Sample 1 answers in the first round: with a target of 1 the two calling are aborted.
    options.finish_target = 1;
    ScriptedModel model(*tokenizer, {{kCall}, {"22"}, {kCall}});
    const MultiTurnRun run = Generate(*tokenizer, model, 3, options);
    ASSERT_EQ(run.responses.at(0).size(), 3u);
    expect_aborted(run.responses[0][0]);
    EXPECT_EQ(run.responses[0][1].text, "22");
    EXPECT_EQ(run.responses[0][1].num_turns, 2);
    expect_aborted(run.responses[0][2]);
    EXPECT_EQ(model.calls().size(), 1u);
  }
  {
    // Target 2: sample 2 ends in the second round, sample 0 (calling again) is aborted.
    options.finish_target = 2;
    ScriptedModel model(*tokenizer, {{kCall}, {"22"}, {kCall}, {kCall}, {"done"}});
    const MultiTurnRun run = Generate(*tokenizer, model, 3, options);
    ASSERT_EQ(run.responses.at(0).size(), 3u);
    expect_aborted(run.responses[0][0]);
    EXPECT_EQ(run.responses[0][1].num_turns, 2);
    EXPECT_EQ(run.responses[0][2].num_turns, 4);
    EXPECT_EQ(run.responses[0][2].finish_reason, "eos");
    EXPECT_EQ(model.calls().size(), 2u);
  }
}

TEST(MultiTurnRollout, RunsAsManyCallsAsMaxParallelCallsAllows) {
  const auto tokenizer = Fixture("qwen2.5_chat_template.jinja");
  const std::string two_calls = std::string(kCall) +
                                "\n<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2\"}}\n"
                                "</tool_call>";
  ScriptedModel model(*tokenizer, {{two_calls}, {"done"}});
  MultiTurnOptions options = Options();
  options.max_parallel_calls = 2;
  const MultiTurnRun run = Generate(*tokenizer, model, 1, options);
  EXPECT_EQ(Part(*tokenizer, run.responses.at(0).at(0), false),
            "\n<|im_start|>user\n<tool_response>\n22\n</tool_response>\n<tool_response>\n2\n</tool_response>"
            "<|im_end|>\n<|im_start|>assistant\n");
}

// Each conversation calls with its own row's tools_kwargs, and only the tools its
// prompt offers (a row's tool_selection).
TEST(MultiTurnRollout, CallsToolsWithEachRowsToolsKwargsAndOnlyTheToolsItsPromptOffers) {
  const auto tokenizer = Fixture("qwen2.5_chat_template.jinja");
  const ordered_json gsm8k_schema =
      ordered_json::parse(R"({"type": "function", "function": {"name": "calc_gsm8k_reward", "parameters": )"
                          R"({"type": "object", "properties": {"answer": {"type": "string"}}}}})");
  tools::ToolSet tools = Calculator();
  ASSERT_TRUE(tools.Add(gsm8k_schema, tools::MakeBuiltinTool("gsm8k", ordered_json::object()).value()).ok());
  const auto tools_kwargs = [](const std::string& ground_truth) {
    return ordered_json{{"calc_gsm8k_reward", {{"create_kwargs", {{"ground_truth", ground_truth}}}}}};
  };
  const std::vector<models::ChatPrompt> conversations = {
      {{{"user", "What is 3 * 7 + 1?"}}, {CalculatorSchema(), gsm8k_schema}, tools_kwargs("22")},
      {{{"user", "What is 2 + 3?"}}, {gsm8k_schema}, tools_kwargs("5")}};
  std::vector<engine::GenerationRequest> requests;
  for (const models::ChatPrompt& conversation : conversations) {
    engine::GenerationRequest& request = requests.emplace_back();
    request.prompt = tokenizer->EncodeChat(conversation.messages, true, conversation.tools).value();
    request.params.max_tokens = kResponseLength;
  }
  const auto answer = [](const std::string& value) {
    return "<tool_call>\n{\"name\": \"calc_gsm8k_reward\", \"arguments\": {\"answer\": \"" + value +
           "\"}}\n</tool_call>";
  };
  ScriptedModel model(*tokenizer, {{answer("21")}, {kCall}, {"done"}, {answer("5")}, {"done"}});
  absl::StatusOr<std::vector<std::vector<RolloutResponse>>> responses =
      GenerateMultiTurn(model.AsGenerate(), *tokenizer, tools, {}, conversations, requests, Options());
  ASSERT_TRUE(responses.ok()) << responses.status();
  EXPECT_TRUE(model.done());
  const auto tool_turn = [](const std::string& result) {
    return "\n<|im_start|>user\n<tool_response>\n" + result +
           "\n</tool_response><|im_end|>\n<|im_start|>assistant\n";
  };
  EXPECT_EQ(Part(*tokenizer, responses->at(0).at(0), false), tool_turn("Current parsed answer='21' reward=0.0"));
  EXPECT_EQ(Part(*tokenizer, responses->at(1).at(0), false),
            tool_turn("Error when executing tool: no tool is named 'calculator' (the tools: calc_gsm8k_reward)") +
                tool_turn("Current parsed answer='5' reward=1.0"));
  // Each call's reward, for the reward function's extra_info.tool_rewards.
  EXPECT_THAT(responses->at(0).at(0).tool_rewards, ElementsAre(-0.05));
  EXPECT_THAT(responses->at(1).at(0).tool_rewards, ElementsAre(0.0, 0.0));
}

// The batch carries a multi-turn rollout's turns, tool rewards and turn scores per row;
// a single-turn rollout's has none of these columns.
TEST(MultiTurnRollout, TheBatchCarriesEachRowsTurnsToolRewardsAndTurnScores) {
  RolloutResponse called{{5, 6, 7}, {-0.5f, 0.0f, -0.5f}, {true, false, true}, "a", "stop", 4, {-0.05}, {}};
  RolloutResponse quiet{{5}, {-0.5f}, {true}, "b", "stop", 2, {}, {0.0}};
  RolloutLayout layout;
  layout.max_prompt_length = 2;
  layout.max_response_length = 4;
  const Batch batch = BuildRolloutBatch({{1, 2}}, {{called, quiet}}, layout).value();
  EXPECT_EQ(batch.Tensor("num_turns").value().sum().item<int64_t>(), 6);
  EXPECT_THAT(batch.Strings("tool_rewards").value(), ElementsAre("[-0.05]", "[]"));
  EXPECT_THAT(batch.Strings("turn_scores").value(), ElementsAre("[]", "[0.0]"));
  called.num_turns = quiet.num_turns = 0;
  called.tool_rewards.clear();
  quiet.turn_scores.clear();
  const Batch single_turn = BuildRolloutBatch({{1, 2}}, {{called, quiet}}, layout).value();
  EXPECT_FALSE(single_turn.HasTensor("num_turns"));
  EXPECT_FALSE(single_turn.HasStrings("tool_rewards"));
  EXPECT_FALSE(single_turn.HasStrings("turn_scores"));
}

// A reply that calls nothing is answered by the row's simulated user (verl's GSM8K
// interaction) until it is right or the turns run out; a tool call still runs first.
TEST(MultiTurnRollout, ASimulatedUserAnswersRepliesThatCallNothingUntilOneIsRight) {
  const auto tokenizer = Fixture("qwen2.5_chat_template.jinja");
  const tools::InteractionSet users =
      tools::LoadInteractionConfig("recipes/tools/gsm8k_interaction.yaml").value();
  models::ChatPrompt conversation{{{"user", "What is 3 * 7 + 1?"}}, {CalculatorSchema()}};
  conversation.interaction_kwargs = {{"name", "gsm8k"}, {"ground_truth", "22"}};
  engine::GenerationRequest request;
  request.prompt = tokenizer->EncodeChat(conversation.messages, true, conversation.tools).value();
  request.params.max_tokens = kResponseLength;
  const auto user_turn = [](const std::string& content) {
    return "\n<|im_start|>user\n" + content + "<|im_end|>\n<|im_start|>assistant\n";
  };
  {
    // (verl's flexible rule reads "22." as the answer "22.", so the last reply has no period.)
    ScriptedModel model(*tokenizer, {{"It is 21."}, {kCall}, {"So it is 22"}});
    absl::StatusOr<std::vector<std::vector<RolloutResponse>>> responses =
        GenerateMultiTurn(model.AsGenerate(), *tokenizer, Calculator(), users, {conversation}, {request}, Options());
    ASSERT_TRUE(responses.ok()) << responses.status();
    EXPECT_TRUE(model.done());
    const RolloutResponse& response = responses->at(0).at(0);
    EXPECT_EQ(Part(*tokenizer, response, false),
              user_turn("Your response is incorrect! You need to reflect on your answer and try again.") + kToolTurn +
                  user_turn("Your response is correct!"));
    EXPECT_THAT(response.turn_scores, ElementsAre(0.0, 1.0));
    EXPECT_THAT(response.tool_rewards, ElementsAre(0.0));
    EXPECT_EQ(response.num_turns, 7);  // the prompt, three replies, three user and tool turns
  }
  {  // max_user_turns counts the user's turns with the tools'.
    ScriptedModel model(*tokenizer, {{"It is 21."}, {"It is 20."}});
    MultiTurnOptions options = Options();
    options.max_user_turns = 1;
    const RolloutResponse response =
        GenerateMultiTurn(model.AsGenerate(), *tokenizer, Calculator(), users, {conversation}, {request}, options)
            ->at(0)
            .at(0);
    EXPECT_TRUE(model.done());
    EXPECT_THAT(response.turn_scores, ElementsAre(0.0));
    EXPECT_EQ(response.num_turns, 4);
  }
}

TEST(MultiTurnRollout, ShowsToolErrorsCutToMaxToolResponseLength) {
  const auto tokenizer = Fixture("qwen2.5_chat_template.jinja");
  ScriptedModel model(*tokenizer, {{"<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>"},
                                   {"ok"}});
  MultiTurnOptions options = Options();
  options.max_tool_response_length = 20;
  const MultiTurnRun run = Generate(*tokenizer, model, 1, options);
  EXPECT_EQ(Part(*tokenizer, run.responses.at(0).at(0), false),
            "\n<|im_start|>user\n<tool_response>\nError when...(truncated)...alculator)\n</tool_response>"
            "<|im_end|>\n<|im_start|>assistant\n");
}

TEST(MultiTurnRollout, StopsAtTheTurnLimitTheResponseLengthAndRepliesThatDoNotEndTheirTurn) {
  const auto tokenizer = Fixture("qwen2.5_chat_template.jinja");
  {  // max_assistant_turns: the call is not run.
    ScriptedModel model(*tokenizer, {{kCall}});
    MultiTurnOptions options = Options();
    options.max_assistant_turns = 1;
    const MultiTurnRun run = Generate(*tokenizer, model, 1, options);
    EXPECT_EQ(run.responses.at(0).at(0).num_turns, 2);
  }
  {  // max_user_turns: the tool turns it allows, then the reply after the last ends it.
    ScriptedModel model(*tokenizer, {{kCall}, {kCall}});
    MultiTurnOptions options = Options();
    options.max_user_turns = 1;
    const MultiTurnRun run = Generate(*tokenizer, model, 1, options);
    EXPECT_EQ(run.responses.at(0).at(0).num_turns, 4);  // the prompt, two replies, one tool turn
  }
  {  // No room for the tool turn and a reply after it.
    ScriptedModel model(*tokenizer, {{kCall}});
    MultiTurnOptions options = Options();
    options.max_response_length =
        static_cast<int64_t>(tokenizer->Encode(std::string(kCall) + "<|im_end|>" + kToolTurn).size());
    const MultiTurnRun run = Generate(*tokenizer, model, 1, options);
    EXPECT_EQ(run.responses.at(0).at(0).num_turns, 2);
    EXPECT_TRUE(std::all_of(run.responses[0][0].generated.begin(), run.responses[0][0].generated.end(),
                            [](bool generated) { return generated; }));
  }
  {  // Cut off by max_tokens.
    ScriptedModel model(*tokenizer, {{kCall, engine::FinishReason::kLength}});
    const MultiTurnRun run = Generate(*tokenizer, model, 1, Options());
    EXPECT_EQ(run.responses.at(0).at(0).num_turns, 2);
    EXPECT_EQ(run.responses.at(0).at(0).finish_reason, "length");
  }
}

// A reply ended by an end token the template does not close replies with (a Qwen
// model's <|endoftext|>; the template writes <|im_end|>) goes on as verl's agent loop
// goes on: the turn after it is what the template writes after its closing token.
TEST(MultiTurnRollout, AReplyEndedByAnotherEndTokenGoesOnToItsNextTurn) {
  const auto tokenizer = Fixture("qwen2.5_chat_template.jinja");
  ScriptedModel model(*tokenizer, {{kCall, engine::FinishReason::kEos, "<|endoftext|>"}, {"It is 22."}});
  const RolloutResponse response = Generate(*tokenizer, model, 1, Options()).responses.at(0).at(0);
  EXPECT_EQ(tokenizer->Decode(response.tokens),
            std::string(kCall) + "<|endoftext|>" + kToolTurn + "It is 22.<|im_end|>");
  EXPECT_EQ(response.num_turns, 4);
}

// A row of verl's single_turn_agent gets one reply, whatever it says.
TEST(MultiTurnRollout, ARowOfTheSingleTurnAgentGetsOneReply) {
  const auto tokenizer = Fixture("qwen2.5_chat_template.jinja");
  models::ChatPrompt conversation;
  conversation.messages = {{"user", "What is 3 * 7 + 1?"}};
  conversation.single_turn = true;
  engine::GenerationRequest request;
  request.prompt = tokenizer->EncodeChat(conversation.messages, true).value();
  request.params.max_tokens = kResponseLength;
  ScriptedModel model(*tokenizer, {{kCall}});
  const RolloutResponse response =
      GenerateMultiTurn(model.AsGenerate(), *tokenizer, Calculator(), {}, {conversation}, {request}, Options())
          ->at(0)
          .at(0);
  EXPECT_TRUE(model.done());
  EXPECT_EQ(response.num_turns, 2);
  EXPECT_TRUE(response.tool_rewards.empty());
}

// A simulated user sees the conversation as verl's agent loop keeps it: the prompt's
// messages, each reply's text, the tool results and its own earlier answers.
TEST(MultiTurnRollout, ASimulatedUserSeesTheConversationSoFar) {
  class RecordingUser : public tools::Interaction {
   public:
    explicit RecordingUser(std::vector<ordered_json>& seen) : seen_(seen) {}
    absl::StatusOr<tools::UserTurn> Respond(const ordered_json& messages, const ordered_json&) const override {
      seen_.push_back(messages);
      return tools::UserTurn{"Again?", /*ends=*/seen_.size() == 2, /*score=*/0};
    }

   private:
    std::vector<ordered_json>& seen_;
  };
  const auto tokenizer = Fixture("qwen2.5_chat_template.jinja");
  std::vector<ordered_json> seen;
  tools::InteractionSet users;
  ASSERT_TRUE(users.Add("echo", std::make_unique<RecordingUser>(seen)).ok());
  models::ChatPrompt conversation{{{"system", "Be brief."}, {"user", "What is 3 * 7 + 1?"}}, {CalculatorSchema()}};
  conversation.interaction_kwargs = {{"name", "echo"}};
  engine::GenerationRequest request;
  request.prompt = tokenizer->EncodeChat(conversation.messages, true, conversation.tools).value();
  request.params.max_tokens = kResponseLength;
  ScriptedModel model(*tokenizer, {{kCall}, {"It is 22."}, {"Yes, 22."}});
  ASSERT_TRUE(GenerateMultiTurn(model.AsGenerate(), *tokenizer, Calculator(), users, {conversation}, {request},
                                Options())
                  .ok());
  EXPECT_TRUE(model.done());
  ASSERT_EQ(seen.size(), 2u);
  const ordered_json prompt = ordered_json::parse(
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 3 * 7 + 1?"}])");
  ordered_json first = prompt;
  first.push_back({{"role", "assistant"}, {"content", kCall}});
  first.push_back({{"role", "tool"}, {"content", "22"}});
  first.push_back({{"role", "assistant"}, {"content", "It is 22."}});
  EXPECT_EQ(seen[0], first);
  ordered_json second = first;
  second.push_back({{"role", "user"}, {"content", "Again?"}});
  second.push_back({{"role", "assistant"}, {"content", "Yes, 22."}});
  EXPECT_EQ(seen[1], second);
}

}  // namespace
}  // namespace rollout::workers
