#include "workers/checkpoint_io.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/check.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "models/safetensors.h"
#include "models/tokenizer_files.h"

namespace rollout::workers {
namespace {

constexpr const char* kStateSuffixes[] = {".exp_avg", ".exp_avg_sq", ".step"};
constexpr char kMasterSuffix[] = ".master";

// A file of a part that load_contents asks for and the checkpoint lacks is the
// recipe's to fix, not damage: NotFound becomes FailedPrecondition.
absl::Status MissingPart(const absl::Status& status, absl::string_view part) {
  if (!absl::IsNotFound(status)) return status;
  return absl::FailedPreconditionError(
      absl::StrCat(status.message(), " (the checkpoint was saved without '", part,
                   "' in save_contents; leave it out of load_contents)"));
}

template <typename T>
absl::StatusOr<T> PartFile(absl::StatusOr<T> result, absl::string_view part) {
  if (result.ok()) return result;
  return MissingPart(result.status(), part);
}

// The generators whose states `extra` keeps, by device type: the CPU's, and the role
// device's when it is another.
std::map<std::string, at::Generator> Generators(c10::Device device) {
  std::map<std::string, at::Generator> generators = {
      {"cpu", at::globalContext().defaultGenerator(c10::Device(c10::kCPU))}};
  if (!device.is_cpu()) {
    generators.emplace(c10::DeviceTypeName(device.type(), /*lower_case=*/true),
                       at::globalContext().defaultGenerator(device));
  }
  return generators;
}

std::string GeneratorStateHex(at::Generator& generator) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  const at::Tensor state = generator.get_state().contiguous();
  return absl::BytesToHexString(
      absl::string_view(static_cast<const char*>(state.data_ptr()), state.nbytes()));
}

absl::Status SetGeneratorState(at::Generator& generator, const std::string& hex) {
  if (hex.size() % 2 != 0 || hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return absl::DataLossError("not a hex string");
  }
  const std::string bytes = absl::HexStringToBytes(hex);
  at::Tensor state = at::empty({static_cast<int64_t>(bytes.size())}, at::kByte);
  std::memcpy(state.data_ptr(), bytes.data(), bytes.size());
  std::lock_guard<std::mutex> lock(generator.mutex());
  try {
    generator.set_state(state);
  } catch (const c10::Error& error) {
    return absl::DataLossError(error.what_without_backtrace());
  }
  return absl::OkStatus();
}

absl::Status SaveExtra(const RoleCheckpoint& role, const std::string& path) {
  nlohmann::json rng = nlohmann::json::object();
  for (auto& [name, generator] : Generators(role.device)) rng[name] = GeneratorStateHex(generator);
  const nlohmann::json extra = {{"updates", *role.updates}, {"rng", rng}};
  return WriteFileAtomically(path, extra.dump(1) + "\n");
}

absl::Status LoadExtra(const RoleCheckpoint& role, const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, PartFile(ReadFile(path), "extra"));
  int64_t updates = 0;
  std::map<std::string, std::string> states;
  try {
    const nlohmann::json extra = nlohmann::json::parse(text);
    updates = extra.at("updates").get<int64_t>();
    states = extra.at("rng").get<std::map<std::string, std::string>>();
  } catch (const nlohmann::json::exception& error) {
    return absl::DataLossError(absl::StrCat(path, ": ", error.what()));
  }
  if (updates < 0) return absl::DataLossError(absl::StrCat(path, ": updates is ", updates));
  for (auto& [name, generator] : Generators(role.device)) {
    const auto state = states.find(name);
    // A checkpoint saved on another device type has no state for this generator.
    if (state == states.end()) continue;
    RETURN_IF_ERROR(
        WithContext(SetGeneratorState(generator, state->second), absl::StrCat(path, ": rng.", name)));
  }
  *role.updates = updates;
  return absl::OkStatus();
}

absl::Status SaveOptimizer(const RoleCheckpoint& role, const std::string& path) {
  ROLLOUT_CHECK(!role.optimizer->sharded() || role.gathered_states.size() == role.trainable_names.size());
  const std::vector<AdamW::State>& states =
      role.optimizer->sharded() ? role.gathered_states : role.optimizer->states();
  ROLLOUT_CHECK(states.size() == role.trainable_names.size());
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (size_t i = 0; i < states.size(); ++i) {
    if (!states[i].step.defined()) continue;  // never stepped: no state
    const std::string& name = role.trainable_names[i];
    tensors.emplace_back(name + kStateSuffixes[0], states[i].exp_avg);
    tensors.emplace_back(name + kStateSuffixes[1], states[i].exp_avg_sq);
    tensors.emplace_back(name + kStateSuffixes[2], states[i].step);
    if (states[i].master.defined()) tensors.emplace_back(name + kMasterSuffix, states[i].master);
  }
  return models::WriteSafetensors(path, tensors);
}

