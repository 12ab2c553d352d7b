#include "workers/multi_turn_rollout.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/mix_bits.h"
#include "common/status_macros.h"
#include "tools/hermes_tool_calls.h"
#include "tools/tool_response.h"

namespace rollout::workers {
namespace {

// One sample's conversation so far.
struct Sample {
  size_t request = 0;
  size_t index = 0;  // among its request's samples
  RolloutResponse response;
  std::vector<int32_t> last_reply;
  engine::FinishReason last_finish = engine::FinishReason::kNone;
  std::string first_reply_text;
  int32_t replies = 0;
  int32_t user_turns = 0;  // tool turns and simulated users' turns, as verl counts them
  // The conversation after the prompt, as verl's agent loop keeps it for simulated users:
  // each reply (its text without special tokens) and the turns after it, but the last.
  nlohmann::ordered_json history = nlohmann::ordered_json::array();
};

void AppendReply(const engine::Completion& reply, Sample& sample) {
  RolloutResponse& response = sample.response;
  response.tokens.insert(response.tokens.end(), reply.tokens.begin(), reply.tokens.end());
  response.log_probs.insert(response.log_probs.end(), reply.log_probs.begin(), reply.log_probs.end());
  response.generated.insert(response.generated.end(), reply.tokens.size(), true);
  response.finish_reason = engine::FinishReasonName(reply.finish_reason);
  if (sample.replies == 0) sample.first_reply_text = reply.text;
  sample.last_reply = reply.tokens;
  sample.last_finish = reply.finish_reason;
  ++sample.replies;
}

// verl's padding for a request aborted by over-sampling: nothing of it is kept.
void Abort(Sample& sample) {
  sample.response = RolloutResponse();
  sample.response.finish_reason = engine::FinishReasonName(engine::FinishReason::kAbort);
  sample.first_reply_text.clear();
  sample.replies = 0;
  sample.user_turns = 0;
}

// What `conversation` may call: the tools its prompt offers (the controller wrote a
// subset of the tool set's schemas there for rows with a tool_selection), and with its
// row's tools_kwargs.
tools::Trajectory TrajectoryOf(const models::ChatPrompt& conversation) {
  tools::Trajectory trajectory;
  for (const nlohmann::ordered_json& schema : conversation.tools) {
    const auto function = schema.find("function");
    if (function == schema.end() || !function->is_object()) continue;
    const auto name = function->find("name");
    if (name != function->end() && name->is_string()) trajectory.offered.push_back(name->get<std::string>());
  }
  trajectory.tools_kwargs = conversation.tools_kwargs;
  return trajectory;
}

// `message` in OpenAI's chat format.
nlohmann::ordered_json MessageJson(const models::ChatMessage& message) {
  nlohmann::ordered_json json = {{"role", message.role}, {"content", message.content}};
  for (const models::ChatToolCall& call : message.tool_calls) {
    json["tool_calls"].push_back(
        {{"type", "function"}, {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
  }
  return json;
}

// The turn after a reply: a tool turn (its calls' rewards) or a simulated user's (its
// score, and whether the conversation ends with it).
struct NextTurn {
  std::string text;  // what the template writes after the reply's end token, through the next assistant header
  nlohmann::ordered_json messages;  // the reply's and the turn's, for Sample::history
  std::vector<double> tool_rewards;
  std::optional<double> turn_score;
  bool ends = false;
};

// The text the template writes after `sample`'s last reply — messages[reply] in
// `messages`, followed by the turn's messages — up to and including the next assistant
// header: what follows the token that closes the reply there. That is the reply's own
// end token, or, for a reply ended by another of the tokenizer's end tokens (Qwen's
// <|endoftext|>, where the template writes <|im_end|>), the last of them the template
// writes in the reply's part; verl's agent loop, too, appends the next turn whichever
// ended the reply. None when the template writes none of them there.
absl::StatusOr<std::optional<std::string>> TextAfterReply(const Sample& sample,
                                                          const std::vector<models::ChatMessage>& messages,
                                                          size_t reply, const models::ChatPrompt& conversation,
                                                          const models::Tokenizer& tokenizer) {
  const std::string where = absl::StrCat("prompt ", sample.request, " sample ", sample.index, ": the turn after reply ",
                                         sample.replies, ": ");
  absl::StatusOr<models::RenderedChat> rendered = tokenizer.RenderChatWithMessageEnds(messages, conversation.tools);
  absl::StatusOr<std::string> with_header = tokenizer.RenderChat(messages, /*add_generation_prompt=*/true,
                                                                 conversation.tools);
  if (!rendered.ok() || !with_header.ok()) {
    const absl::Status error = rendered.ok() ? with_header.status() : rendered.status();
    return absl::InvalidArgumentError(absl::StrCat(where, error.message()));
  }
  if (!absl::StartsWith(*with_header, rendered->text)) {
    return absl::InternalError(absl::StrCat(where, "the chat template's text with the assistant header does not "
                                                   "begin with its text without it"));
  }
  const size_t reply_begin = reply == 0 ? 0 : rendered->message_ends[reply - 1];
  const size_t reply_end = rendered->message_ends[reply];
  const absl::string_view reply_part = absl::string_view(rendered->text).substr(reply_begin, reply_end - reply_begin);
  std::optional<size_t> closed;  // where the text after the closing token begins in reply_part
  const auto find_close = [&](int32_t token) {
    const std::string text = tokenizer.Decode({token});
    const size_t at = text.empty() ? absl::string_view::npos : reply_part.rfind(text);
    if (at != absl::string_view::npos && (!closed.has_value() || at + text.size() > *closed)) {
      closed = at + text.size();
    }
  };
  find_close(sample.last_reply.back());
  if (!closed.has_value()) {
    for (const int32_t eos : tokenizer.eos_token_ids()) find_close(eos);
  }
  if (!closed.has_value()) return std::nullopt;
  return absl::StrCat(reply_part.substr(*closed), absl::string_view(*with_header).substr(reply_end));
}

// The turn after `sample`'s last reply, as verl's tool agent loop takes it: its calls
// run, their results as tool messages; or, when it calls nothing and the row has a
// simulated user, that user's answer. None when the conversation ends with the reply.
absl::StatusOr<std::optional<NextTurn>> TurnAfter(const Sample& sample, const models::ChatPrompt& conversation,
                                                  const models::Tokenizer& tokenizer, const tools::ToolSet& tools,
                                                  const tools::InteractionSet& interactions,
                                                  const MultiTurnOptions& options) {
  if (conversation.single_turn) return std::nullopt;
  if (sample.last_finish != engine::FinishReason::kEos || sample.last_reply.empty()) return std::nullopt;
  if (options.max_assistant_turns > 0 && sample.replies >= options.max_assistant_turns) return std::nullopt;
  if (options.max_user_turns > 0 && sample.user_turns >= options.max_user_turns) return std::nullopt;
  tools::HermesToolCalls parsed = tools::ParseHermesToolCalls(tokenizer.Decode(sample.last_reply));
  std::vector<models::ChatMessage> messages = conversation.messages;
  const size_t reply = messages.size();
  NextTurn turn;
  const std::string reply_text = tokenizer.Decode(sample.last_reply, /*skip_special_tokens=*/true);
  turn.messages = {{{"role", "assistant"}, {"content", reply_text}}};
  if (!parsed.calls.empty()) {
    if (parsed.calls.size() > static_cast<size_t>(options.max_parallel_calls)) {
      parsed.calls.resize(static_cast<size_t>(options.max_parallel_calls));
    }
    const tools::Trajectory trajectory = TrajectoryOf(conversation);
    messages.push_back(models::ChatMessage{"assistant", "", parsed.calls});
    for (const models::ChatToolCall& call : parsed.calls) {
      tools::ToolResult result = tools.Call(call.name, call.arguments, trajectory);
      messages.push_back({"tool", tools::TruncateToolResponse(result.text, options.max_tool_response_length,
                                                              options.tool_response_truncate_side)});
      turn.messages.push_back(MessageJson(messages.back()));
      turn.tool_rewards.push_back(result.reward);
    }
  } else if (!conversation.interaction_kwargs.empty()) {
    nlohmann::ordered_json so_far = nlohmann::ordered_json::array();
    for (const models::ChatMessage& message : conversation.messages) so_far.push_back(MessageJson(message));
    so_far.insert(so_far.end(), sample.history.begin(), sample.history.end());
    so_far.push_back(turn.messages.back());
    absl::StatusOr<tools::UserTurn> user = interactions.Respond(so_far, conversation.interaction_kwargs);
    if (!user.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("prompt ", sample.request, " sample ", sample.index,
                                                     ": the simulated user: ", user.status().message()));
    }
    messages.push_back(models::ChatMessage{"assistant", reply_text});
    messages.push_back(models::ChatMessage{"user", user->content});
    turn.messages.push_back(MessageJson(messages.back()));
    turn.turn_score = user->score;
    turn.ends = user->ends;
  } else {
    return std::nullopt;
  }
  ASSIGN_OR_RETURN(std::optional<std::string> text, TextAfterReply(sample, messages, reply, conversation, tokenizer));
  if (!text.has_value()) return std::nullopt;
  turn.text = *std::move(text);
  return turn;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<RolloutResponse>>> GenerateMultiTurn(
    const GenerateReplies& generate, const models::Tokenizer& tokenizer, const tools::ToolSet& tools,
    const tools::InteractionSet& interactions, const std::vector<models::ChatPrompt>& conversations,
    const std::vector<engine::GenerationRequest>& requests, const MultiTurnOptions& options) {
  if (conversations.size() != requests.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(conversations.size(), " conversations but ", requests.size(), " requests"));
  }
  ASSIGN_OR_RETURN(std::vector<engine::RequestOutput> outputs, generate(requests));
  std::vector<Sample> samples;
  std::vector<size_t> active;
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t s = 0; s < outputs[i].samples.size(); ++s) {
      Sample sample;
      sample.request = i;
      sample.index = s;
      AppendReply(outputs[i].samples[s], sample);
      active.push_back(samples.size());
      samples.push_back(std::move(sample));
    }
  }
  while (!active.empty()) {
    std::vector<engine::GenerationRequest> next;
    std::vector<size_t> continuing;
    for (const size_t id : active) {
      Sample& sample = samples[id];
      ASSIGN_OR_RETURN(const std::optional<NextTurn> turn,
                       TurnAfter(sample, conversations[sample.request], tokenizer, tools, interactions, options));
      if (!turn.has_value()) continue;
      RolloutResponse& response = sample.response;
      // As verl's tool agent loop: the calls' rewards and the user's score count even
      // when their turn does not fit.
      response.tool_rewards.insert(response.tool_rewards.end(), turn->tool_rewards.begin(), turn->tool_rewards.end());
      if (turn->turn_score.has_value()) response.turn_scores.push_back(*turn->turn_score);
      std::vector<int32_t> turn_ids = tokenizer.Encode(turn->text);
      const int64_t room = options.max_response_length - static_cast<int64_t>(response.tokens.size());
      if (turn->ends) {
        // verl keeps the user's last message (and the header after it), cut to the
        // response length.
        turn_ids.resize(std::min(turn_ids.size(), static_cast<size_t>(std::max<int64_t>(room, 0))));
      } else if (static_cast<int64_t>(turn_ids.size()) >= room) {
        continue;  // as verl's tool agent loop: no turn that leaves no room for a reply
      }
      response.tokens.insert(response.tokens.end(), turn_ids.begin(), turn_ids.end());
      response.log_probs.insert(response.log_probs.end(), turn_ids.size(), 0.0f);
      response.generated.insert(response.generated.end(), turn_ids.size(), false);
      sample.history.insert(sample.history.end(), turn->messages.begin(), turn->messages.end());
      ++sample.user_turns;
      if (turn->ends) continue;
      engine::GenerationRequest request;
      request.prompt = requests[sample.request].prompt;
      request.prompt.insert(request.prompt.end(), response.tokens.begin(), response.tokens.end());
      request.params = requests[sample.request].params;
      request.params.n = 1;
      request.params.max_tokens = options.max_response_length - static_cast<int64_t>(response.tokens.size());
      // Its own stream per sample and turn, so results reproduce.
      request.params.seed =
          MixBits(request.params.seed ^ MixBits(sample.index * kGoldenGamma + static_cast<uint64_t>(sample.replies)));
      next.push_back(std::move(request));
      continuing.push_back(id);
    }
    if (next.empty()) break;
    const int64_t ended = static_cast<int64_t>(samples.size() - continuing.size());
    if (options.finish_target > 0 && ended >= options.finish_target) {
      for (const size_t id : continuing) Abort(samples[id]);
      break;
    }
    ASSIGN_OR_RETURN(outputs, generate(next));
    for (size_t k = 0; k < continuing.size(); ++k) AppendReply(outputs[k].samples[0], samples[continuing[k]]);
    active = std::move(continuing);
  }
  std::vector<std::vector<RolloutResponse>> responses(requests.size());
  for (Sample& sample : samples) {
    RolloutResponse& response = sample.response;
    response.text = sample.user_turns == 0 ? sample.first_reply_text
                                           : tokenizer.Decode(response.tokens, /*skip_special_tokens=*/true);
    response.num_turns = 1 + sample.replies + sample.user_turns;
    responses[sample.request].push_back(std::move(response));
  }
  return responses;
}

}  // namespace rollout::workers
