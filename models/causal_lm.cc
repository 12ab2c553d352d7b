#include "models/causal_lm.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/check.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/torch_compat.h"
#include "models/activation_checkpoint.h"
#include "models/attention_mask.h"
#include "models/grouped_linear.h"

#ifdef ROLLOUT_WITH_CUDA
#include "models/fused_decode.h"
#include "models/fused_elementwise.h"
#include "models/split_k_linear.h"
#endif
#include "models/safetensors.h"

namespace rollout::models {
namespace {

constexpr double kInitStd = 0.02;

// The shape every parameter must have, in HF names.
std::vector<std::pair<std::string, std::vector<int64_t>>> ExpectedShapes(
    const TransformerConfig& c, bool with_lm_head) {
  const int64_t q_out = c.num_attention_heads * c.head_dim;
  const int64_t kv_out = c.num_key_value_heads * c.head_dim;
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"model.embed_tokens.weight", {c.vocab_size, c.hidden_size}}};
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = absl::StrCat("model.layers.", i, ".");
    shapes.push_back({p + "input_layernorm.weight", {c.hidden_size}});
    shapes.push_back({p + "post_attention_layernorm.weight", {c.hidden_size}});
    shapes.push_back({p + "self_attn.q_proj.weight", {q_out, c.hidden_size}});
    shapes.push_back({p + "self_attn.k_proj.weight", {kv_out, c.hidden_size}});
    shapes.push_back({p + "self_attn.v_proj.weight", {kv_out, c.hidden_size}});
    shapes.push_back({p + "self_attn.o_proj.weight", {c.hidden_size, q_out}});
    if (c.qk_norm) {
      shapes.push_back({p + "self_attn.q_norm.weight", {c.head_dim}});
      shapes.push_back({p + "self_attn.k_norm.weight", {c.head_dim}});
    }
    if (c.attention_bias) {
      shapes.push_back({p + "self_attn.q_proj.bias", {q_out}});
      shapes.push_back({p + "self_attn.k_proj.bias", {kv_out}});
      shapes.push_back({p + "self_attn.v_proj.bias", {kv_out}});
    }
    shapes.push_back({p + "mlp.gate_proj.weight", {c.intermediate_size, c.hidden_size}});
    shapes.push_back({p + "mlp.up_proj.weight", {c.intermediate_size, c.hidden_size}});
    shapes.push_back({p + "mlp.down_proj.weight", {c.hidden_size, c.intermediate_size}});
    if (c.mlp_bias) {
      shapes.push_back({p + "mlp.gate_proj.bias", {c.intermediate_size}});
      shapes.push_back({p + "mlp.up_proj.bias", {c.intermediate_size}});
      shapes.push_back({p + "mlp.down_proj.bias", {c.hidden_size}});
    }
  }
  shapes.push_back({"model.norm.weight", {c.hidden_size}});
  if (with_lm_head && !c.tie_word_embeddings) {
    shapes.push_back({"lm_head.weight", {c.vocab_size, c.hidden_size}});
  }
  return shapes;
}

}  // namespace

