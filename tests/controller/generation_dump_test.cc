#include "controller/generation_dump.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "tests/support/temp_dir.h"

namespace rollout::controller {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Keys(const nlohmann::ordered_json& line) {
  std::vector<std::string> keys;
  for (const auto& item : line.items()) keys.push_back(item.key());
  return keys;
}

TEST(GenerationDumpLine, HasVerlsKeysInVerlsOrderThenTheExtraValues) {
  GenerationRecord record;
  record.input = "2+3=";
  record.output = "5";
  record.ground_truth = "5";
  record.score = 1;
  record.extra = {{"acc", 1}, {"pred_len", 1}};
  const auto line = nlohmann::ordered_json::parse(GenerationDumpLine(record, 7));
  EXPECT_THAT(Keys(line), ElementsAre("input", "output", "gts", "score", "step", "acc", "pred_len"));
  EXPECT_EQ(line["input"], "2+3=");
  EXPECT_EQ(line["output"], "5");
  EXPECT_EQ(line["gts"], "5");  // a number's text stays a string, as GSM8K's answers in verl's
  EXPECT_EQ(line["score"], 1.0);
  EXPECT_EQ(line["step"], 7);
  EXPECT_EQ(line["acc"], 1.0);
}

TEST(GenerationDumpLine, AStructuredGroundTruthIsWrittenAsJson) {
  GenerationRecord record;
  record.ground_truth = R"({"target":24,"numbers":[3,8,1]})";
  const auto line = nlohmann::json::parse(GenerationDumpLine(record, 1));
  EXPECT_EQ(line["gts"]["target"], 24);
  EXPECT_EQ(line["gts"]["numbers"], nlohmann::json({3, 8, 1}));
  record.ground_truth = "{not json";
  EXPECT_EQ(nlohmann::json::parse(GenerationDumpLine(record, 1))["gts"], "{not json");
}

TEST(GenerationDumpLine, InvalidUtf8IsReplacedAndNonFiniteValuesAreNull) {
  GenerationRecord record;
  record.output = "ok \xe4\xbd";  // a character cut after two of its three bytes
  record.score = std::nan("");
  record.extra = {{"score", 5}, {"ratio", INFINITY}};
  const auto line = nlohmann::json::parse(GenerationDumpLine(record, 1));
  EXPECT_EQ(line["output"], "ok \xef\xbf\xbd");  // U+FFFD
  EXPECT_TRUE(line["score"].is_null());  // the record's, not the extra value's
  EXPECT_TRUE(line["ratio"].is_null());
}

TEST(WriteGenerationDump, WritesOneLineARecordToStepJsonl) {
  testing::TempDir dir("generation_dump");
  std::vector<GenerationRecord> records(3);
  for (size_t i = 0; i < records.size(); ++i) records[i].output = std::to_string(i);
  ASSERT_TRUE(WriteGenerationDump(dir.Path("dumps/val"), 12, records).ok());
  const absl::StatusOr<std::string> text = ReadFile(dir.Path("dumps/val/12.jsonl"));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, GenerationDumpLine(records[0], 12) + "\n" + GenerationDumpLine(records[1], 12) + "\n" +
                       GenerationDumpLine(records[2], 12) + "\n");
  // A later dump of the same step replaces the file.
  ASSERT_TRUE(WriteGenerationDump(dir.Path("dumps/val"), 12, {records[2]}).ok());
  EXPECT_EQ(ReadFile(dir.Path("dumps/val/12.jsonl")).value(), GenerationDumpLine(records[2], 12) + "\n");
}

TEST(WriteGenerationDump, AnUnwritableDirectoryIsAnErrorNamingTheFile) {
  testing::TempDir dir("generation_dump_blocked");
  dir.Write("blocked", "a file where the directory should be");
  const absl::Status written = WriteGenerationDump(dir.Path("blocked"), 3, {GenerationRecord()});
  EXPECT_FALSE(written.ok());
  EXPECT_THAT(std::string(written.message()), ::testing::HasSubstr("writing the generations of step 3 to " +
                                                                   dir.Path("blocked/3.jsonl")));
}

