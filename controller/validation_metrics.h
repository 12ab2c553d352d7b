// verl's validation metrics (RayPPOTrainer._validate's process_validation_metrics) from
// the scored samples of one validation pass, per data_source and per prompt:
//   val-core/<source>/<var>/mean@N        the mean over prompts of each prompt's mean
//   val-core/<source>/<var>/best@N/mean   ... of each prompt's best value   (N > 1)
//   val-core/<source>/<var>/maj@N/mean    ... of the value of each prompt's most frequent
//                                         response, the first of them on ties (N > 1)
// where <var> is acc when the reward reports it for every sample (the reward then under
// val-aux/), else reward.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace rollout::controller {

// One prompt's N samples, in sampling order.
struct PromptSamples {
  std::vector<double> scores;
  std::vector<double> accs;        // the reward's "acc" extra value, where it reports one
  std::vector<std::string> texts;  // the responses, without surrounding white space
};

// `by_source`: data_source -> its prompts, each with `n` samples.
std::map<std::string, double> ValidationMetrics(const std::map<std::string, std::vector<PromptSamples>>& by_source,
                                                int n);

}  // namespace rollout::controller
