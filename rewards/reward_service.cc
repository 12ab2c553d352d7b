#include "rewards/reward_service.h"

#include <vector>

#include "common/grpc_status.h"
#include "rewards/reward_wire.h"

namespace rollout::rewards {

RewardServiceImpl::RewardServiceImpl(RewardRunner* runner) : runner_(runner) {}

grpc::Status RewardServiceImpl::Score(grpc::ServerContext* context,
                                      const wire::ScoreRequest* request, wire::ScoreReply* reply) {
  std::vector<RewardInput> samples;
  samples.reserve(request->samples_size());
  for (const wire::RewardSample& sample : request->samples()) samples.push_back(FromWire(sample));

  absl::StatusOr<std::vector<ScoredSample>> results;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // A caller whose deadline passed while another call held the runner has given up
    // (and may be retrying): scoring its batch would only delay the calls behind it.
    if (context->IsCancelled()) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "the caller gave up before scoring began");
    }
    results = runner_->Score(samples);
  }
  if (!results.ok()) return ToGrpcStatus(results.status());
  for (const ScoredSample& result : *results) *reply->add_results() = ToWire(result);
  return grpc::Status::OK;
}

}  // namespace rollout::rewards
