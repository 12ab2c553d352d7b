#include "controller/validation_metrics.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace rollout::controller {
namespace {

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

// The index of the most frequent text, the first of them on ties.
size_t MajorityIndex(const std::vector<std::string>& texts) {
  size_t best = 0, best_count = 0;
  for (size_t a = 0; a < texts.size(); ++a) {
    const size_t count = static_cast<size_t>(std::count(texts.begin(), texts.end(), texts[a]));
    if (count > best_count) best = a, best_count = count;
  }
  return best;
}

}  // namespace

std::map<std::string, double> ValidationMetrics(const std::map<std::string, std::vector<PromptSamples>>& by_source,
                                                int n) {
  std::map<std::string, double> metrics;
  for (const auto& [source, prompts] : by_source) {
    const bool has_acc = !prompts.empty() && prompts.front().accs.size() == static_cast<size_t>(n);
    for (const char* var : {"reward", "acc"}) {
      const bool is_acc = std::string(var) == "acc";
      if (is_acc && !has_acc) continue;
      const std::string section = is_acc == has_acc ? "val-core" : "val-aux";
      const std::string prefix = absl::StrCat(section, "/", source, "/", var, "/");
      std::vector<double> means, bests, majorities;
      for (const PromptSamples& samples : prompts) {
        const std::vector<double>& values = is_acc ? samples.accs : samples.scores;
        means.push_back(Mean(values));
        bests.push_back(*std::max_element(values.begin(), values.end()));
        majorities.push_back(values[MajorityIndex(samples.texts)]);
      }
      metrics[absl::StrCat(prefix, "mean@", n)] = Mean(means);
      if (n > 1) {
        metrics[absl::StrCat(prefix, "best@", n, "/mean")] = Mean(bests);
        metrics[absl::StrCat(prefix, "maj@", n, "/mean")] = Mean(majorities);
      }
    }
  }
  return metrics;
}

}  // namespace rollout::controller
