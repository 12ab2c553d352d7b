#include "common/batch_metrics.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace rollout {
namespace {

constexpr char kMetricsKey[] = "metrics";

}  // namespace

void SetBatchMetrics(const std::map<std::string, double>& metrics, Batch* batch) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : metrics) {
    object[name] = std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
  }
  batch->SetMeta(kMetricsKey, object.dump());
}

absl::StatusOr<std::map<std::string, double>> GetBatchMetrics(const Batch& batch) {
  std::map<std::string, double> metrics;
  const std::string text = batch.Meta(kMetricsKey);
  if (text.empty()) return metrics;
  const nlohmann::json object = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) {
    return absl::DataLossError("batch meta 'metrics' is not a JSON object");
  }
  for (const auto& [name, value] : object.items()) {
    if (value.is_null()) {
      metrics[name] = std::numeric_limits<double>::quiet_NaN();
    } else if (value.is_number()) {
      metrics[name] = value.get<double>();
    } else {
      return absl::DataLossError("batch meta 'metrics': '" + name + "' is not a number");
    }
  }
  return metrics;
}

}  // namespace rollout
