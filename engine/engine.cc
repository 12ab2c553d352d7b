#include "engine/engine.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "engine/kv_block_manager.h"
#include "engine/model_runner.h"
#include "engine/paged_kv_cache.h"
#include "engine/scheduler.h"
#include "engine/stop_checker.h"

#ifdef ROLLOUT_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace rollout::engine {
namespace {

// Larger decode batches run eagerly (their launch overhead is amortised anyway).
constexpr int64_t kMaxGraphBatch = 512;

int64_t BlocksFor(int64_t tokens, int64_t block_size) {
  return (tokens + block_size - 1) / block_size;
}

absl::StatusOr<int64_t> KvBudgetBytes(const models::CausalLM& model, const EngineOptions& options) {
  if (!model.device().is_cuda()) return options.cpu_kv_cache_bytes;
#ifdef ROLLOUT_WITH_CUDA
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    return absl::InternalError("cudaMemGetInfo failed while sizing the KV cache");
  }
  return static_cast<int64_t>(static_cast<double>(free_bytes) * options.gpu_memory_utilization);
#else
  return absl::FailedPreconditionError("a CUDA model in a build without CUDA");
#endif
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(const models::CausalLM& model,
                                                       const models::Tokenizer* tokenizer,
                                                       const EngineOptions& options) {
  if (options.block_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("block_size must be >= 1, got ", options.block_size));
  }
  int64_t num_blocks = options.num_blocks;
  const int64_t block_bytes =
      PagedKvCache::BytesPerBlock(model.config(), options.block_size, model.dtype());
  if (num_blocks <= 0) {
    auto budget = KvBudgetBytes(model, options);
    if (!budget.ok()) return budget.status();
    num_blocks = *budget / block_bytes;
  }
  if (num_blocks < 1) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the KV cache budget holds no block of ", block_bytes,
        " bytes; raise rollout.gpu_memory_utilization (GPU) or rollout.cpu_kv_cache_gib (CPU)"));
  }
  return std::unique_ptr<Engine>(new Engine(model, tokenizer, options, num_blocks));
}

Engine::Engine(const models::CausalLM& model, const models::Tokenizer* tokenizer,
               const EngineOptions& options, int64_t num_blocks)
    : model_(model), tokenizer_(tokenizer), options_(options) {
  if (tokenizer_ != nullptr) eos_ids_ = tokenizer_->eos_token_ids();
  for (int64_t id : model.config().eos_token_ids) eos_ids_.push_back(static_cast<int32_t>(id));
  KvBlockManager::Options block_options;
  block_options.num_blocks = static_cast<int32_t>(num_blocks);
  block_options.block_size = options.block_size;
  block_options.enable_prefix_caching = options.enable_prefix_caching;
  blocks_ = std::make_unique<KvBlockManager>(block_options);
  cache_ = std::make_unique<PagedKvCache>(
      model.config(), num_blocks, options.block_size,
      at::TensorOptions().dtype(model.dtype()).device(model.device()));
  ModelRunnerOptions runner_options;
  runner_options.enforce_eager = options.enforce_eager;
  runner_options.max_batch = std::min<int64_t>(options.max_num_seqs, kMaxGraphBatch);
  runner_options.max_samples = options.max_num_seqs;
  runner_ = std::make_unique<ModelRunner>(model, cache_.get(), runner_options);
  stats_.num_blocks = num_blocks;
  stats_.block_size = options.block_size;
}

Engine::~Engine() = default;

void Engine::ResetStats() {
  EngineStats fresh;
  fresh.num_blocks = stats_.num_blocks;
  fresh.block_size = stats_.block_size;
  stats_ = fresh;
}

void Engine::DropPrefixCache() { blocks_->DropPrefixCache(); }

int64_t Engine::used_blocks() const { return blocks_->num_used_blocks(); }