CausalLM::CausalLM(TransformerConfig config, const LoadOptions& options)
    : config_(std::move(config)),
      rope_(config_.head_dim, config_.rope_theta, config_.rope_scaling, options.device) {
  // Every parameter is allocated at its shape, uninitialised; Load and RandomInit write
  // into them, which keeps the fused groups of DecoderLayer aliased.
  const TransformerConfig& c = config_;
  const at::TensorOptions t = at::TensorOptions().dtype(options.dtype).device(options.device);
  const int64_t q_out = c.num_attention_heads * c.head_dim;
  const int64_t kv_out = c.num_key_value_heads * c.head_dim;
  const int64_t inter = c.intermediate_size;
  embed_tokens_ = at::empty({c.vocab_size, c.hidden_size}, t);
  norm_ = at::empty({c.hidden_size}, t);
  if (options.with_lm_head && !c.tie_word_embeddings) lm_head_ = at::empty({c.vocab_size, c.hidden_size}, t);
  layers_.resize(c.num_hidden_layers);
  for (DecoderLayer& layer : layers_) {
    layer.input_layernorm = at::empty({c.hidden_size}, t);
    layer.post_attention_layernorm = at::empty({c.hidden_size}, t);
    if (c.qk_norm) {
      layer.q_norm = at::empty({c.head_dim}, t);
      layer.k_norm = at::empty({c.head_dim}, t);
    }
    layer.qkv_weight = at::empty({q_out + 2 * kv_out, c.hidden_size}, t);
    layer.q_proj.weight() = layer.qkv_weight.narrow(0, 0, q_out);
    layer.k_proj.weight() = layer.qkv_weight.narrow(0, q_out, kv_out);
    layer.v_proj.weight() = layer.qkv_weight.narrow(0, q_out + kv_out, kv_out);
    if (c.attention_bias) {
      layer.qkv_bias = at::empty({q_out + 2 * kv_out}, t);
      layer.q_proj.bias() = layer.qkv_bias.narrow(0, 0, q_out);
      layer.k_proj.bias() = layer.qkv_bias.narrow(0, q_out, kv_out);
      layer.v_proj.bias() = layer.qkv_bias.narrow(0, q_out + kv_out, kv_out);
    }
    layer.o_proj.weight() = at::empty({c.hidden_size, q_out}, t);
    layer.gate_up_weight = at::empty({2 * inter, c.hidden_size}, t);
    layer.gate_proj.weight() = layer.gate_up_weight.narrow(0, 0, inter);
    layer.up_proj.weight() = layer.gate_up_weight.narrow(0, inter, inter);
    layer.down_proj.weight() = at::empty({c.hidden_size, inter}, t);
    if (c.mlp_bias) {
      layer.gate_up_bias = at::empty({2 * inter}, t);
      layer.gate_proj.bias() = layer.gate_up_bias.narrow(0, 0, inter);
      layer.up_proj.bias() = layer.gate_up_bias.narrow(0, inter, inter);
      layer.down_proj.bias() = at::empty({c.hidden_size}, t);
    }
  }
}

absl::StatusOr<std::unique_ptr<CausalLM>> CausalLM::Load(const std::string& dir,
                                                         const LoadOptions& options) {
  ASSIGN_OR_RETURN(TransformerConfig config, LoadHfConfig(dir));
  ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsReader> reader, SafetensorsReader::OpenDirectory(dir));
  std::unique_ptr<CausalLM> model(new CausalLM(config, options));
  std::map<std::string, std::vector<int64_t>> expected;
  for (auto& [name, shape] : ExpectedShapes(config, options.with_lm_head)) expected[name] = shape;
  // Every tensor checked first, then read front to back (the file's order).
  std::map<std::string, at::Tensor*> params;
  for (auto& [name, param] : model->NamedParameters()) {
    if (!reader->Has(name)) {
      return absl::NotFoundError(absl::StrCat("model ", dir, " has no tensor ", name));
    }
    ASSIGN_OR_RETURN(const TensorInfo info, reader->Info(name));
    if (info.shape != expected.at(name)) {
      return absl::DataLossError(absl::StrCat(
          "model ", dir, ": tensor ", name, " has shape [", absl::StrJoin(info.shape, ", "),
          "], config.json implies [", absl::StrJoin(expected.at(name), ", "), "]"));
    }
    params[name] = param;
  }
  c10::NoGradGuard no_grad;
  for (const std::string& name : reader->NamesInFileOrder()) {
    auto it = params.find(name);
    if (it == params.end()) continue;  // e.g. a tied LM head's copy
    at::Tensor& param = *it->second;
    if (param.device().is_cpu() && param.is_contiguous() &&
        param.scalar_type() == reader->Info(name)->dtype) {
      RETURN_IF_ERROR(reader->ReadInto(name, param));
    } else {
      ASSIGN_OR_RETURN(const at::Tensor loaded, reader->Load(name));
      param.copy_(loaded);
    }
  }
  return model;
}

std::unique_ptr<CausalLM> CausalLM::RandomInit(const TransformerConfig& config, uint64_t seed,
                                               const LoadOptions& options) {
  std::unique_ptr<CausalLM> model(new CausalLM(config, options));
  std::map<std::string, at::Tensor*> params;
  for (auto& [name, param] : model->NamedParameters()) params[name] = param;
  at::Generator generator = at::detail::createCPUGenerator(seed);
  c10::NoGradGuard no_grad;
  for (auto& [name, shape] : ExpectedShapes(config, options.with_lm_head)) {
    at::Tensor value;
    if (absl::EndsWith(name, "norm.weight")) {
      value = at::ones(shape, at::kFloat);
    } else if (absl::EndsWith(name, ".bias")) {
      value = at::zeros(shape, at::kFloat);
    } else {
      value = at::empty(shape, at::kFloat).normal_(0.0, kInitStd, generator);
    }
    // HF zeroes the padding token's embedding row.
    if (name == "model.embed_tokens.weight" && config.pad_token_id >= 0 &&
        config.pad_token_id < config.vocab_size) {
      value[config.pad_token_id].zero_();
    }
    params.at(name)->copy_(value);
  }
  return model;
}

