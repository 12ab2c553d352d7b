// `rollout ckpt export`: an actor checkpoint directory (workers/checkpoint_io.h) as
// what HF tools load. The directory's huggingface/ holds the run's config.json,
// generation_config.json and tokenizer files (the model part writes them); from it:
//   full-weight run  an HF model directory: those files and model.safetensors with
//                    the trained weights as saved (same names, dtype and bytes)
//   LoRA run         the same, with the adapter merged into the base weights:
//                    W + (lora_alpha / r) B A, computed in float32 and stored in the
//                    base model's dtype; the base is adapter_config.json's
//                    base_model_name_or_path (the run's actor.model.path)
//   LoRA, adapter_only   lora_adapter/ as it is, for peft: adapter_config.json and
//                    adapter_model.safetensors
// Weight files carry safetensors metadata {"format": "pt"}, which transformers asks
// for. The output is written in a scratch directory next to `out_dir` and renamed
// into place, so `out_dir` ends up complete or not at all.
//
// The checkpoint's files are trusted: the caller verifies them against the manifest
// first (controller/checkpoint_export_source.h).
#pragma once

#include <string>

#include "absl/status/status.h"

namespace rollout::workers {

struct ExportOptions {
  bool adapter_only = false;  // LoRA runs: the PEFT adapter directory alone
};

// Writes `out_dir` from `actor_dir`. FailedPrecondition when `out_dir` exists and is
// not an empty directory, when adapter_only is asked of a full-weight checkpoint, or
// when huggingface/config.json is missing (saved without the model part, or by an
// older version); NotFound naming the base model when it is gone; the readers'
// DataLoss / InvalidArgument naming the file otherwise.
absl::Status ExportActorCheckpoint(const std::string& actor_dir, const std::string& out_dir,
                                   const ExportOptions& options);

}  // namespace rollout::workers
