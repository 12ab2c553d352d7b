// The training dataloader: seeded per-epoch shuffling, drop-last batches, positions
// saved and restored; and validation batches.
#include "controller/dataloader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

namespace rollout::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

DataLoader MakeLoader(int64_t num_examples, int64_t batch_size, bool shuffle = true,
                      int64_t seed = 1) {
  DataLoaderOptions options;
  options.batch_size = batch_size;
  options.shuffle = shuffle;
  options.seed = seed;
  return DataLoader::Create(num_examples, options).value();
}

std::vector<std::vector<int64_t>> TakeBatches(DataLoader& loader, int count) {
  std::vector<std::vector<int64_t>> batches;
  for (int i = 0; i < count; ++i) batches.push_back(loader.Next());
  return batches;
}

// The indices of one epoch (steps_per_epoch batches), concatenated.
std::vector<int64_t> TakeEpoch(DataLoader& loader) {
  std::vector<int64_t> indices;
  for (const std::vector<int64_t>& batch : TakeBatches(loader, loader.steps_per_epoch())) {
    indices.insert(indices.end(), batch.begin(), batch.end());
  }
  return indices;
}

TEST(DataLoader, WithoutShuffleEveryEpochIsFileOrder) {
  DataLoader loader = MakeLoader(6, 2, /*shuffle=*/false);
  EXPECT_THAT(TakeBatches(loader, 4),
              ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3), ElementsAre(4, 5),
                          ElementsAre(0, 1)));
}

