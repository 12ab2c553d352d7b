// Multi-turn rollouts with tools and simulated users (verl's rollout.multi_turn, its
// tool agent loop): the model replies; when its reply ends with an end token (any of
// the tokenizer's, as verl's loop takes any) and calls tools (Hermes' <tool_call>
// blocks, tools/hermes_tool_calls.h), the tools run, their results are appended as the
// chat template writes tool messages (with the next assistant header), and the model
// goes on from there. A reply that calls nothing is answered, when its row has a
// simulated user (interaction_kwargs, tools/interaction.h), by that user's message,
// written the same way (the user sees the conversation so far as verl's loop keeps its
// messages); the user may end the conversation with it. A response ends when a reply
// calls nothing and has no user to answer it, ends otherwise (length),
// max_assistant_turns replies or max_user_turns tool and user turns were made (verl
// counts both as user turns), or the next turn would not leave room in
// max_response_length (a user's last message is kept, cut to fit, as verl keeps it). A
// row of verl's single_turn_agent (ChatPrompt::single_turn) gets one reply.
//
// A sample's response is all of it: its replies and the turns between them, whose
// tokens are marked not generated (response_mask 0, rollout log-prob 0). Each such
// turn's tokens are the text the template writes after the reply's end token up to and
// including the next assistant header, so the response reads as the template would
// render the whole conversation. Each tool call's reward and each user turn's score are
// kept (RolloutResponse::tool_rewards, turn_scores). Later turns are new engine
// requests holding the conversation so far; the engine's prefix cache
// (rollout.enable_prefix_caching) spares recomputing it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "models/json_prompt.h"
#include "models/tokenizer.h"
#include "tools/interaction.h"
#include "tools/tool.h"
#include "workers/rollout_batch.h"

namespace rollout::workers {

struct MultiTurnOptions {
  int32_t max_assistant_turns = 0;  // 0: as many as the response length holds
  int32_t max_user_turns = 0;       // tool and user turns; 0: as many as the response length holds
  int32_t max_parallel_calls = 1;
  int32_t max_tool_response_length = 256;
  std::string tool_response_truncate_side = "middle";
  int64_t max_response_length = 512;  // R, data.max_response_length
  // > 0 (verl's rollout.over_sample_rate): once, after a round of replies, at least this
  // many samples' conversations have ended, the others are aborted: each comes back
  // empty (no tokens, tool rewards or turn scores; num_turns 1, finish_reason "abort").
  // The check runs between rounds: a conversation is not known to end before its reply
  // is read.
  int64_t finish_target = 0;
};

// What generates the replies: the rollout engine's Generate().
using GenerateReplies = std::function<absl::StatusOr<std::vector<engine::RequestOutput>>(
    const std::vector<engine::GenerationRequest>&)>;

// Generates requests[i] (its params.n samples; its prompt the rendering of
// conversations[i], which offers the tools) to completion, turn by turn: the first
// replies from `requests`, each later one from a request of one sample whose prompt is
// the request's prompt followed by the response so far, with the request's sampling,
// max_tokens the room left and a seed of its own per sample and turn. A conversation's
// interaction_kwargs (empty: no simulated user) name its user in `interactions`.
// Returns per request its samples' responses, with num_turns as verl counts them: 1 (the
// prompt) + the model's turns + the tool and user turns. `generate`'s errors;
// InvalidArgument when the template cannot render a turn after a reply or the
// conversation's user cannot answer.
absl::StatusOr<std::vector<std::vector<RolloutResponse>>> GenerateMultiTurn(
    const GenerateReplies& generate, const models::Tokenizer& tokenizer, const tools::ToolSet& tools,
    const tools::InteractionSet& interactions, const std::vector<models::ChatPrompt>& conversations,
    const std::vector<engine::GenerationRequest>& requests, const MultiTurnOptions& options);

}  // namespace rollout::workers
