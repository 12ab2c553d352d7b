// Which chat messages an SFT or DPO loss trains on: assistant messages unless marked off
// (verl's "trainable", OpenAI's "weight"), never others; bad marks say what is wrong.
#include "common/chat_training_marks.h"

#include <gtest/gtest.h>

#include <string>

namespace rollout {
namespace {

absl::StatusOr<bool> Trains(const std::string& message) { return MessageTrains(nlohmann::json::parse(message)); }

TEST(MessageTrains, AssistantMessagesTrainUnlessMarkedOff) {
  EXPECT_TRUE(Trains(R"({"role": "assistant", "content": "a"})").value());
  EXPECT_TRUE(Trains(R"({"role": "assistant", "content": "a", "trainable": true})").value());
  EXPECT_TRUE(Trains(R"({"role": "assistant", "content": "a", "weight": 1})").value());
  EXPECT_TRUE(Trains(R"({"role": "assistant", "content": "a", "weight": 1.0, "trainable": true})").value());
  EXPECT_FALSE(Trains(R"({"role": "assistant", "content": "a", "trainable": false})").value());
  EXPECT_FALSE(Trains(R"({"role": "assistant", "content": "a", "weight": 0})").value());
}

TEST(MessageTrains, OtherMessagesNeverTrain) {
  EXPECT_FALSE(Trains(R"({"role": "user", "content": "q"})").value());
  EXPECT_FALSE(Trains(R"({"role": "system", "content": "s", "weight": 0})").value());
  EXPECT_FALSE(Trains(R"({"role": "user", "content": "q", "trainable": false})").value());
  EXPECT_EQ(Trains(R"({"role": "user", "content": "q", "trainable": true})").status().message(),
            "a user message is marked to train; only assistant messages train");
  EXPECT_EQ(Trains(R"({"role": "system", "content": "s", "weight": 1})").status().message(),
            "a system message is marked to train; only assistant messages train");
}

TEST(MessageTrains, BadMarksSayWhatIsWrong) {
  EXPECT_EQ(Trains(R"({"role": "assistant", "content": "a", "trainable": 0})").status().message(),
            "\"trainable\" must be true or false, not 0");
  EXPECT_EQ(Trains(R"({"role": "assistant", "content": "a", "weight": "1"})").status().message(),
            "\"weight\" must be 0 or 1, not \"1\"");
  EXPECT_EQ(Trains(R"({"role": "assistant", "content": "a", "weight": 2})").status().message(),
            "\"weight\" must be 0 or 1, not 2");
  EXPECT_EQ(Trains(R"({"role": "assistant", "content": "a", "weight": 0, "trainable": true})").status().message(),
            "\"trainable\": true and \"weight\": 0 disagree");
}

}  // namespace
}  // namespace rollout
