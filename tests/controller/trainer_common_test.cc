// verl's data.train_max_samples / val_max_samples: which rows a cap keeps.
#include "controller/trainer_common.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

namespace rollout::controller {
namespace {

using ::testing::ElementsAre;

config::DataConfig Data(bool shuffle, int seed) {
  config::DataConfig data;
  data.set_shuffle(shuffle);
  data.set_seed(seed);
  return data;
}

TEST(CappedRows, NoCapOrALargerOneKeepsEveryRow) {
  for (const int64_t cap : {-1, 0, 5, 9}) {
    EXPECT_THAT(CappedRows(5, cap, Data(true, 1)), ElementsAre(0, 1, 2, 3, 4)) << cap;
  }
}

TEST(CappedRows, WithoutShuffleTheFirstRowsStay) {
  EXPECT_THAT(CappedRows(10, 3, Data(false, 1)), ElementsAre(0, 1, 2));
}

// With shuffle: a seeded choice without repeats, in file order, the same each time; a
// different seed chooses differently, and the choice reaches past the first rows.
TEST(CappedRows, WithShuffleASeededChoiceInFileOrder) {
  const std::vector<size_t> kept = CappedRows(1000, 100, Data(true, 7));
  ASSERT_EQ(kept.size(), 100u);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  EXPECT_EQ(std::set<size_t>(kept.begin(), kept.end()).size(), 100u);
  EXPECT_LT(kept.back(), 1000u);
  EXPECT_GT(kept.back(), 500u);
  EXPECT_EQ(CappedRows(1000, 100, Data(true, 7)), kept);
  EXPECT_NE(CappedRows(1000, 100, Data(true, 8)), kept);
}

}  // namespace
}  // namespace rollout::controller
