// `rollout tokenize` end to end: JSON lines through the built binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rollout::testing {
namespace {

using ::testing::HasSubstr;

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `rollout tokenize ARGS < (file holding stdin_text)` through /bin/sh.
Result RunTokenize(const std::vector<std::string>& args, const std::string& stdin_text) {
  TempDir dir("cli_tokenize");
  const std::string input = dir.Write("input.jsonl", stdin_text);
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$0\" tokenize \"$@\" < \"$INPUT\"",
                                   ROLLOUT_BINARY_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  argv[2] = "INPUT='" + input + "'; " + argv[2];
  Subprocess process(argv);
  const int status = process.Wait(60);
  Result result;
  result.output = process.Output();
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

const std::vector<std::string> kFixture = {"--tokenizer", "tests/data/tiny-qwen2"};

std::vector<std::string> With(std::vector<std::string> args, const std::string& flag) {
  args.push_back(flag);
  return args;
}

TEST(RolloutTokenize, EncodesTextObjectsAndBareStrings) {
  Result result = RunTokenize(kFixture, "{\"text\": \"强化学习 训练\"}\n\n\"<|im_end|>\"\n");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "{\"ids\":[410,409]}\n{\"ids\":[2]}\n");
}

TEST(RolloutTokenize, DecodesIdObjectsAndBareLists) {
  Result result =
      RunTokenize(With(kFixture, "--decode"), "{\"ids\": [410, 409]}\n[448, 457, 441]\n");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "{\"text\":\"强化学习 训练\"}\n{\"text\":\"emoji 🚀🔥 ok\"}\n");
}

TEST(RolloutTokenize, RendersChatsWithTheGenerationPrompt) {
  Result result =
      RunTokenize(With(kFixture, "--chat"),
                  "{\"messages\": [{\"role\": \"user\", \"content\": \"What is 2 + 3?\"}]}\n");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output,
            "{\"ids\":[1,87,85,291,201,282,273,287,223,20,315,223,21,33,2,201,1,67,85,85,75,259,"
            "473,86,201],\"text\":\"<|im_start|>user\\nWhat is 2 + 3?<|im_end|>\\n"
            "<|im_start|>assistant\\n\"}\n");
}

TEST(RolloutTokenize, Qwen3FormatWithThinkingOffClosesAnEmptyThinkBlock) {
  Result result = RunTokenize(
      With(With(With(With(kFixture, "--chat"), "--chat_format"), "qwen3"), "--enable_thinking=false"),
      "[{\"role\": \"user\", \"content\": \"Hi\"}]\n");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output,
              HasSubstr("\"text\":\"<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n"
                        "<think>\\n\\n</think>\\n\\n\"}"));
}

TEST(RolloutTokenize, BadLineStopsWithItsNumberAndExitOne) {
  Result result = RunTokenize(kFixture, "\"ok\"\n{\"txt\": 1}\n\"never\"\n");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("{\"ids\":"));
  EXPECT_THAT(result.output, HasSubstr("rollout tokenize: line 2: expected {\"text\": string}"));
  Result chat =
      RunTokenize(With(kFixture, "--chat"), "[{\"role\": \"tool\", \"content\": \"x\"}]\n");
  EXPECT_EQ(chat.exit_code, 1);
  EXPECT_THAT(chat.output, HasSubstr("line 1: message 0 is a tool result; the chatml prompt format does not render tools"));
}

TEST(RolloutTokenize, UsageErrorsExitTwo) {
  EXPECT_EQ(RunTokenize({}, "").exit_code, 2);
  EXPECT_EQ(RunTokenize(With(With(kFixture, "--decode"), "--chat"), "").exit_code, 2);
  Result missing = RunTokenize({"--tokenizer", "/nonexistent/model"}, "");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.output, HasSubstr("/nonexistent/model/tokenizer.json"));
  Result format = RunTokenize(With(With(kFixture, "--chat_format"), "vicuna"), "");
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_THAT(format.output, HasSubstr("unknown prompt format 'vicuna'"));
  Result help = RunTokenize({"--help"}, "");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.output, HasSubstr("usage: rollout tokenize"));
}

}  // namespace
}  // namespace rollout::testing