std::map<std::string, at::Tensor> CausalLM::BaseTensors() const {
  std::map<std::string, at::Tensor> tensors;
  for (const auto& [name, param] : NamedParameters()) tensors[name] = *param;
  for (const auto& [name, linear] : NamedLinears()) tensors[name + ".weight"] = linear->base_weight();
  return tensors;
}

absl::Status CausalLM::Save(const std::string& dir) const {
  RETURN_IF_ERROR(MakeDirectories(dir));
  const std::map<std::string, at::Tensor> tensors = BaseTensors();
  RETURN_IF_ERROR(WriteSafetensors(JoinPath(dir, "model.safetensors"),
                                   {tensors.begin(), tensors.end()}, {{"format", "pt"}}));
  RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, "config.json"), HfConfigJson(config_)));
  return WriteFileAtomically(JoinPath(dir, "generation_config.json"),
                             HfGenerationConfigJson(config_));
}

const at::Tensor& CausalLM::lm_head_weight() const {
  return config_.tie_word_embeddings ? embed_tokens_ : lm_head_;
}

at::Tensor CausalLM::Logits(const at::Tensor& hidden) const {
  return at::linear(hidden, lm_head_weight());
}

at::Tensor CausalLM::Embed(const at::Tensor& input_ids) const {
  return at::embedding(embed_tokens_, input_ids);
}

at::Tensor CausalLM::RmsNorm(const at::Tensor& x, const at::Tensor& weight) const {
  return compat::RmsNorm(x, weight, config_.rms_norm_eps);
}

at::Tensor CausalLM::Project(const Linear& linear, const at::Tensor& x) const {
  return linear.Forward(x, adapters_enabled_, training_);
}

std::vector<at::Tensor> CausalLM::ProjectEach(std::initializer_list<const Linear*> linears,
                                              const at::Tensor& weight, const at::Tensor& bias,
                                              const at::Tensor& x) const {
  std::vector<at::Tensor> out;
  if (!UsesGroup(linears, weight, bias)) {
    for (const Linear* linear : linears) out.push_back(Project(*linear, x));
    return out;
  }
  LinearGroup group{weight, bias, {}, {}};
  for (const Linear* linear : linears) {
    group.layer_weights.push_back(linear->ProductWeight(adapters_enabled_));
    if (bias.defined()) group.layer_biases.push_back(linear->bias());
  }
  out = GroupedLinear(x, group);
  auto linear = linears.begin();
  for (at::Tensor& layer_out : out) {
    if ((*linear)->PlainWeight(adapters_enabled_) == nullptr) {
      layer_out = layer_out + (*linear)->AdapterTerm(x, training_);
    }
    ++linear;
  }
  return out;
}

bool CausalLM::AddsAdapterTerm(std::initializer_list<const Linear*> linears) const {
  for (const Linear* linear : linears) {
    if (linear->PlainWeight(adapters_enabled_) == nullptr) return true;
  }
  return false;
}

at::Tensor CausalLM::MlpActivation(const DecoderLayer& layer, const at::Tensor& x) const {
  const std::vector<at::Tensor> gate_up = ProjectEach(
      {&layer.gate_proj, &layer.up_proj}, layer.gate_up_weight, layer.gate_up_bias, x);
  const at::Tensor &gate = gate_up[0], &up = gate_up[1];
#ifdef ROLLOUT_WITH_CUDA
  if (gate.is_cuda()) return FusedSwiglu(gate, up);
#endif
  return at::silu(gate) * up;
}

