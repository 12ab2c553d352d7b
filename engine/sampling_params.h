// What a generation request asks for, with verl / vLLM's names and defaults
// (rollout.temperature, top_k, top_p, n, response_length -> max_tokens).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace rollout::engine {

struct SamplingParams {
  int32_t n = 1;               // samples per prompt (a GRPO group)
  double temperature = 1.0;    // 0 = greedy
  int64_t top_k = -1;          // <= 0 = off
  double top_p = 1.0;          // 1 = off
  double min_p = 0.0;          // 0 = off
  int64_t max_tokens = 16;     // new tokens per sample
  bool ignore_eos = false;     // benchmarks: always generate max_tokens
  std::vector<std::string> stop;          // stop strings (excluded from the text)
  std::vector<int32_t> stop_token_ids;    // in addition to the tokenizer's EOS ids
  uint64_t seed = 0;           // sample i of the request draws from stream (seed, i)
};

// InvalidArgument naming the field when a value is out of range.
absl::Status ValidateSamplingParams(const SamplingParams& params);

// Why a sample ended; `FinishReasonName` gives the output spelling. kAbort: stopped
// unfinished when enough others had finished (Engine::Generate's finish_target).
enum class FinishReason { kNone, kEos, kStop, kLength, kAbort };
const char* FinishReasonName(FinishReason reason);

}  // namespace rollout::engine
