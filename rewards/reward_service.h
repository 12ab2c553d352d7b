// gRPC adapter for the RewardService (proto/reward.proto): converts the request, scores
// it with a RewardRunner, fills the reply. Calls are served one at a time (a runner's
// Score calls may not overlap); each already runs its batch in parallel.
#pragma once

#include <mutex>

#include "proto/reward.grpc.pb.h"
#include "rewards/reward_runner.h"

namespace rollout::rewards {

class RewardServiceImpl final : public wire::RewardService::Service {
 public:
  explicit RewardServiceImpl(RewardRunner* runner);  // `runner` must outlive the service

  grpc::Status Score(grpc::ServerContext* context, const wire::ScoreRequest* request,
                     wire::ScoreReply* reply) override;

 private:
  RewardRunner* const runner_;
  std::mutex mutex_;
};

}  // namespace rollout::rewards