at::Tensor CausalLM::AttentionHeads(const DecoderLayer& layer, int64_t index,
                                    const at::Tensor& x, const at::Tensor& cos,
                                    const at::Tensor& sin, const at::Tensor& mask,
                                    KvCache* cache) const {
  // x: [B, T, H] (Forward) or [N, H] (ForwardStep); heads are split off the last dim.
  std::vector<int64_t> head_shape = x.sizes().vec();
  head_shape.back() = -1;
  head_shape.push_back(config_.head_dim);
  const std::vector<at::Tensor> qkv = ProjectEach(
      {&layer.q_proj, &layer.k_proj, &layer.v_proj}, layer.qkv_weight, layer.qkv_bias, x);
  at::Tensor q = qkv[0].view(head_shape), k = qkv[1].view(head_shape);
  if (config_.qk_norm) {
    q = RmsNorm(q, layer.q_norm);
    k = RmsNorm(k, layer.k_norm);
  }
  q = Rope::Apply(q, cos, sin);
  k = Rope::Apply(k, cos, sin);
  const at::Tensor v = qkv[2].view(head_shape);
  const double scale = 1.0 / std::sqrt(static_cast<double>(config_.head_dim));
  at::Tensor out;
  if (cache != nullptr) {
    out = cache->AppendAndAttend(index, q, k, v, scale);  // [N, Hq, D]
  } else {
    // [B, T, heads, D] -> [B, heads, T, D]
    std::optional<at::Tensor> additive;
    if (mask.defined()) additive = mask;
    out = compat::ScaledDotProductAttention(q.transpose(1, 2), k.transpose(1, 2),
                                            v.transpose(1, 2), additive,
                                            /*causal=*/!mask.defined(), scale)
              .transpose(1, 2);
  }
  std::vector<int64_t> merged_shape = x.sizes().vec();
  merged_shape.back() = config_.num_attention_heads * config_.head_dim;
  return out.reshape(merged_shape);
}

at::Tensor CausalLM::Forward(const at::Tensor& input_ids, const at::Tensor& position_ids,
                             const at::Tensor& attention_mask) const {
  if (attention_mask.defined()) {
    if (const std::optional<RowRotation> rotation = RowRotation::ForTokenRuns(attention_mask)) {
      if (rotation->identity()) return Forward(input_ids, position_ids, at::Tensor());
      return rotation->Undo(
          Forward(rotation->Apply(input_ids), rotation->Apply(position_ids), at::Tensor()));
    }
  }
  at::Tensor hidden = Embed(input_ids);
  at::Tensor cos, sin;
  std::tie(cos, sin) = rope_.CosSin(position_ids, hidden.scalar_type());
  const at::Tensor mask = attention_mask.defined()
                              ? CausalPaddingMask(attention_mask, hidden.scalar_type())
                              : at::Tensor();
  // By value: checkpointed layers call these again in the backward pass.
  return DecoderStack(
      hidden,
      [this, cos, sin, mask](const DecoderLayer& layer, int64_t index, const at::Tensor& normed) {
        return AttentionHeads(layer, index, normed, cos, sin, mask, nullptr);
      },
      [this](const DecoderLayer& layer, const at::Tensor& normed) {
        return MlpActivation(layer, normed);
      });
}

at::Tensor CausalLM::ForwardStep(const at::Tensor& input_ids, const at::Tensor& positions,
                                 KvCache& cache) const {
  // Checkpointed layers attend again in the backward pass, through a copy they own.
  std::shared_ptr<KvCache> copy;
  if (activation_checkpointing_ && at::GradMode::is_enabled()) {
    copy = cache.RecomputationCopy();
    ROLLOUT_CHECK(copy != nullptr) << "activation checkpointing attends again in the backward "
                                      "pass, through a KvCache that stores keys";
  }
  KvCache* const attention = copy != nullptr ? copy.get() : &cache;
  at::Tensor hidden = Embed(input_ids);
  at::Tensor cos, sin;
  std::tie(cos, sin) = rope_.CosSin(positions, hidden.scalar_type());
  // By value: checkpointed layers call these again in the backward pass.
  return DecoderStack(
      hidden,
      [this, cos, sin, attention, copy](const DecoderLayer& layer, int64_t index, const at::Tensor& normed) {
        return StepAttentionHeads(layer, index, normed, cos, sin, *attention);
      },
      [this](const DecoderLayer& layer, const at::Tensor& normed) {
        return StepMlpActivation(layer, normed);
      });
}