TEST(DataLoader, DropsTheLastIncompleteBatchOfEachEpoch) {
  DataLoader loader = MakeLoader(10, 3, /*shuffle=*/false);
  EXPECT_EQ(loader.steps_per_epoch(), 3);
  EXPECT_EQ(TakeEpoch(loader), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(loader.position().epoch, 1);
  EXPECT_EQ(loader.position().batch_in_epoch, 0);
  EXPECT_THAT(loader.Next(), ElementsAre(0, 1, 2));
}

TEST(DataLoader, ShuffledEpochVisitsDistinctExamples) {
  DataLoader loader = MakeLoader(100, 7);
  for (int epoch = 0; epoch < 3; ++epoch) {
    const std::vector<int64_t> indices = TakeEpoch(loader);
    ASSERT_EQ(indices.size(), 98u);  // 14 batches of 7; 2 examples sit out
    const std::set<int64_t> distinct(indices.begin(), indices.end());
    EXPECT_EQ(distinct.size(), 98u);
    EXPECT_GE(*distinct.begin(), 0);
    EXPECT_LT(*distinct.rbegin(), 100);
  }
}

TEST(DataLoader, ShuffleIsReproducibleForASeedAndDiffersAcrossSeedsAndEpochs) {
  DataLoader first = MakeLoader(50, 10, true, 7);
  DataLoader again = MakeLoader(50, 10, true, 7);
  DataLoader other_seed = MakeLoader(50, 10, true, 8);
  const std::vector<int64_t> epoch0 = TakeEpoch(first);
  const std::vector<int64_t> epoch1 = TakeEpoch(first);
  EXPECT_EQ(TakeEpoch(again), epoch0);
  EXPECT_EQ(TakeEpoch(again), epoch1);
  EXPECT_NE(epoch0, epoch1);
  EXPECT_NE(TakeEpoch(other_seed), epoch0);
  std::vector<int64_t> file_order(50);
  std::iota(file_order.begin(), file_order.end(), 0);
  EXPECT_NE(epoch0, file_order);
}

// Golden orders from an independent Python implementation of std::seed_seq,
// std::mt19937_64 (checked against the standard's 10000th-output value) and the
// Fisher–Yates shuffle described in dataloader.h. A change here breaks resuming
// checkpoints written by earlier builds.
TEST(DataLoader, ShuffledOrdersMatchTheReferenceImplementation) {
  DataLoader seed1 = MakeLoader(10, 10, true, 1);
  EXPECT_THAT(seed1.Next(), ElementsAre(2, 1, 8, 9, 6, 7, 3, 5, 0, 4));
  EXPECT_THAT(seed1.Next(), ElementsAre(4, 6, 2, 3, 7, 9, 0, 8, 5, 1));
  EXPECT_THAT(MakeLoader(10, 10, true, 42).Next(), ElementsAre(0, 6, 5, 1, 3, 9, 7, 8, 4, 2));
}

TEST(DataLoader, ShuffleReachesEveryOrderOfThree) {
  std::set<std::vector<int64_t>> orders;
  for (int64_t seed = 0; seed < 300; ++seed) orders.insert(MakeLoader(3, 3, true, seed).Next());
  EXPECT_EQ(orders.size(), 6u);
}

TEST(DataLoader, BatchLargerThanDatasetIsInvalidArgumentNamingBoth) {
  DataLoaderOptions options;
  options.batch_size = 64;
  const absl::StatusOr<DataLoader> loader = DataLoader::Create(10, options);
  EXPECT_EQ(loader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(loader.status().message(), HasSubstr("64"));
  EXPECT_THAT(loader.status().message(), HasSubstr("10 examples"));
  options.batch_size = 0;
  EXPECT_EQ(DataLoader::Create(10, options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DataLoader, BatchOfTheWholeDatasetGivesOneStepPerEpoch) {
  DataLoader loader = MakeLoader(4, 4);
  EXPECT_EQ(loader.steps_per_epoch(), 1);
  std::vector<int64_t> batch = loader.Next();
  std::sort(batch.begin(), batch.end());
  EXPECT_THAT(batch, ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(loader.position().epoch, 1);
}

// Saves after `steps` batches, restores into a fresh loader, and expects the next
// batches (across later epochs) to be what the uninterrupted loader gives.
void ExpectResumeMatches(int steps) {
  DataLoader uninterrupted = MakeLoader(23, 5, true, 3);
  TakeBatches(uninterrupted, steps);
  const std::string saved = uninterrupted.position().ToJson();
  DataLoader resumed = MakeLoader(23, 5, true, 3);
  ASSERT_TRUE(resumed.Restore(DataLoader::Position::FromJson(saved).value()).ok());
  EXPECT_EQ(TakeBatches(resumed, 10), TakeBatches(uninterrupted, 10)) << "after " << steps;
}

TEST(DataLoader, RestoredMidEpochGivesTheSameBatchesAsUninterrupted) { ExpectResumeMatches(6); }

TEST(DataLoader, RestoredAtEpochBoundaryGivesTheSameBatchesAsUninterrupted) {
  DataLoader loader = MakeLoader(23, 5, true, 3);
  TakeBatches(loader, 8);  // two epochs of 4
  EXPECT_EQ(loader.position().ToJson(), R"({"batch_in_epoch":0,"epoch":2})");
  ExpectResumeMatches(8);
}

TEST(DataLoader, PositionRoundTripsThroughJson) {
  DataLoader::Position position;
  position.epoch = 3;
  position.batch_in_epoch = 17;
  const DataLoader::Position parsed = DataLoader::Position::FromJson(position.ToJson()).value();
  EXPECT_EQ(parsed.epoch, 3);
  EXPECT_EQ(parsed.batch_in_epoch, 17);
}

TEST(DataLoader, BadPositionJsonIsInvalidArgument) {
  for (const char* text : {"", "not json", "[0, 1]", R"({"epoch": 1})",
                           R"({"epoch": -1, "batch_in_epoch": 0})",
                           R"({"epoch": 1, "batch_in_epoch": "2"})",
                           R"({"epoch": 1.5, "batch_in_epoch": 2})"}) {
    const absl::StatusOr<DataLoader::Position> position = DataLoader::Position::FromJson(text);
    EXPECT_EQ(position.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(position.status().message(), HasSubstr("dataloader position")) << text;
  }
}

TEST(DataLoader, RestoringPastTheEndOfAnEpochIsInvalidArgument) {
  DataLoader loader = MakeLoader(10, 5);
  DataLoader::Position position;
  position.batch_in_epoch = 2;  // an epoch has batches 0 and 1
  const absl::Status status = loader.Restore(position);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("10 examples in batches of 5"));
  position.batch_in_epoch = -1;
  EXPECT_EQ(loader.Restore(position).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidationBatches, CoverEveryExampleInOrderWithASmallerLastBatch) {
  EXPECT_THAT(ValidationBatches(5, 2).value(),
              ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3), ElementsAre(4)));
}

TEST(ValidationBatches, ZeroBatchSizeMeansOneBatch) {
  EXPECT_THAT(ValidationBatches(3, 0).value(), ElementsAre(ElementsAre(0, 1, 2)));
  EXPECT_THAT(ValidationBatches(3, 10).value(), ElementsAre(ElementsAre(0, 1, 2)));
}

TEST(ValidationBatches, NoExamplesGiveNoBatchesAndNegativeSizeIsAnError) {
  EXPECT_TRUE(ValidationBatches(0, 0).value().empty());
  EXPECT_TRUE(ValidationBatches(0, 4).value().empty());
  EXPECT_EQ(ValidationBatches(3, -1).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rollout::controller
