#include "rewards/thread_reward_runner.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::rewards {
namespace {

using Clock = std::chrono::steady_clock;

// The batch being scored. Workers hold it by shared_ptr, so an abandoned worker that
// finishes after Score returned writes nowhere that is gone.
struct Batch {
  std::vector<RewardInput> inputs;
  std::vector<ScoredSample> results;
  std::vector<bool> finished;
  size_t next = 0;  // the next sample no worker has taken
  size_t remaining = 0;
};

}  // namespace

// State the workers share with the runner. Abandoned workers may outlive the runner.
struct ThreadRewardRunner::Shared {
  std::shared_ptr<const RewardSelector> selector;
  Clock::duration timeout;
  std::mutex mutex;
  std::condition_variable work_ready;   // a batch arrived, or stop
  std::condition_variable progress;     // a sample started (a new deadline) or finished
  std::shared_ptr<Batch> batch;         // null between Score calls
  bool stopping = false;
  int stuck = 0;  // abandoned workers still running
};

struct ThreadRewardRunner::Worker {
  std::thread thread;
  // Guarded by Shared::mutex.
  bool abandoned = false;
  std::shared_ptr<Batch> batch;  // the batch of the sample in hand, or null
  size_t sample = 0;
  Clock::time_point started;
};

void ThreadRewardRunner::WorkerLoop(std::shared_ptr<Shared> shared, std::shared_ptr<Worker> self) {
  std::unique_lock<std::mutex> lock(shared->mutex);
  while (true) {
    shared->work_ready.wait(lock, [&] {
      return shared->stopping || self->abandoned ||
             (shared->batch != nullptr && shared->batch->next < shared->batch->inputs.size());
    });
    if (shared->stopping || self->abandoned) return;
    self->batch = shared->batch;
    self->sample = self->batch->next++;
    self->started = Clock::now();
    shared->progress.notify_all();
    lock.unlock();
    ScoredSample result = ScoreOrFail(*shared->selector, self->batch->inputs[self->sample]);
    lock.lock();
    if (self->abandoned) {  // timed out meanwhile: its result was recorded, this one is dropped
      --shared->stuck;
      return;
    }
    Batch& batch = *self->batch;
    batch.results[self->sample] = std::move(result);
    batch.finished[self->sample] = true;
    --batch.remaining;
    self->batch = nullptr;
    shared->progress.notify_all();
  }
}

ThreadRewardRunner::ThreadRewardRunner(std::shared_ptr<const RewardSelector> selector,
                                       const ThreadRunnerOptions& options)
    : shared_(std::make_shared<Shared>()) {
  shared_->selector = std::move(selector);
  shared_->timeout = absl::ToChronoNanoseconds(options.timeout);
  const int num_workers = options.num_workers > 0
                              ? options.num_workers
                              : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  max_stuck_calls_ = options.max_stuck_calls > 0 ? options.max_stuck_calls : 4 * num_workers;
  for (int i = 0; i < num_workers; ++i) StartWorker();
}

ThreadRewardRunner::~ThreadRewardRunner() {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->stopping = true;
  }
  shared_->work_ready.notify_all();
  for (const std::shared_ptr<Worker>& worker : workers_) worker->thread.join();
}

void ThreadRewardRunner::StartWorker() {
  auto worker = std::make_shared<Worker>();
  worker->thread = std::thread(WorkerLoop, shared_, worker);
  workers_.push_back(std::move(worker));
}

void ThreadRewardRunner::AbandonOverdue(Clock::time_point now) {
  for (size_t i = 0; i < workers_.size(); ++i) {
    Worker& worker = *workers_[i];
    if (worker.batch == nullptr || now - worker.started < shared_->timeout) continue;
    Batch& batch = *worker.batch;
    batch.results[worker.sample] = FailedSample(
        SampleOutcome::kTimeout,
        absl::StrCat("still running after the ", absl::FormatDuration(absl::FromChrono(shared_->timeout)),
                     " timeout"));
    batch.finished[worker.sample] = true;
    --batch.remaining;
    worker.abandoned = true;
    worker.thread.detach();
    ++shared_->stuck;
    workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(i--));
    StartWorker();
  }
}

absl::Status ThreadRewardRunner::CheckStuck() const {
  if (shared_->stuck <= max_stuck_calls_) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      shared_->stuck, " reward calls are still running past their ",
      absl::FormatDuration(absl::FromChrono(shared_->timeout)),
      " timeout (an endless loop in the reward function?); threads cannot be stopped: "
      "use reward.isolation: process, which kills them"));
}

absl::StatusOr<std::vector<ScoredSample>> ThreadRewardRunner::Score(
    const std::vector<RewardInput>& samples) {
  std::unique_lock<std::mutex> lock(shared_->mutex);
  RETURN_IF_ERROR(CheckStuck());
  auto batch = std::make_shared<Batch>();
  batch->inputs = samples;
  batch->results.resize(samples.size());
  batch->finished.assign(samples.size(), false);
  batch->remaining = samples.size();
  shared_->batch = batch;
  shared_->work_ready.notify_all();
  while (batch->remaining > 0) {
    Clock::time_point next_deadline = Clock::time_point::max();
    for (const std::shared_ptr<Worker>& worker : workers_) {
      if (worker->batch != nullptr) {
        next_deadline = std::min(next_deadline, worker->started + shared_->timeout);
      }
    }
    if (next_deadline == Clock::time_point::max()) {
      shared_->progress.wait(lock);  // every worker is between samples
    } else {
      shared_->progress.wait_until(lock, next_deadline);
    }
    AbandonOverdue(Clock::now());
    if (absl::Status stuck = CheckStuck(); !stuck.ok()) {
      shared_->batch = nullptr;
      return stuck;
    }
  }
  shared_->batch = nullptr;
  return std::move(batch->results);
}

}  // namespace rollout::rewards
