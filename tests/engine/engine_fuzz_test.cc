// The pipelined engine under random requests and random budgets on the CPU (tiny Qwen2
// fixture, float32): tests/engine/engine_fuzz.h says what each trial draws and checks.
#include <gtest/gtest.h>

#include "tests/engine/engine_fuzz.h"
#include "tests/engine/tiny_engine_fixture.h"

namespace rollout::engine {
namespace {

class EngineFuzzTest : public TinyEngineTest {};

TEST_F(EngineFuzzTest, RandomBudgetsGiveTheAmpleEnginesSamplesAndFreeEveryBlock) {
  fuzz::RunTrials(*model_, tokenizer_, /*trials=*/30, /*budgets_per_trial=*/3,
                  /*log_prob_tolerance=*/1e-4);
}

}  // namespace
}  // namespace rollout::engine