// The state of trainable tensor `name` from `loaded` (file entries by name): all three
// entries and an optional master, or none (never stepped).
absl::StatusOr<AdamW::State> TakeOptimizerState(std::map<std::string, at::Tensor>& loaded,
                                                const std::string& path, const std::string& name) {
  std::vector<at::Tensor> parts;
  for (const char* suffix : kStateSuffixes) {
    auto it = loaded.find(name + suffix);
    if (it == loaded.end()) continue;
    parts.push_back(std::move(it->second));
    loaded.erase(it);
  }
  at::Tensor master;
  if (auto it = loaded.find(name + kMasterSuffix); it != loaded.end()) {
    master = std::move(it->second);
    loaded.erase(it);
  }
  if (parts.empty() && !master.defined()) return AdamW::State();
  if (parts.size() != 3) {
    return absl::DataLossError(absl::StrCat(path, ": the state of ", name,
                                            " lacks some of exp_avg, exp_avg_sq and step"));
  }
  return AdamW::State{parts[0], parts[1], parts[2], master};
}

// The index in `trained` (trained tensor name -> index) of the tensor whose state
// file entry `entry` is, if any.
std::optional<size_t> TrainedTensorOf(const std::string& entry, const std::map<std::string, size_t>& trained) {
  std::vector<absl::string_view> suffixes(std::begin(kStateSuffixes), std::end(kStateSuffixes));
  suffixes.push_back(kMasterSuffix);
  for (absl::string_view suffix : suffixes) {
    if (!absl::EndsWith(entry, suffix)) continue;
    const auto it = trained.find(entry.substr(0, entry.size() - suffix.size()));
    if (it != trained.end()) return it->second;
  }
  return std::nullopt;
}

absl::Status LoadOptimizer(const RoleCheckpoint& role, const std::string& path) {
  ASSIGN_OR_RETURN(const std::unique_ptr<models::SafetensorsReader> reader,
                   PartFile(models::SafetensorsReader::OpenFile(path), "optimizer"));
  std::map<std::string, size_t> trained;
  for (size_t i = 0; i < role.trainable_names.size(); ++i) trained[role.trainable_names[i]] = i;
  // This rank's share (all of it unsharded), read front to back, then handed over.
  std::map<std::string, at::Tensor> loaded;
  for (const std::string& entry : reader->NamesInFileOrder()) {
    const std::optional<size_t> index = TrainedTensorOf(entry, trained);
    if (!index.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, " holds optimizer state for ", entry,
          ", which this run does not train (a checkpoint of another model or LoRA setting)"));
    }
    if (role.optimizer->Owns(*index)) {
      ASSIGN_OR_RETURN(loaded[entry], reader->Load(entry));
    }
  }
  std::vector<AdamW::State> states(role.trainable_names.size());
  for (size_t i = 0; i < states.size(); ++i) {
    if (!role.optimizer->Owns(i)) continue;
    ASSIGN_OR_RETURN(states[i], TakeOptimizerState(loaded, path, role.trainable_names[i]));
  }
  return WithContext(role.optimizer->RestoreStates(std::move(states)), path);
}

}  // namespace

absl::StatusOr<CheckpointParts> ParseCheckpointParts(
    const google::protobuf::RepeatedPtrField<std::string>& names, absl::string_view key) {
  CheckpointParts parts;
  for (const std::string& name : names) {
    if (name == "model") {
      parts.model = true;
    } else if (name == "optimizer") {
      parts.optimizer = true;
    } else if (name == "extra") {
      parts.extra = true;
    } else if (name == "hf_model") {
      parts.hf_model = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          key, ": '", name, "' is not a checkpoint part; expected model, optimizer, extra or hf_model"));
    }
  }
  return parts;
}

