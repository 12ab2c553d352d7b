#include "workers/checkpoint_export.h"

#include <ATen/ATen.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_system.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "models/causal_lm.h"
#include "models/lora.h"
#include "models/safetensors.h"
#include "workers/checkpoint_io.h"

namespace rollout::workers {
namespace {

constexpr char kAdapterConfig[] = "adapter_config.json";
constexpr char kAdapterWeights[] = "adapter_model.safetensors";

using Tensors = std::vector<std::pair<std::string, at::Tensor>>;

absl::StatusOr<bool> Exists(const std::string& path) {
  ASSIGN_OR_RETURN(const FileInfo info, DefaultFileSystem()->Stat(path));
  return info.exists;
}

absl::Status CheckOutDir(const std::string& out_dir) {
  ASSIGN_OR_RETURN(const FileInfo info, DefaultFileSystem()->Stat(out_dir));
  if (!info.exists) return absl::OkStatus();
  if (!info.is_directory) {
    return absl::FailedPreconditionError(absl::StrCat(out_dir, " exists and is not a directory"));
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> names, ListDirectory(out_dir));
  if (names.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(out_dir, " exists and is not empty; export into a new or empty directory"));
}

absl::Status CopyFile(const std::string& from_dir, const std::string& to_dir, const std::string& name) {
  ASSIGN_OR_RETURN(const std::string contents, ReadFile(JoinPath(from_dir, name)));
  return WriteFileAtomically(JoinPath(to_dir, name), contents);
}

// huggingface/ but its weights (present when hf_model was saved; with LoRA the base's).
absl::Status CopyHfConfigFiles(const std::string& actor_dir, const std::string& out) {
  const std::string hf_dir = JoinPath(actor_dir, kHfModelDir);
  ASSIGN_OR_RETURN(const bool has_config, Exists(JoinPath(hf_dir, "config.json")));
  if (!has_config) {
    return absl::FailedPreconditionError(absl::StrCat(
        JoinPath(hf_dir, "config.json"), " is missing: the checkpoint was saved without 'model' in "
        "actor.checkpoint.save_contents, or by a version that did not write it"));
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> names, ListDirectory(hf_dir));
  for (const std::string& name : names) {
    if (absl::EndsWith(name, ".safetensors") || name == "model.safetensors.index.json") continue;
    RETURN_IF_ERROR(CopyFile(hf_dir, out, name));
  }
  return absl::OkStatus();
}

absl::Status WriteWeights(const std::string& out, const Tensors& tensors) {
  return models::WriteSafetensors(JoinPath(out, kModelFile), tensors, {{"format", "pt"}});
}

// Every tensor of the checkpoint's model.safetensors, as saved.
absl::Status ExportFullWeights(const std::string& actor_dir, const std::string& out) {
  ASSIGN_OR_RETURN(const std::unique_ptr<models::SafetensorsReader> reader,
                   models::SafetensorsReader::OpenFile(JoinPath(actor_dir, kModelFile)));
  Tensors tensors;
  for (const std::string& name : reader->Names()) {
    ASSIGN_OR_RETURN(at::Tensor tensor, reader->Load(name));
    tensors.emplace_back(name, std::move(tensor));
  }
  return WriteWeights(out, tensors);
}

absl::StatusOr<std::string> BaseModelPath(const std::string& adapter_dir) {
  const std::string path = JoinPath(adapter_dir, kAdapterConfig);
  ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  try {
    return nlohmann::json::parse(text).at("base_model_name_or_path").get<std::string>();
  } catch (const nlohmann::json::exception& error) {
    return absl::DataLossError(absl::StrCat(path, ": ", error.what()));
  }
}

// The base model with the adapter merged, in the dtype the base is stored in.
absl::Status ExportMergedWeights(const std::string& adapter_dir, const std::string& out) {
  ASSIGN_OR_RETURN(const std::string base, BaseModelPath(adapter_dir));
  const std::string context =
      absl::StrCat("base model ", base, " (", kAdapterConfig, "'s base_model_name_or_path)");
  ASSIGN_OR_RETURN(const std::unique_ptr<models::SafetensorsReader> reader,
                   WithContext(models::SafetensorsReader::OpenDirectory(base), context));
  ASSIGN_OR_RETURN(const models::TensorInfo stored,
                   WithContext(reader->Info("model.embed_tokens.weight"), context));
  models::LoadOptions options;
  options.dtype = at::kFloat;
  ASSIGN_OR_RETURN(const std::unique_ptr<models::CausalLM> model,
                   WithContext(models::CausalLM::Load(base, options), context));
  RETURN_IF_ERROR(models::LoadLoraAdapter(*model, adapter_dir).status());
  models::MergeLora(*model);
  Tensors tensors;
  for (const auto& [name, tensor] : model->NamedParameters()) {
    tensors.emplace_back(name, tensor->to(stored.dtype));
  }
  return WriteWeights(out, tensors);
}

absl::Status WriteExport(const std::string& actor_dir, bool lora, const ExportOptions& options,
                         const std::string& out) {
  const std::string adapter_dir = JoinPath(actor_dir, kLoraAdapterDir);
  if (options.adapter_only) {
    RETURN_IF_ERROR(CopyFile(adapter_dir, out, kAdapterConfig));
    return CopyFile(adapter_dir, out, kAdapterWeights);
  }
  RETURN_IF_ERROR(CopyHfConfigFiles(actor_dir, out));
  return lora ? ExportMergedWeights(adapter_dir, out) : ExportFullWeights(actor_dir, out);
}

// A fresh directory next to `out_dir` (same filesystem, so a rename moves it), with
// the permissions of any new directory (mkdtemp's would be 0700).
absl::StatusOr<std::string> MakeScratchDir(const std::string& out_dir) {
  const std::string path = absl::StrCat(out_dir, ".export-", getpid());
  if (mkdir(path.c_str(), 0777) != 0) {
    return ErrnoError(absl::StrCat("creating the scratch directory ", path), errno);
  }
  return path;
}

}  // namespace

absl::Status ExportActorCheckpoint(const std::string& actor_dir, const std::string& out_dir,
                                   const ExportOptions& options) {
  const std::string out = NormalizePath(out_dir);
  RETURN_IF_ERROR(CheckOutDir(out));
  ASSIGN_OR_RETURN(const bool lora, Exists(JoinPath(actor_dir, kLoraAdapterDir)));
  if (options.adapter_only && !lora) {
    return absl::FailedPreconditionError(absl::StrCat(
        actor_dir, " is a full-weight checkpoint (no ", kLoraAdapterDir,
        "/): there is no adapter to export"));
  }
  RETURN_IF_ERROR(MakeDirectories(Dirname(out)));
  ASSIGN_OR_RETURN(const std::string scratch, MakeScratchDir(out));
  absl::Status status = WriteExport(actor_dir, lora, options, scratch);
  if (status.ok()) status = SyncDirectory(scratch);
  // rename(2) replaces an empty directory: CheckOutDir allowed no other.
  if (status.ok()) status = DefaultFileSystem()->Rename(scratch, out);
  if (!status.ok()) {
    RemoveTree(scratch).IgnoreError();  // the export's error is the one to report
    return status;
  }
  return SyncDirectory(Dirname(out));
}

}  // namespace rollout::workers
