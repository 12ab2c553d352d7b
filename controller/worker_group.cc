#include "controller/worker_group.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::controller {

WorkerGroup::WorkerGroup(std::string pool, std::vector<WorkerClient*> workers, RunHealth* health)
    : pool_(std::move(pool)), workers_(std::move(workers)), health_(health) {}

absl::StatusOr<std::vector<Batch>> WorkerGroup::CallEach(const std::string& method,
                                                         const std::vector<Batch>& inputs) {
  if (inputs.size() != workers_.size()) {
    return absl::InvalidArgumentError(absl::StrCat(method, ": ", inputs.size(), " inputs for the ",
                                                   workers_.size(), " workers of pool ", pool_));
  }
  std::vector<absl::StatusOr<Batch>> results(inputs.size());
  std::vector<std::function<absl::Status()>> calls;
  for (size_t rank = 0; rank < inputs.size(); ++rank) {
    calls.push_back([&, rank] {
      results[rank] = workers_[rank]->Call(method, inputs[rank]);
      return results[rank].status();
    });
  }
  RETURN_IF_ERROR(RunConcurrently(health_, calls));
  std::vector<Batch> outputs;
  outputs.reserve(results.size());
  for (absl::StatusOr<Batch>& result : results) outputs.push_back(*std::move(result));
  return outputs;
}

absl::StatusOr<std::vector<Batch>> WorkerGroup::CallAll(const std::string& method,
                                                        const Batch& input) {
  return CallEach(method, std::vector<Batch>(workers_.size(), input));
}

absl::StatusOr<Batch> WorkerGroup::CallDpSplit(const std::string& method, const Batch& input) {
  ASSIGN_OR_RETURN(Batch::Chunks chunks, input.Chunk(world_size()));
  ASSIGN_OR_RETURN(std::vector<Batch> outputs, CallEach(method, chunks.parts));
  for (int rank = 0; rank < world_size(); ++rank) {
    if (outputs[rank].size() != chunks.parts[rank].size()) {
      return absl::InternalError(absl::StrCat(
          method, " on ", DescribeWorker(workers_[rank]->info()), " returned ",
          outputs[rank].size(), " rows for ", chunks.parts[rank].size(), " input rows"));
    }
  }
  ASSIGN_OR_RETURN(Batch joined, Batch::Concat(outputs));
  return joined.Slice(0, joined.size() - chunks.padding);
}

absl::StatusOr<std::vector<Batch>> WorkerGroup::CallDpShards(const std::string& method,
                                                             const Batch& input) {
  if (input.size() % world_size() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(method, ": ", input.size(), " rows do not split evenly over the ",
                                                   world_size(), " workers of pool ", pool_));
  }
  ASSIGN_OR_RETURN(Batch::Chunks chunks, input.Chunk(world_size()));
  return CallEach(method, chunks.parts);
}

absl::StatusOr<Batch> WorkerGroup::CallRankZero(const std::string& method, const Batch& input) {
  return workers_.front()->Call(method, input);
}

absl::Status RunConcurrently(RunHealth* health, const std::vector<std::function<absl::Status()>>& calls) {
  if (calls.size() == 1) return calls.front()();
  std::vector<absl::Status> results(calls.size());
  std::vector<std::thread> threads;
  threads.reserve(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    threads.emplace_back([&, i] {
      results[i] = calls[i]();
      // The first failure; the calls it cancels then report it (WorkerClient::Call).
      if (!results[i].ok()) health->Fail(results[i]);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& result : results) RETURN_IF_ERROR(result);
  return absl::OkStatus();
}

}  // namespace rollout::controller
