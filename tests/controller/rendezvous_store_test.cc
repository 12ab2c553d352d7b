#include "controller/rendezvous_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::controller {
namespace {

using ::testing::HasSubstr;

TEST(RendezvousStore, AnswersWrittenKeysAndNothingForOthers) {
  RendezvousStore store;
  EXPECT_EQ(store.Get("gloo/pool/0"), std::nullopt);
  ASSERT_TRUE(store.Set("gloo/pool/0", std::string("addr\0ess", 8)).ok());
  EXPECT_EQ(store.Get("gloo/pool/0"), std::string("addr\0ess", 8));
}

TEST(RendezvousStore, AKeyIsWrittenOnce) {
  RendezvousStore store;
  ASSERT_TRUE(store.Set("k", "v").ok());
  EXPECT_TRUE(store.Set("k", "v").ok());  // a retried RPC
  const absl::Status again = store.Set("k", "other");
  EXPECT_TRUE(absl::IsAlreadyExists(again));
  EXPECT_THAT(again.message(), HasSubstr("rendezvous key 'k' was already written"));
  EXPECT_EQ(store.Get("k"), "v");
}

TEST(RendezvousStore, RefusesEmptyAndOversizedEntries) {
  RendezvousStore store;
  EXPECT_TRUE(absl::IsInvalidArgument(store.Set("", "v")));
  EXPECT_TRUE(absl::IsInvalidArgument(store.Set(std::string(RendezvousStore::kMaxKeyBytes + 1, 'k'), "v")));
  EXPECT_TRUE(absl::IsInvalidArgument(store.Set("k", std::string(RendezvousStore::kMaxValueBytes + 1, 'v'))));
  EXPECT_EQ(store.Get("k"), std::nullopt);
}

TEST(RendezvousStore, HoldsABoundedNumberOfKeys) {
  RendezvousStore store;
  for (size_t i = 0; i < RendezvousStore::kMaxKeys; ++i) ASSERT_TRUE(store.Set(std::to_string(i), "v").ok());
  EXPECT_TRUE(absl::IsResourceExhausted(store.Set("one more", "v")));
  EXPECT_EQ(store.Get("one more"), std::nullopt);
}

}  // namespace
}  // namespace rollout::controller
