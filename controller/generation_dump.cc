#include "controller/generation_dump.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace rollout::controller {
namespace {

using OrderedJson = nlohmann::ordered_json;

// A ground truth that is a JSON object or array (countdown's target and numbers) is
// written as JSON, as verl writes the Python value; anything else as its text, so
// GSM8K's "72" stays a string.
OrderedJson GroundTruthValue(const std::string& ground_truth) {
  if (!ground_truth.empty() && (ground_truth.front() == '{' || ground_truth.front() == '[')) {
    OrderedJson parsed = OrderedJson::parse(ground_truth, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) return parsed;
  }
  return ground_truth;
}

}  // namespace

std::string GenerationDumpLine(const GenerationRecord& record, int64_t step) {
  OrderedJson line;
  line["input"] = record.input;
  line["output"] = record.output;
  line["gts"] = GroundTruthValue(record.ground_truth);
  line["score"] = record.score;
  line["step"] = step;
  for (const auto& [name, value] : record.extra) {
    // The five names above are verl's; an extra value of the same name does not replace them.
    if (!line.contains(name)) line[name] = value;
  }
  return line.dump(-1, ' ', /*ensure_ascii=*/false, OrderedJson::error_handler_t::replace);
}

absl::Status WriteGenerationDump(const std::string& dir, int64_t step,
                                 const std::vector<GenerationRecord>& records) {
  std::string contents;
  for (const GenerationRecord& record : records) absl::StrAppend(&contents, GenerationDumpLine(record, step), "\n");
  const std::string path = JoinPath(dir, absl::StrCat(step, ".jsonl"));
  if (absl::Status written = WriteFileAtomically(path, contents); !written.ok()) {
    return absl::Status(written.code(), absl::StrCat("writing the generations of step ", step, " to ", path,
                                                     ": ", written.message()));
  }
  return absl::OkStatus();
}

std::vector<GenerationSample> GenerationsToLog(const std::vector<GenerationRecord>& records, int count) {
  std::vector<GenerationSample> samples;
  for (const GenerationRecord& record : records) samples.push_back({record.input, record.output, record.score});
  std::stable_sort(samples.begin(), samples.end(),
                   [](const GenerationSample& a, const GenerationSample& b) { return a.input < b.input; });
  std::mt19937 random(42);  // verl's seed; its numpy generator's order is not reproduced
  for (size_t i = samples.size(); i > 1; --i) std::swap(samples[i - 1], samples[random() % i]);
  samples.resize(std::min(samples.size(), static_cast<size_t>(std::max(count, 0))));
  return samples;
}

absl::Status AddGenerationDumpColumns(const std::vector<const PromptExample*>& examples, int n,
                                      const std::vector<rewards::ScoredSample>& scored, Batch* batch) {
  if (scored.size() != examples.size() * static_cast<size_t>(n)) {
    return absl::InternalError(absl::StrCat(scored.size(), " scored samples for ", examples.size(),
                                            " prompts of ", n, " responses"));
  }
  std::vector<std::string> ground_truths, extras;
  for (size_t row = 0; row < scored.size(); ++row) {
    ground_truths.push_back(examples[row / static_cast<size_t>(n)]->ground_truth);
    extras.push_back(nlohmann::json(scored[row].output.extra).dump());
  }
  RETURN_IF_ERROR(batch->AddStrings("ground_truth", std::move(ground_truths)));
  return batch->AddStrings("reward_extra", std::move(extras));
}

absl::StatusOr<std::vector<GenerationRecord>> GenerationRecordsOf(const Batch& batch) {
  ASSIGN_OR_RETURN(const std::vector<std::string> inputs, batch.Strings("prompt_text"));
  ASSIGN_OR_RETURN(const std::vector<std::string> outputs, batch.Strings("response_text"));
  ASSIGN_OR_RETURN(const std::vector<std::string> ground_truths, batch.Strings("ground_truth"));
  ASSIGN_OR_RETURN(const std::vector<std::string> extras, batch.Strings("reward_extra"));
  ASSIGN_OR_RETURN(const at::Tensor token_scores, batch.Tensor("token_level_scores"));
  const at::Tensor scores = token_scores.sum(1).to(at::kDouble).contiguous();
  std::vector<GenerationRecord> records(inputs.size());
  for (size_t row = 0; row < records.size(); ++row) {
    records[row].input = inputs[row];
    records[row].output = outputs[row];
    records[row].ground_truth = ground_truths[row];
    records[row].score = scores.data_ptr<double>()[row];
    // AddGenerationDumpColumns wrote the object; a non-finite value came back as null.
    const nlohmann::json extra = nlohmann::json::parse(extras[row]);
    for (const auto& [name, value] : extra.items()) {
      records[row].extra[name] = value.is_number() ? value.get<double>() : std::nan("");
    }
  }
  return records;
}

}  // namespace rollout::controller