absl::Status Engine::Validate(absl::Span<const GenerationRequest> requests) const {
  const models::TransformerConfig& config = model_.config();
  for (size_t i = 0; i < requests.size(); ++i) {
    const GenerationRequest& request = requests[i];
    const std::string where = absl::StrCat("request ", i, ": ");
    if (absl::Status s = ValidateSamplingParams(request.params); !s.ok()) {
      return absl::InvalidArgumentError(where + std::string(s.message()));
    }
    const int64_t prompt = static_cast<int64_t>(request.prompt.size());
    if (prompt == 0) return absl::InvalidArgumentError(where + "the prompt is empty");
    for (int32_t id : request.prompt) {
      if (id < 0 || id >= config.vocab_size) {
        return absl::InvalidArgumentError(absl::StrCat(where, "token id ", id,
                                                       " is outside the vocabulary [0, ",
                                                       config.vocab_size, ")"));
      }
    }
    if (prompt >= config.max_position_embeddings) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "the prompt has ", prompt, " tokens; the model takes at most ",
          config.max_position_embeddings, " positions"));
    }
    if (!request.params.stop.empty() && tokenizer_ == nullptr) {
      return absl::InvalidArgumentError(where + "stop strings need a tokenizer");
    }
    if (options_.share_group_prefix && request.params.n > options_.max_num_seqs) {
      return absl::InvalidArgumentError(absl::StrCat(where, "n = ", request.params.n,
                                                     " exceeds max_num_seqs = ",
                                                     options_.max_num_seqs));
    }
    const int64_t length =
        std::min(prompt + request.params.max_tokens, config.max_position_embeddings);
    const int64_t needed = BlocksFor(length, options_.block_size);
    if (needed > blocks_->num_blocks()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "a sample needs ", needed, " KV blocks (prompt ", prompt, " + max_tokens ",
          request.params.max_tokens, " tokens) but the cache has ", blocks_->num_blocks(),
          "; lower max_tokens or give the KV cache more memory"));
    }
    if (!options_.enable_chunked_prefill && length > options_.max_num_batched_tokens) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "prompt + max_tokens = ", length, " exceeds max_num_batched_tokens = ",
          options_.max_num_batched_tokens, " and chunked prefill is off"));
    }
  }
  return absl::OkStatus();
}

void Engine::Enqueue(absl::Span<const GenerationRequest> requests, Scheduler& scheduler) const {
  for (size_t i = 0; i < requests.size(); ++i) {
    const GenerationRequest& request = requests[i];
    const bool share = options_.share_group_prefix && request.params.n > 1;
    for (int32_t sample = 0; sample < (share ? 1 : request.params.n); ++sample) {
      auto sequence = std::make_unique<Sequence>();
      sequence->request = static_cast<int64_t>(i);
      sequence->sample = sample;
      sequence->params = &request.params;
      sequence->tokens = request.prompt;
      sequence->prompt_length = static_cast<int64_t>(request.prompt.size());
      sequence->pending_forks = share ? request.params.n - 1 : 0;
      sequence->max_length = std::min(sequence->prompt_length + request.params.max_tokens,
                                      model_.config().max_position_embeddings);
      scheduler.Add(std::move(sequence));
    }
  }
}

FinishReason Engine::ApplyToken(Sequence& sequence, int32_t token, float log_prob,
                                StopCheckers& stop_checkers) const {
  int32_t& slot = sequence.tokens.at(sequence.prompt_length + sequence.log_probs.size());
  ROLLOUT_CHECK(slot == kPendingToken) << "sequence " << sequence.id << " has no pending token";
  slot = token;
  sequence.log_probs.push_back(log_prob);
  const SamplingParams& params = *sequence.params;
  auto contains = [token](const std::vector<int32_t>& ids) {
    return std::find(ids.begin(), ids.end(), token) != ids.end();
  };
  if (!params.ignore_eos && contains(eos_ids_)) return FinishReason::kEos;
  if (contains(params.stop_token_ids)) return FinishReason::kStop;
  if (!params.stop.empty() &&
      stop_checkers.try_emplace(&sequence, *tokenizer_, params.stop).first->second.Add(token)) {
    return FinishReason::kStop;
  }
  const int64_t known = sequence.prompt_length + static_cast<int64_t>(sequence.log_probs.size());
  return known >= sequence.max_length ? FinishReason::kLength : FinishReason::kNone;
}

Completion Engine::MakeCompletion(Sequence& done, StopCheckers& stop_checkers) const {
  Completion completion;
  completion.tokens.assign(done.tokens.begin() + done.prompt_length, done.tokens.end());
  completion.log_probs = std::move(done.log_probs);
  completion.finish_reason = done.finish_reason;
  if (auto checker = stop_checkers.find(&done); checker != stop_checkers.end()) {
    completion.text = checker->second.TakeText();
    stop_checkers.erase(checker);
  } else if (tokenizer_ != nullptr) {
    completion.text = tokenizer_->Decode(completion.tokens, /*skip_special_tokens=*/true);
  }
  return completion;
}

struct Engine::InFlightStep {
  StepPlan plan;
  LaunchedStep samples;
  bool computes_prompt = false;  // some chunk computes prompt tokens
  double launch_seconds = 0;     // host time spent launching it
};