absl::Status SaveRoleCheckpoint(const RoleCheckpoint& role, const CheckpointParts& parts,
                                const std::string& dir) {
  RETURN_IF_ERROR(MakeDirectories(dir));
  if (parts.model) RETURN_IF_ERROR(role.save_model(dir));
  if (parts.optimizer) RETURN_IF_ERROR(SaveOptimizer(role, JoinPath(dir, kOptimizerFile)));
  if (parts.extra) RETURN_IF_ERROR(SaveExtra(role, JoinPath(dir, kExtraStateFile)));
  const std::string hf_dir = JoinPath(dir, kHfModelDir);
  const bool hf_config = (parts.model || parts.hf_model) && role.save_hf_config;
  if (hf_config || parts.hf_model) RETURN_IF_ERROR(MakeDirectories(hf_dir));
  if (hf_config) RETURN_IF_ERROR(role.save_hf_config(hf_dir));
  if (parts.hf_model) RETURN_IF_ERROR(role.save_hf_model(hf_dir));
  return absl::OkStatus();
}

absl::Status LoadRoleCheckpoint(const RoleCheckpoint& role, const CheckpointParts& parts,
                                const std::string& dir) {
  if (parts.model) RETURN_IF_ERROR(MissingPart(role.load_model(dir), "model"));
  if (parts.optimizer) RETURN_IF_ERROR(LoadOptimizer(role, JoinPath(dir, kOptimizerFile)));
  if (parts.extra) RETURN_IF_ERROR(LoadExtra(role, JoinPath(dir, kExtraStateFile)));
  return absl::OkStatus();
}

absl::Status SaveHfConfigFiles(const models::TransformerConfig& config, const std::string& model_dir,
                               const std::string& tokenizer_dir, const std::string& dir) {
  RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, "config.json"), models::HfConfigJson(config)));
  const absl::StatusOr<std::string> generation =
      ReadFile(JoinPath(model_dir, "generation_config.json"));
  if (generation.ok()) {
    RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, "generation_config.json"), *generation));
  } else if (!absl::IsNotFound(generation.status())) {
    return generation.status();
  }
  return models::CopyTokenizerFiles(tokenizer_dir, dir);
}

absl::Status SaveNamedTensors(const std::string& path, const NamedTensors& tensors) {
  std::vector<std::pair<std::string, at::Tensor>> values;
  for (const auto& [name, tensor] : tensors) values.emplace_back(name, *tensor);
  return models::WriteSafetensors(path, values);
}

absl::Status LoadNamedTensors(const std::string& path, const NamedTensors& tensors) {
  ASSIGN_OR_RETURN(const std::unique_ptr<models::SafetensorsReader> reader,
                   models::SafetensorsReader::OpenFile(path));
  // Every tensor checked before any is overwritten, then read in file order.
  std::map<std::string, at::Tensor*> wanted;
  for (const auto& [name, tensor] : tensors) {
    if (!reader->Has(name)) return absl::DataLossError(absl::StrCat(path, " has no tensor ", name));
    ASSIGN_OR_RETURN(const models::TensorInfo info, reader->Info(name));
    if (at::IntArrayRef(info.shape) != tensor->sizes() || info.dtype != tensor->scalar_type()) {
      return absl::DataLossError(absl::StrCat(
          path, ": tensor ", name, " is ", c10::toString(info.dtype), " [",
          absl::StrJoin(info.shape, ","), "]; the model's is ", c10::toString(tensor->scalar_type()), " [",
          absl::StrJoin(tensor->sizes(), ","), "]"));
    }
    wanted[name] = tensor;
  }
  for (const std::string& name : reader->Names()) {
    if (wanted.count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, " holds ", name,
                                                     ", which the model does not have (another model or "
                                                     "LoRA setting)"));
    }
  }
  c10::NoGradGuard no_grad;
  for (const std::string& name : reader->NamesInFileOrder()) {
    at::Tensor& tensor = *wanted[name];
    if (tensor.device().is_cpu() && tensor.is_contiguous()) {
      RETURN_IF_ERROR(reader->ReadInto(name, tensor));
    } else {
      ASSIGN_OR_RETURN(const at::Tensor loaded, reader->Load(name));
      tensor.copy_(loaded);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CheckpointDirOf(const Batch& input, absl::string_view method) {
  std::string dir = input.Meta("dir");
  if (dir.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(method, ": meta 'dir' (the role directory) is empty"));
  }
  return dir;
}

}  // namespace rollout::workers
