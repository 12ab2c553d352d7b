#include "engine/scheduler.h"

#include <algorithm>
#include <utility>

#include "common/check.h"

namespace rollout::engine {

Scheduler::Scheduler(const SchedulerOptions& options, KvBlockManager* blocks)
    : options_(options), blocks_(blocks) {
  ROLLOUT_CHECK(options.max_num_seqs >= 1 && options.max_num_batched_tokens >= 1);
}

int64_t Scheduler::Add(std::unique_ptr<Sequence> sequence) {
  sequence->id = next_id_++;
  sequence->status = SequenceStatus::kWaiting;
  waiting_.push_back(std::move(sequence));
  return waiting_.back()->id;
}

StepPlan Scheduler::Schedule() {
  StepPlan plan;
  int64_t budget = options_.max_num_batched_tokens;
  // running_ may shrink (preemption from the back) and grow (forks) while we walk it.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    if (ScheduleRunning(i, &budget, &plan)) ++i;
  }
  if (plan.num_preempted == 0) {
    // Seats: running sequences plus the forks their leaders will add.
    int64_t seats = 0;
    for (const auto& running : running_) seats += 1 + running->pending_forks;
    while (!waiting_.empty() && budget > 0 && AdmitWaiting(&budget, &seats, &plan)) {
    }
  }
  return plan;
}

bool Scheduler::ScheduleRunning(size_t index, int64_t* budget, StepPlan* plan) {
  Sequence* sequence = running_[index].get();
  // At its length cap the sequence only waits for its last token to be fetched.
  if (static_cast<int64_t>(sequence->tokens.size()) >= sequence->max_length) return true;
  const int64_t needed = static_cast<int64_t>(sequence->tokens.size()) - sequence->num_computed;
  const int64_t take = std::min(needed, *budget);
  if (take <= 0) return true;
  const int64_t new_length = sequence->num_computed + take;
  while (blocks_->BlocksNeeded(sequence->blocks, new_length) > blocks_->num_free_blocks()) {
    const size_t victim = running_.size() - 1;
    Preempt(victim);
    ++plan->num_preempted;
    if (victim == index) return false;
  }
  const bool grown = blocks_->Grow(sequence->blocks, new_length, &plan->copies);
  ROLLOUT_CHECK(grown);
  AddChunk(sequence, take, plan);
  *budget -= take;
  return true;
}

bool Scheduler::AdmitWaiting(int64_t* budget, int64_t* seats, StepPlan* plan) {
  Sequence* sequence = waiting_.front().get();
  const int64_t wanted = 1 + sequence->pending_forks;
  if (*seats + wanted > options_.max_num_seqs) return false;
  if (sequence->num_computed == 0) {
    sequence->num_computed = blocks_->MatchCachedPrefix(sequence->blocks, sequence->tokens);
  }
  const int64_t needed = static_cast<int64_t>(sequence->tokens.size()) - sequence->num_computed;
  const int64_t take = std::min(needed, *budget);
  const int64_t new_length = sequence->num_computed + take;
  if ((take < needed && !options_.enable_chunked_prefill) ||
      blocks_->BlocksNeeded(sequence->blocks, new_length) > blocks_->num_free_blocks()) {
    // Give back a matched prefix so its cached blocks can be evicted if need be.
    blocks_->Free(sequence->blocks);
    sequence->num_computed = 0;
    return false;
  }
  const bool grown = blocks_->Grow(sequence->blocks, new_length, &plan->copies);
  ROLLOUT_CHECK(grown);
  sequence->status = SequenceStatus::kRunning;
  *seats += wanted;
  running_.push_back(std::move(waiting_.front()));
  waiting_.pop_front();
  AddChunk(sequence, take, plan);
  *budget -= take;
  return true;
}

