// A training role's files in a checkpoint: one role directory (<checkpoint>/actor,
// <checkpoint>/critic, see controller/checkpoint_store.h), by the parts verl's
// `<role>.checkpoint.save_contents` / `load_contents` name:
//   model      model.safetensors: the trained weights by HF name, bit for bit; with LoRA
//              lora_adapter/ in PEFT's format instead (the base weights are the
//              recipe's model and are not saved again). For a role with
//              save_hf_config (the actor) also huggingface/ with the HF config
//              (config.json, generation_config.json when the model has one) and the
//              tokenizer files, as verl writes them: small, and what `rollout ckpt
//              export` needs (workers/checkpoint_export.h)
//   optimizer  optim.safetensors: AdamW's "<name>.exp_avg", "<name>.exp_avg_sq" and
//              "<name>.step" for each trained tensor that has stepped, and for a
//              bfloat16 / float16 one its float32 "<name>.master" (workers/adamw.h), so
//              that a resumed run goes on from the same float32 weights; a tensor that
//              never had a gradient has no entries and loads as "no state"
//   extra      extra_state.json: {"updates": N, "rng": {"cpu": hex, ...}}: the number of
//              updates (the LR schedule's position) and the random generators' states
//              (CPU, and the role's device when it is not the CPU)
//   hf_model   adds the weights to huggingface/ (model.safetensors), making it a
//              complete HF model directory; saved only, never loaded. With LoRA it holds
//              the base weights (`rollout ckpt export` merges the adapter into them)
// Every file is fsynced as it is written; the directory entries become durable when the
// controller commits the checkpoint. Nothing depends on the data-parallel world size:
// the directory holds one copy of every tensor, written by rank 0 (with the optimizer
// state gathered from every rank when it is sharded).
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/batch.h"
#include "google/protobuf/repeated_field.h"
#include "models/hf_config.h"
#include "workers/adamw.h"

namespace rollout::workers {

inline constexpr char kModelFile[] = "model.safetensors";
// The actor's reference copy, refreshed toward it (ref.sync_ref_model).
inline constexpr char kRefModelFile[] = "ref_model.safetensors";
inline constexpr char kLoraAdapterDir[] = "lora_adapter";
inline constexpr char kOptimizerFile[] = "optim.safetensors";
inline constexpr char kExtraStateFile[] = "extra_state.json";
inline constexpr char kHfModelDir[] = "huggingface";

struct CheckpointParts {
  bool model = false;
  bool optimizer = false;
  bool extra = false;
  bool hf_model = false;
};

// The parts `names` lists (model, optimizer, extra, hf_model). InvalidArgument naming
// `key` (e.g. "actor.checkpoint.save_contents") for any other name.
absl::StatusOr<CheckpointParts> ParseCheckpointParts(
    const google::protobuf::RepeatedPtrField<std::string>& names, absl::string_view key);

using NamedTensors = std::vector<std::pair<std::string, at::Tensor*>>;

// What one role's worker checkpoints. The pointers must stay valid while it is used.
struct RoleCheckpoint {
  // model: writes / reads the weights in the role directory (model.safetensors, or a
  // LoRA adapter), fsynced.
  std::function<absl::Status(const std::string& dir)> save_model;
  std::function<absl::Status(const std::string& dir)> load_model;
  // model: writes the small files of an HF model directory (config.json,
  // generation_config.json, tokenizer files) at the given path (created by the
  // caller). A role without it writes no huggingface/ with its model part.
  std::function<absl::Status(const std::string& dir)> save_hf_config;
  // hf_model: writes the weights of an HF model directory at the given path (created
  // by the caller), after save_hf_config wrote the rest; a role without
  // save_hf_config writes the whole directory here.
  std::function<absl::Status(const std::string& dir)> save_hf_model;
  // optimizer: the optimizer and the names of its tensors, in its order. A sharded
  // optimizer (optimizer_shards.h) loads only its rank's share of the file, and saves
  // `gathered_states`: every tensor's state, GatherStates' on rank 0.
  AdamW* optimizer = nullptr;
  std::vector<std::string> trainable_names;
  std::vector<AdamW::State> gathered_states;
  // extra: the learner's update counter.
  int64_t* updates = nullptr;
  c10::Device device = c10::Device(c10::kCPU);
};

// Writes `parts` of `role` into `dir` (created when missing).
absl::Status SaveRoleCheckpoint(const RoleCheckpoint& role, const CheckpointParts& parts,
                                const std::string& dir);

// Restores `parts` (hf_model ignored) of `role` from `dir`, exactly as saved.
// FailedPrecondition naming the file when a part is not in the directory (saved
// without it); DataLoss naming the file and tensor for malformed contents;
// InvalidArgument when the contents do not fit this role (tensors of another model or
// LoRA setting). On error the role is partly loaded and must not train on.
absl::Status LoadRoleCheckpoint(const RoleCheckpoint& role, const CheckpointParts& parts,
                                const std::string& dir);

// The small files of an HF model directory, written into `dir` (which must exist):
// config.json for `config`, `model_dir`'s generation_config.json copied as it is (HF
// sampling defaults included) when it has one, and `tokenizer_dir`'s tokenizer files
// (models/tokenizer_files.h). Each file atomic and fsynced; errors name the file.
absl::Status SaveHfConfigFiles(const models::TransformerConfig& config, const std::string& model_dir,
                               const std::string& tokenizer_dir, const std::string& dir);

// Writes `tensors` as a safetensors file (crash-safe and fsynced, models/safetensors.h).
absl::Status SaveNamedTensors(const std::string& path, const NamedTensors& tensors);
// Copies every one of `tensors` from the file, bit for bit. NotFound without the file;
// DataLoss naming the file and tensor when one is missing or its shape or dtype
// differs; InvalidArgument when the file holds a tensor not in `tensors`.
absl::Status LoadNamedTensors(const std::string& path, const NamedTensors& tensors);

// The role directory a `<role>.save_checkpoint` / `load_checkpoint` call names in its
// meta "dir"; InvalidArgument naming `method` when it is empty.
absl::StatusOr<std::string> CheckpointDirOf(const Batch& input, absl::string_view method);

}  // namespace rollout::workers