std::vector<GenerationRecord> Responses(const std::string& output_prefix) {
  std::vector<GenerationRecord> records;
  for (const char* input : {"c", "a", "d", "b", "e"}) {
    for (int sample = 0; sample < 2; ++sample) {
      GenerationRecord record;
      record.input = input;
      record.output = output_prefix + input + std::to_string(sample);
      record.score = sample;
      records.push_back(record);
    }
  }
  return records;
}

TEST(GenerationsToLog, TheSamePromptsAtEveryValidationWhateverTheResponses) {
  const std::vector<GenerationSample> first = GenerationsToLog(Responses("early "), 3);
  const std::vector<GenerationSample> later = GenerationsToLog(Responses("late "), 3);
  ASSERT_EQ(first.size(), 3u);
  ASSERT_EQ(later.size(), 3u);
  std::vector<std::string> inputs;
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].input, later[i].input);
    EXPECT_EQ(first[i].output, "early " + first[i].input + std::to_string(static_cast<int>(first[i].score)));
    EXPECT_EQ(later[i].output, "late " + later[i].input + std::to_string(static_cast<int>(later[i].score)));
    inputs.push_back(first[i].input + std::to_string(static_cast<int>(first[i].score)));
  }
  // Shuffled, not the data's order or the sorted one.
  EXPECT_NE(inputs, (std::vector<std::string>{"c0", "c1", "a0"}));
  EXPECT_NE(inputs, (std::vector<std::string>{"a0", "a1", "b0"}));
}

TEST(GenerationsToLog, AtMostWhatTheValidationHas) {
  EXPECT_EQ(GenerationsToLog(Responses(""), 50).size(), 10u);
  EXPECT_TRUE(GenerationsToLog(Responses(""), 0).empty());
  EXPECT_TRUE(GenerationsToLog({}, 4).empty());
}

TEST(GenerationRecords, ComeFromTheStepBatchWithTheScoreSummedOverTokens) {
  PromptExample first, second;
  first.ground_truth = "2";
  second.ground_truth = "4";
  std::vector<rewards::ScoredSample> scored(4);
  scored[1].output.extra = {{"acc", 1}};
  scored[3].output.extra = {{"acc", std::nan("")}};
  Batch batch;
  ASSERT_TRUE(AddGenerationDumpColumns({&first, &second}, /*n=*/2, scored, &batch).ok());
  ASSERT_TRUE(batch.AddStrings("prompt_text", {"1+1=", "1+1=", "2+2=", "2+2="}).ok());
  ASSERT_TRUE(batch.AddStrings("response_text", {"3", "2", "5", "4"}).ok());
  // DAPO's overlong penalty on the last token of row 2, as token_level_scores carry it.
  ASSERT_TRUE(batch.AddTensor("token_level_scores",
                              at::tensor({0.0f, 0.0f, 0.0f, 1.0f, 0.0f, -0.5f, 0.0f, 1.0f}).reshape({4, 2})).ok());
  const absl::StatusOr<std::vector<GenerationRecord>> records = GenerationRecordsOf(batch);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 4u);
  EXPECT_EQ((*records)[2].input, "2+2=");
  EXPECT_EQ((*records)[2].output, "5");
  EXPECT_EQ((*records)[2].ground_truth, "4");
  EXPECT_EQ((*records)[2].score, -0.5);
  EXPECT_EQ((*records)[1].score, 1.0);
  EXPECT_TRUE((*records)[0].extra.empty());
  EXPECT_EQ((*records)[1].extra.at("acc"), 1.0);
  EXPECT_TRUE(std::isnan((*records)[3].extra.at("acc")));
}

TEST(GenerationRecords, ScoresForAnotherNumberOfRowsAreAnError) {
  const PromptExample example;
  Batch batch;
  EXPECT_FALSE(AddGenerationDumpColumns({&example}, /*n=*/2, std::vector<rewards::ScoredSample>(3), &batch).ok());
}

}  // namespace
}  // namespace rollout::controller
