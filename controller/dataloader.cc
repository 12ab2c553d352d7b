#include "controller/dataloader.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/uniform_random.h"

namespace rollout::controller {
namespace {

std::seed_seq::result_type Low32(int64_t value) {
  return static_cast<std::seed_seq::result_type>(static_cast<uint64_t>(value) & 0xffffffffu);
}

std::seed_seq::result_type High32(int64_t value) {
  return static_cast<std::seed_seq::result_type>(static_cast<uint64_t>(value) >> 32);
}

absl::StatusOr<int64_t> NonNegativeField(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end())
    return absl::InvalidArgumentError(absl::StrCat("\"", key, "\" is missing"));
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", key, "\" must be a non-negative integer, not ", it->dump()));
  }
  return it->get<int64_t>();
}

}  // namespace

std::string DataLoader::Position::ToJson() const {
  return nlohmann::json{{"epoch", epoch}, {"batch_in_epoch", batch_in_epoch}}.dump();
}

absl::StatusOr<DataLoader::Position> DataLoader::Position::FromJson(absl::string_view text) {
  const auto fail = [&](absl::string_view problem) {
    return absl::InvalidArgumentError(absl::StrCat("dataloader position '", text, "': ", problem));
  };
  const nlohmann::json json =
      nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return fail("not valid JSON");
  if (!json.is_object()) return fail("not a JSON object");
  Position position;
  for (const auto& [key, target] : {std::pair<const char*, int64_t*>{"epoch", &position.epoch},
                                    {"batch_in_epoch", &position.batch_in_epoch}}) {
    absl::StatusOr<int64_t> value = NonNegativeField(json, key);
    if (!value.ok()) return fail(value.status().message());
    *target = *value;
  }
  return position;
}

absl::StatusOr<DataLoader> DataLoader::Create(int64_t num_examples,
                                              const DataLoaderOptions& options) {
  if (options.batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch size must be at least 1, not ", options.batch_size));
  }
  if (options.batch_size > num_examples) {
    return absl::InvalidArgumentError(absl::StrCat("batch size ", options.batch_size,
                                                   " is larger than the dataset (", num_examples,
                                                   " examples)"));
  }
  return DataLoader(num_examples, options);
}

DataLoader::DataLoader(int64_t num_examples, const DataLoaderOptions& options)
    : num_examples_(num_examples), options_(options) {}

std::vector<int64_t> DataLoader::Next() {
  PrepareEpoch(position_.epoch);
  const auto begin = order_.begin() + position_.batch_in_epoch * options_.batch_size;
  std::vector<int64_t> batch(begin, begin + options_.batch_size);
  if (++position_.batch_in_epoch == steps_per_epoch()) {
    ++position_.epoch;
    position_.batch_in_epoch = 0;
  }
  return batch;
}

absl::Status DataLoader::Restore(const Position& position) {
  if (position.epoch < 0 || position.batch_in_epoch < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("dataloader position ", position.ToJson(), " has a negative field"));
  }
  if (position.batch_in_epoch >= steps_per_epoch()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dataloader position ", position.ToJson(), " is past the end of an epoch of ",
        steps_per_epoch(), " batches (", num_examples_, " examples in batches of ",
        options_.batch_size, "); did the dataset or batch size change since it was saved?"));
  }
  position_ = position;
  return absl::OkStatus();
}

void DataLoader::PrepareEpoch(int64_t epoch) {
  if (order_epoch_ == epoch) return;
  if (options_.shuffle) {
    std::seed_seq seeds{Low32(options_.seed), High32(options_.seed), Low32(epoch), High32(epoch)};
    std::mt19937_64 generator(seeds);
    order_ = ShuffledRange(num_examples_, generator);
  } else {
    order_.resize(num_examples_);
    std::iota(order_.begin(), order_.end(), 0);
  }
  order_epoch_ = epoch;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ValidationBatches(int64_t num_examples,
                                                                    int64_t val_batch_size) {
  if (val_batch_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("validation batch size must be 0 (one batch) or more, not ", val_batch_size));
  }
  const int64_t batch_size = val_batch_size == 0 ? num_examples : val_batch_size;
  std::vector<std::vector<int64_t>> batches;
  for (int64_t begin = 0; begin < num_examples; begin += batch_size) {
    std::vector<int64_t>& batch = batches.emplace_back(std::min(batch_size, num_examples - begin));
    std::iota(batch.begin(), batch.end(), begin);
  }
  return batches;
}

}  // namespace rollout::controller