void Scheduler::AddChunk(Sequence* sequence, int64_t num_tokens, StepPlan* plan) {
  ScheduledChunk chunk;
  chunk.sequence = sequence;
  chunk.start = sequence->num_computed;
  chunk.num_tokens = num_tokens;
  if (chunk.start + num_tokens == static_cast<int64_t>(sequence->tokens.size())) {
    chunk.samplers.push_back(sequence);
    if (sequence->pending_forks > 0) Fork(sequence, &chunk);
  }
  plan->num_tokens += num_tokens;
  plan->chunks.push_back(std::move(chunk));
}

void Scheduler::Fork(Sequence* leader, ScheduledChunk* chunk) {
  // Group prefix sharing: the forks share every block, including the one this step
  // finishes writing; their first token comes from the same logits row. They go right
  // after their leader in running_, in sample order.
  const size_t position = static_cast<size_t>(
      std::find_if(running_.begin(), running_.end(),
                   [&](const auto& s) { return s.get() == leader; }) -
      running_.begin());
  ROLLOUT_CHECK(position < running_.size());
  for (; leader->pending_forks > 0; --leader->pending_forks) {
    auto fork = std::make_unique<Sequence>(*leader);
    fork->id = next_id_++;
    fork->sample = leader->sample + leader->pending_forks;
    fork->pending_forks = 0;
    fork->num_computed = static_cast<int64_t>(leader->tokens.size());
    fork->blocks = blocks_->Fork(leader->blocks);
    chunk->samplers.push_back(fork.get());
    running_.insert(running_.begin() + static_cast<std::ptrdiff_t>(position) + 1, std::move(fork));
  }
  std::sort(chunk->samplers.begin(), chunk->samplers.end(),
            [](const Sequence* a, const Sequence* b) { return a->sample < b->sample; });
}

void Scheduler::Preempt(size_t index) {
  std::unique_ptr<Sequence> sequence = std::move(running_[index]);
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
  blocks_->Free(sequence->blocks);
  sequence->num_computed = 0;
  sequence->status = SequenceStatus::kWaiting;
  waiting_.push_front(std::move(sequence));
  ++num_preemptions_;
}

void Scheduler::CompleteStep(const StepPlan& plan) {
  for (const ScheduledChunk& chunk : plan.chunks) {
    // Finished while the step ran (its blocks are free): nothing to record.
    if (chunk.sequence->status == SequenceStatus::kFinished) continue;
    const int64_t computed = chunk.start + chunk.num_tokens;
    chunk.sequence->num_computed = computed;
    blocks_->RegisterComputedBlocks(chunk.sequence->blocks, chunk.sequence->tokens, computed);
    // A fork preempted in the step that created it holds no blocks: it recomputes.
    for (Sequence* sampler : chunk.samplers) {
      if (sampler->status == SequenceStatus::kRunning) sampler->num_computed = computed;
    }
  }
}

void Scheduler::Finish(Sequence* sequence, FinishReason reason) {
  std::unique_ptr<Sequence> owned;
  auto is_it = [&](const auto& s) { return s.get() == sequence; };
  if (auto it = std::find_if(running_.begin(), running_.end(), is_it); it != running_.end()) {
    owned = std::move(*it);
    running_.erase(it);
  } else if (auto w = std::find_if(waiting_.begin(), waiting_.end(), is_it); w != waiting_.end()) {
    // A sample preempted right after it was scheduled can finish on the token it drew.
    owned = std::move(*w);
    waiting_.erase(w);
  }
  ROLLOUT_CHECK(owned != nullptr) << "finishing a sequence the scheduler does not hold";
  blocks_->Free(owned->blocks);
  owned->status = SequenceStatus::kFinished;
  owned->finish_reason = reason;
  finished_.push_back(std::move(owned));
}

std::vector<std::unique_ptr<Sequence>> Scheduler::TakeFinished() {
  return std::exchange(finished_, {});
}

void Scheduler::AbortUnfinished() {
  for (std::unique_ptr<Sequence>& sequence : running_) blocks_->Free(sequence->blocks);
  for (std::unique_ptr<Sequence>& sequence : waiting_) blocks_->Free(sequence->blocks);
  running_.clear();
  waiting_.clear();
}

}  // namespace rollout::engine
