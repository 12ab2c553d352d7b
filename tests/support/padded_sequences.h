// Sequences in verl's layout for tests of the scoring roles (critic, reward model):
// each row a left-padded prompt then a right-padded response, random token ids.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <utility>

#include "common/batch.h"

namespace rollout::testing {

// `rows` rows of `prompt` + `response` positions; `padding(r)` gives row r's prompt
// padding on the left and response padding on the right. Ids in [3, 500) from `seed`.
// Columns input_ids, attention_mask, position_ids, responses, response_mask.
inline Batch PaddedSequences(int64_t rows, int64_t prompt, int64_t response,
                             const std::function<std::pair<int64_t, int64_t>(int64_t row)>& padding,
                             uint64_t seed) {
  at::manual_seed(seed);
  const at::TensorOptions ints = at::TensorOptions().dtype(at::kLong);
  at::Tensor attention = at::ones({rows, prompt + response}, ints);
  for (int64_t r = 0; r < rows; ++r) {
    const auto [left, right] = padding(r);
    attention[r].narrow(0, 0, left).zero_();
    attention[r].narrow(0, prompt + response - right, right).zero_();
  }
  const at::Tensor input_ids = at::randint(3, 500, {rows, prompt + response}, ints) * attention;
  Batch batch;
  EXPECT_TRUE(batch.AddTensor("input_ids", input_ids).ok());
  EXPECT_TRUE(batch.AddTensor("attention_mask", attention).ok());
  EXPECT_TRUE(batch.AddTensor("position_ids", (attention.cumsum(1) - 1).clamp_min(0)).ok());
  EXPECT_TRUE(batch.AddTensor("responses", input_ids.narrow(1, prompt, response).clone()).ok());
  EXPECT_TRUE(batch.AddTensor("response_mask", attention.narrow(1, prompt, response).clone()).ok());
  return batch;
}

}  // namespace rollout::testing
