#include "controller/overlong_prompts.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace rollout::controller {
namespace {

// Prompts a worker.prompt_lengths call counts, so one call's strings stay small.
constexpr size_t kPromptsPerCall = 4096;

absl::StatusOr<std::vector<int64_t>> PromptLengths(WorkerGroup& group, const std::vector<PromptExample>& examples,
                                                   size_t begin, size_t end) {
  std::vector<std::string> prompts, formats;
  for (size_t i = begin; i < end; ++i) {
    prompts.push_back(examples[i].prompt.content);
    formats.push_back(examples[i].prompt.format == Prompt::Format::kChat ? "chat" : "text");
  }
  Batch input;
  RETURN_IF_ERROR(input.AddStrings("prompt", std::move(prompts)));
  RETURN_IF_ERROR(input.AddStrings("prompt_format", std::move(formats)));
  ASSIGN_OR_RETURN(const Batch output, group.CallRankZero("worker.prompt_lengths", input));
  ASSIGN_OR_RETURN(const at::Tensor lengths, output.Tensor("prompt_length"));
  if (lengths.numel() != static_cast<int64_t>(end - begin)) {
    return absl::InternalError(absl::StrCat("worker.prompt_lengths returned ", lengths.numel(), " lengths for ",
                                            end - begin, " prompts"));
  }
  const at::Tensor host = lengths.to(at::kCPU, at::kLong).contiguous();
  return std::vector<int64_t>(host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel());
}

}  // namespace

absl::Status DropOverlongPrompts(WorkerGroup& group, int64_t max_prompt_length, const char* what,
                                 Dataset<PromptExample>* dataset) {
  std::vector<PromptExample>& examples = dataset->examples;
  std::vector<PromptExample> kept;
  std::string first_dropped;
  for (size_t begin = 0; begin < examples.size(); begin += kPromptsPerCall) {
    const size_t end = std::min(examples.size(), begin + kPromptsPerCall);
    ASSIGN_OR_RETURN(const std::vector<int64_t> lengths, PromptLengths(group, examples, begin, end));
    for (size_t i = begin; i < end; ++i) {
      if (lengths[i - begin] <= max_prompt_length) {
        kept.push_back(std::move(examples[i]));
      } else if (first_dropped.empty()) {
        first_dropped = absl::StrCat(examples[i].where, " (", lengths[i - begin], " tokens)");
      }
    }
  }
  const size_t dropped = examples.size() - kept.size();
  if (kept.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("data.filter_overlong_prompts: every one of the ", dropped, " ",
                                                   what, " prompts is longer than data.max_prompt_length (",
                                                   max_prompt_length, " tokens); the first: ", first_dropped));
  }
  if (dropped > 0) {
    ROLLOUT_LOG(INFO) << "data.filter_overlong_prompts: dropped " << dropped << " of " << examples.size() << " "
                      << what << " prompts longer than data.max_prompt_length (" << max_prompt_length
                      << " tokens); the first: " << first_dropped;
  }
  examples = std::move(kept);
  return absl::OkStatus();
}

}  // namespace rollout::controller
