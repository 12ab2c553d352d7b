// Metrics travelling with a Batch: a worker method that trains returns its metrics
// (verl's names, e.g. "actor/pg_loss") in the reply's meta, as one JSON object under
// the key "metrics", and the controller reads them back.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "common/batch.h"

namespace rollout {

// Replaces the batch's metrics. Non-finite values travel as null and read back as NaN.
void SetBatchMetrics(const std::map<std::string, double>& metrics, Batch* batch);

// The batch's metrics (empty without any). DataLoss when the meta entry is not a JSON
// object of numbers.
absl::StatusOr<std::map<std::string, double>> GetBatchMetrics(const Batch& batch);

}  // namespace rollout
