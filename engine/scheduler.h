// Continuous batching: decides, step by step, which tokens of which sequences the
// model computes, within a token budget (max_num_batched_tokens), a sequence budget
// (max_num_seqs) and the KV blocks there are.
//
// Policy (vLLM v1's, simplified):
//   1. Running sequences, oldest first, get the tokens they still need (1 when
//      decoding; a prompt chunk when their prefill was cut by the budget — chunked
//      prefill). When blocks run out, the newest running sequence is preempted: its
//      blocks are freed and it goes back to the waiting queue to be recomputed
//      (prompt + output so far) later. The engine never runs out of memory.
//   2. If nobody was preempted, waiting sequences are admitted in arrival order while
//      budget and blocks last (with prefix caching, cached prompt blocks are reused).
// A group leader's last prefill chunk forks its pending samples: they share its
// blocks and sample from the same logits row (group prefix sharing).
//
// Every sequence must fit in the cache on its own (the engine checks at admission);
// with that, some sequence always makes progress. A running sequence at its length cap
// (Sequence::max_length) is not scheduled: it only waits for its last token.
//
// Not thread-safe. The engine calls Schedule(), launches the step, then CompleteStep()
// (before the next Schedule()). A sequence may finish between the two: the engine
// learns a step's tokens only after it launched the next one (engine/engine.h), so a
// plan can name sequences that finished since; CompleteStep() skips them.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "engine/kv_block_manager.h"
#include "engine/sequence.h"

namespace rollout::engine {

struct SchedulerOptions {
  int32_t max_num_seqs = 256;
  int64_t max_num_batched_tokens = 8192;
  // Off: a waiting sequence is admitted only when all its uncomputed tokens fit in the
  // step (the engine rejects prompts longer than max_num_batched_tokens).
  bool enable_chunked_prefill = true;
};

// Tokens [start, start + num_tokens) of `sequence`, computed in one step.
struct ScheduledChunk {
  Sequence* sequence = nullptr;
  int64_t start = 0;
  int64_t num_tokens = 0;
  // Sequences that sample their next token from this chunk's last position: empty
  // when the chunk ends inside the prompt; the sequence itself, plus the samples it
  // forks when it is a group leader finishing its prefill.
  std::vector<Sequence*> samplers;
};

struct StepPlan {
  std::vector<ScheduledChunk> chunks;
  std::vector<BlockCopy> copies;  // copy-on-write, to do before the step writes KV
  int64_t num_tokens = 0;         // sum of the chunks' num_tokens
  int32_t num_preempted = 0;
  bool empty() const { return chunks.empty(); }
};

class Scheduler {
 public:
  // `blocks` must outlive the scheduler.
  Scheduler(const SchedulerOptions& options, KvBlockManager* blocks);

  // Queues a new sequence (status kWaiting, no blocks, nothing computed) and gives it
  // the next id; returns the id.
  int64_t Add(std::unique_ptr<Sequence> sequence);
  bool HasUnfinished() const { return !running_.empty() || !waiting_.empty(); }
  int64_t num_running() const { return static_cast<int64_t>(running_.size()); }
  int64_t num_waiting() const { return static_cast<int64_t>(waiting_.size()); }
  int64_t num_preemptions() const { return num_preemptions_; }

  // The next step. Empty when nothing is unfinished, or when nothing can be computed
  // before the launched steps' tokens are applied (running sequences at their cap).
  StepPlan Schedule();
  // Records that the plan's tokens were computed (their KV is written), and with prefix
  // caching registers the newly full blocks (whose tokens must all be known by then).
  void CompleteStep(const StepPlan& plan);
  // Frees the sequence's blocks and moves it to the finished list. It must be one the
  // scheduler holds (running, or waiting after a preemption in the step it sampled in).
  void Finish(Sequence* sequence, FinishReason reason);
  // Finished sequences, handed over in the order they finished.
  std::vector<std::unique_ptr<Sequence>> TakeFinished();
  // Drops every running and waiting sequence, freeing their blocks (no launched step may
  // still write them); HasUnfinished() is false after it.
  void AbortUnfinished();

 private:
  // Schedules up to `budget` tokens of a running sequence; false when it had to be
  // preempted itself.
  bool ScheduleRunning(size_t index, int64_t* budget, StepPlan* plan);
  // Admits the first waiting sequence if it fits; `seats` counts the running sequences
  // and their pending forks, and grows by the admitted ones.
  bool AdmitWaiting(int64_t* budget, int64_t* seats, StepPlan* plan);
  void Preempt(size_t index);
  void AddChunk(Sequence* sequence, int64_t num_tokens, StepPlan* plan);
  // Forks a group leader that finishes its prefill in `chunk` into its pending samples.
  void Fork(Sequence* leader, ScheduledChunk* chunk);

  SchedulerOptions options_;
  KvBlockManager* blocks_;
  // Arrival order; preempted sequences go back to the front, oldest first.
  std::deque<std::unique_ptr<Sequence>> waiting_;
  // Admission order (forks right after their leader); the last is preempted first.
  std::vector<std::unique_ptr<Sequence>> running_;
  std::vector<std::unique_ptr<Sequence>> finished_;
  int64_t next_id_ = 0;
  int64_t num_preemptions_ = 0;
};

}  // namespace rollout::engine
