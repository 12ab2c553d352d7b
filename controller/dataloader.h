// Which examples each training step takes: batches of example indices over a dataset
// of N examples, epoch after epoch, with a position that a checkpoint saves so a
// resumed run takes exactly the batches an uninterrupted one would.
//
// Epoch E visits the examples in file order (shuffle off) or in a permutation drawn
// from (seed, E): a Fisher–Yates shuffle written here, driven by std::mt19937_64
// seeded with a std::seed_seq of the 32-bit halves of seed and E. Both are fully
// specified by the C++ standard (std::shuffle and std::uniform_int_distribution are
// not), so the orders are the same with every compiler; every epoch gets its own
// order, reproducible from the seed alone. Like verl's training dataloader (drop_last=True), an
// epoch has floor(N / batch_size) batches: the last N % batch_size examples of its order sit out
// that epoch, so every step gets a full batch.
//
// A DataLoader is a value; it is not thread-safe (one trainer thread drives it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::controller {

struct DataLoaderOptions {
  int64_t batch_size = 1;  // data.train_batch_size
  bool shuffle = true;     // data.shuffle
  int64_t seed = 1;        // data.seed
};

class DataLoader {
 public:
  // The batch Next() returns next. After an epoch's last batch it is {epoch + 1, 0}.
  struct Position {
    int64_t epoch = 0;
    int64_t batch_in_epoch = 0;

    // {"epoch": E, "batch_in_epoch": B}, for trainer_state.json.
    std::string ToJson() const;
    // InvalidArgument unless `text` is such an object with non-negative integers.
    static absl::StatusOr<Position> FromJson(absl::string_view text);
  };

  // InvalidArgument when batch_size < 1 or batch_size > num_examples (naming both).
  static absl::StatusOr<DataLoader> Create(int64_t num_examples, const DataLoaderOptions& options);

  // Full batches per epoch: num_examples / batch_size, at least 1.
  int64_t steps_per_epoch() const { return num_examples_ / options_.batch_size; }
  const Position& position() const { return position_; }

  // batch_size example indices in [0, num_examples); moves to the next position.
  // Never runs out: the trainer stops after trainer.total_epochs * steps_per_epoch().
  std::vector<int64_t> Next();

  // Continues from a saved position. InvalidArgument when batch_in_epoch is not below
  // steps_per_epoch() (the dataset or batch size changed since it was saved) or a
  // field is negative.
  absl::Status Restore(const Position& position);

 private:
  DataLoader(int64_t num_examples, const DataLoaderOptions& options);

  // Makes order_ the visiting order of `epoch`.
  void PrepareEpoch(int64_t epoch);

  int64_t num_examples_;
  DataLoaderOptions options_;
  Position position_;
  std::vector<int64_t> order_;  // the visiting order of epoch order_epoch_
  int64_t order_epoch_ = -1;
};

// Validation batches: every example once, in file order, in batches of
// `val_batch_size` (the last may be smaller); 0 means one batch of everything. No
// batches for no examples. InvalidArgument for a negative val_batch_size.
absl::StatusOr<std::vector<std::vector<int64_t>>> ValidationBatches(int64_t num_examples,
                                                                    int64_t val_batch_size);

}  // namespace rollout::controller
