#include "rewards/helper_pool.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "proto/reward.pb.h"
#include "rewards/frame_io.h"
#include "rewards/reward_wire.h"

namespace rollout::rewards {

HelperPool::HelperPool(HelperPoolOptions options) : options_(std::move(options)) {
  helpers_.resize(static_cast<size_t>(std::max(1, options_.num_helpers)));
}

absl::Status HelperPool::Launch(Helper& helper) {
  helper.process = nullptr;  // kills and reaps the previous one, if any
  ASSIGN_OR_RETURN(helper.process, HelperProcess::Start(options_.helper_argv));
  helper.state = State::kStarting;
  helper.deadline = Clock::now() + absl::ToChronoNanoseconds(options_.startup_timeout);
  return absl::OkStatus();
}

absl::Status HelperPool::Start() {
  for (Helper& helper : helpers_) RETURN_IF_ERROR(Launch(helper));
  while (std::any_of(helpers_.begin(), helpers_.end(),
                     [](const Helper& h) { return h.state == State::kStarting; })) {
    RETURN_IF_ERROR(Pump(nullptr));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ScoredSample>> HelperPool::Score(const std::vector<RewardInput>& samples) {
  Batch batch;
  batch.samples = &samples;
  batch.results.resize(samples.size());
  while (batch.finished < samples.size()) {
    RETURN_IF_ERROR(Dispatch(batch));
    RETURN_IF_ERROR(Pump(&batch));
  }
  return std::move(batch.results);
}

absl::Status HelperPool::Dispatch(Batch& batch) {
  for (Helper& helper : helpers_) {
    if (helper.state != State::kIdle || batch.next == batch.samples->size()) continue;
    if (!WriteFrame(helper.process->socket(), ToWire((*batch.samples)[batch.next])).ok()) {
      // It died while idle; the sample was not handed over and goes to another helper.
      RETURN_IF_ERROR(Launch(helper));
      continue;
    }
    helper.state = State::kBusy;
    helper.sample = batch.next++;
    helper.deadline = Clock::now() + absl::ToChronoNanoseconds(options_.timeout);
  }
  return absl::OkStatus();
}

absl::Status HelperPool::Pump(Batch* batch) {
  std::vector<pollfd> fds;
  std::vector<Helper*> polled;
  Clock::time_point earliest = Clock::time_point::max();
  for (Helper& helper : helpers_) {
    if (helper.state == State::kIdle) continue;
    fds.push_back(pollfd{helper.process->socket(), POLLIN, 0});
    polled.push_back(&helper);
    earliest = std::min(earliest, helper.deadline);
  }
  if (fds.empty()) return absl::OkStatus();
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(earliest - Clock::now());
  const int ready = poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(0, wait.count())));
  if (ready < 0 && errno != EINTR) {
    return absl::InternalError(absl::StrCat("poll on reward helpers: ", strerror(errno)));
  }
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents != 0) RETURN_IF_ERROR(HandleReadable(*polled[i], batch));
  }
  const Clock::time_point now = Clock::now();
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0 && polled[i]->deadline <= now) {
      RETURN_IF_ERROR(HandleOverdue(*polled[i], batch));
    }
  }
  return absl::OkStatus();
}

absl::Status HelperPool::HandleReadable(Helper& helper, Batch* batch) {
  wire::RewardResult message;
  const absl::Status read = ReadFrame(helper.process->socket(), &message);
  if (helper.state == State::kStarting) {
    if (read.ok() && message.outcome() == wire::RewardResult::OK) {
      helper.state = State::kIdle;
      return absl::OkStatus();
    }
    const std::string why = read.ok() ? message.error()
                                      : absl::StrCat("it ", helper.process->KillAndReap(), " while starting");
    return absl::FailedPreconditionError(absl::StrCat("reward helper: ", why));
  }
  if (!read.ok()) {
    return Replace(helper, batch, SampleOutcome::kError,
                   absl::StrCat("the reward helper ", helper.process->KillAndReap(), " while scoring it"));
  }
  batch->results[helper.sample] = FromWire(message);
  ++batch->finished;
  helper.state = State::kIdle;
  return absl::OkStatus();
}

absl::Status HelperPool::HandleOverdue(Helper& helper, Batch* batch) {
  if (helper.state == State::kStarting) {
    return absl::FailedPreconditionError(
        absl::StrCat("reward helper: not ready within ", absl::FormatDuration(options_.startup_timeout)));
  }
  helper.process->KillAndReap();
  return Replace(helper, batch, SampleOutcome::kTimeout,
                 absl::StrCat("still running after the ", absl::FormatDuration(options_.timeout),
                              " timeout; its helper was killed"));
}

absl::Status HelperPool::Replace(Helper& helper, Batch* batch, SampleOutcome outcome,
                                 const std::string& error) {
  if (helper.state == State::kBusy) {
    batch->results[helper.sample] = FailedSample(outcome, error);
    ++batch->finished;
  }
  return Launch(helper);
}

}  // namespace rollout::rewards