Engine::InFlightStep Engine::Launch(StepPlan plan) {
  InFlightStep step;
  step.samples = runner_->Launch(plan);
  // The samplers' next tokens exist only on the device until the step is applied.
  int32_t index = 0;
  for (const ScheduledChunk& chunk : plan.chunks) {
    step.computes_prompt |= chunk.start < chunk.sequence->prompt_length;
    const int64_t prompt_end =
        std::min(chunk.sequence->prompt_length, chunk.start + chunk.num_tokens);
    stats_.prompt_tokens_computed += std::max<int64_t>(0, prompt_end - chunk.start);
    for (Sequence* sampler : chunk.samplers) {
      sampler->tokens.push_back(kPendingToken);
      sampler->pending_source = index++;
    }
  }
  ++stats_.steps;
  stats_.preemptions += plan.num_preempted;
  stats_.peak_used_blocks = std::max<int64_t>(stats_.peak_used_blocks, blocks_->num_used_blocks());
  if (step.computes_prompt) ++stats_.prefill_steps;
  step.plan = std::move(plan);
  return step;
}

void Engine::Apply(const StepPlan& plan, const SampledStep& sampled, Scheduler& scheduler,
                   StopCheckers& stop_checkers) {
  size_t index = 0;
  for (const ScheduledChunk& chunk : plan.chunks) {
    for (Sequence* sequence : chunk.samplers) {
      const size_t i = index++;
      // Finished while this step ran: its row computed past the sequence's end.
      if (sequence->status == SequenceStatus::kFinished) continue;
      ++stats_.output_tokens;
      const FinishReason reason =
          ApplyToken(*sequence, sampled.tokens[i], sampled.log_probs[i], stop_checkers);
      if (reason == FinishReason::kNone) continue;
      // A draw of the step launched after this one is void.
      sequence->tokens.resize(sequence->prompt_length + sequence->log_probs.size());
      scheduler.Finish(sequence, reason);
    }
  }
}

absl::StatusOr<std::vector<RequestOutput>> Engine::Generate(
    absl::Span<const GenerationRequest> requests, const Progress& progress, int64_t finish_target) {
  if (absl::Status s = Validate(requests); !s.ok()) return s;
  SchedulerOptions scheduler_options;
  scheduler_options.max_num_seqs = options_.max_num_seqs;
  scheduler_options.max_num_batched_tokens = options_.max_num_batched_tokens;
  scheduler_options.enable_chunked_prefill = options_.enable_chunked_prefill;
  Scheduler scheduler(scheduler_options, blocks_.get());
  Enqueue(requests, scheduler);
  std::vector<RequestOutput> outputs(requests.size());
  int64_t total_samples = 0, finished_samples = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    outputs[i].samples.resize(requests[i].params.n);
    total_samples += requests[i].params.n;
  }

  StopCheckers stop_checkers;
  // Steps run one ahead: step k + 1 is planned and launched before step k's samples are
  // applied, so the device has work while the host handles them.
  std::optional<InFlightStep> in_flight;
  // Sequences that finished in the last iteration: the step in flight may name them.
  std::vector<std::unique_ptr<Sequence>> recently_finished;
  while (scheduler.HasUnfinished()) {
    auto start = std::chrono::steady_clock::now();
    auto lap = [&start](double* total) {
      const auto now = std::chrono::steady_clock::now();
      const double seconds = std::chrono::duration<double>(now - start).count();
      start = now;
      *total += seconds;
      return seconds;
    };
    StepPlan plan = scheduler.Schedule();
    if (plan.empty() && !in_flight) {
      return absl::InternalError("the scheduler found no work it could fit");
    }
    lap(&stats_.schedule_seconds);
    std::optional<InFlightStep> launched;
    if (!plan.empty()) {
      launched = Launch(std::move(plan));
      launched->launch_seconds = lap(&stats_.model_seconds);
    }
    if (in_flight) {
      const SampledStep sampled = in_flight->samples.Wait();
      const double wait_seconds = lap(&stats_.model_seconds);
      if (in_flight->computes_prompt) {
        stats_.prefill_step_seconds += in_flight->launch_seconds + wait_seconds;
      }
      Apply(in_flight->plan, sampled, scheduler, stop_checkers);
    }
    if (launched) scheduler.CompleteStep(launched->plan);
    in_flight = std::move(launched);
    std::vector<std::unique_ptr<Sequence>> finished = scheduler.TakeFinished();
    for (std::unique_ptr<Sequence>& done : finished) {
      outputs[done->request].samples[done->sample] = MakeCompletion(*done, stop_checkers);
      ++finished_samples;
    }
    recently_finished = std::move(finished);  // the older ones: no step names them now
    lap(&stats_.output_seconds);
    if (progress) progress(finished_samples, total_samples);
    if (finish_target > 0 && finished_samples >= finish_target && scheduler.HasUnfinished()) {
      // The step in flight computes for the aborted only: its samples are dropped.
      if (in_flight) in_flight->samples.Wait();
      in_flight.reset();
      scheduler.AbortUnfinished();
      for (RequestOutput& output : outputs) {
        for (Completion& sample : output.samples) {
          if (sample.finish_reason == FinishReason::kNone) sample.finish_reason = FinishReason::kAbort;
        }
      }
    }
  }
  return outputs;
}

}  // namespace rollout::engine