at::Tensor CausalLM::DecoderStack(at::Tensor hidden, const LayerHeads& heads,
                                  const LayerActivation& activation) const {
  if (activation_checkpointing_ && at::GradMode::is_enabled()) {
    for (size_t i = 0; i < layers_.size(); ++i) {
      const DecoderLayer& layer = layers_[i];
      hidden = Checkpointed(
          [this, &layer, i, heads, activation](const at::Tensor& x) {
            return CheckpointedLayer(layer, static_cast<int64_t>(i), x, heads, activation);
          },
          hidden);
    }
    return AddRmsNorm(hidden, at::Tensor(), norm_).second;
  }
  at::Tensor normed;
  std::tie(hidden, normed) = AddRmsNorm(hidden, at::Tensor(), layers_.front().input_layernorm);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const DecoderLayer& layer = layers_[i];
    std::tie(hidden, normed) = AddProjectedRmsNorm(hidden, layer.o_proj, heads(layer, i, normed),
                                                   layer.post_attention_layernorm);
    const at::Tensor& next_norm = i + 1 < layers_.size() ? layers_[i + 1].input_layernorm : norm_;
    std::tie(hidden, normed) =
        AddProjectedRmsNorm(hidden, layer.down_proj, activation(layer, normed), next_norm);
  }
  return normed;
}

at::Tensor CausalLM::CheckpointedLayer(const DecoderLayer& layer, int64_t index,
                                       const at::Tensor& hidden, const LayerHeads& heads,
                                       const LayerActivation& activation) const {
  const at::Tensor normed = AddRmsNorm(hidden, at::Tensor(), layer.input_layernorm).second;
  const auto [mid, mid_normed] = AddProjectedRmsNorm(hidden, layer.o_proj, heads(layer, index, normed),
                                                     layer.post_attention_layernorm);
  return mid + Project(layer.down_proj, activation(layer, mid_normed));
}

std::vector<std::pair<std::string, const Linear*>> CausalLM::NamedLinears() const {
  std::vector<std::pair<std::string, const Linear*>> out;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const DecoderLayer& l = layers_[i];
    const std::string p = absl::StrCat("model.layers.", i, ".");
    out.insert(out.end(), {{p + "self_attn.q_proj", &l.q_proj},
                           {p + "self_attn.k_proj", &l.k_proj},
                           {p + "self_attn.v_proj", &l.v_proj},
                           {p + "self_attn.o_proj", &l.o_proj},
                           {p + "mlp.gate_proj", &l.gate_proj},
                           {p + "mlp.up_proj", &l.up_proj},
                           {p + "mlp.down_proj", &l.down_proj}});
  }
  return out;
}

std::vector<std::pair<std::string, Linear*>> CausalLM::NamedLinears() {
  std::vector<std::pair<std::string, Linear*>> out;
  for (const auto& [name, linear] : std::as_const(*this).NamedLinears()) {
    out.emplace_back(name, const_cast<Linear*>(linear));
  }
  return out;
}

std::vector<std::pair<std::string, const at::Tensor*>> CausalLM::NamedParameters() const {
  std::vector<std::pair<std::string, const at::Tensor*>> out = {
      {"model.embed_tokens.weight", &embed_tokens_}};
  for (size_t i = 0; i < layers_.size(); ++i) {
    const std::string p = absl::StrCat("model.layers.", i, ".");
    out.emplace_back(p + "input_layernorm.weight", &layers_[i].input_layernorm);
    out.emplace_back(p + "post_attention_layernorm.weight", &layers_[i].post_attention_layernorm);
    if (layers_[i].q_norm.defined()) {
      out.emplace_back(p + "self_attn.q_norm.weight", &layers_[i].q_norm);
      out.emplace_back(p + "self_attn.k_norm.weight", &layers_[i].k_norm);
    }
  }
  for (const auto& [name, linear] : NamedLinears()) {
    out.emplace_back(name + ".weight", &linear->weight());
    if (linear->bias().defined()) out.emplace_back(name + ".bias", &linear->bias());
  }
  out.emplace_back("model.norm.weight", &norm_);
  if (lm_head_.defined()) out.emplace_back("lm_head.weight", &lm_head_);
  return out;
}

std::vector<std::pair<std::string, at::Tensor*>> CausalLM::NamedParameters() {
  std::vector<std::pair<std::string, at::Tensor*>> out;
  for (const auto& [name, param] : std::as_const(*this).NamedParameters()) {
    out.emplace_back(name, const_cast<at::Tensor*>(param));
  }
  return out;
}

}  // namespace rollout::models
