// Decoder-only causal language model with the Qwen2 / Qwen3 / Llama architecture,
// computing what HF transformers' Qwen2ForCausalLM / Qwen3ForCausalLM / LlamaForCausalLM
// compute:
//   embed -> N x [RMSNorm -> GQA attention with RoPE (+ q/k/v bias for Qwen2, per-head
//                 q/k RMSNorm before RoPE for Qwen3) -> residual
//                 RMSNorm -> SwiGLU MLP -> residual] -> RMSNorm -> LM head (tied or not)
//
// Parameters are plain at::Tensors (float32 or bfloat16) on one device, named as in HF
// checkpoints ("model.layers.0.self_attn.q_proj.weight"). Two forwards:
//   Forward()      training/scoring over padded batches [B, T] with an attention mask
//                  and position ids (verl's layout: left-padded prompts, right-padded
//                  responses), autograd-friendly;
//   ForwardStep()  over flattened tokens and a KvCache the caller owns: incremental
//                  (the rollout engine's paged cache), or packed segments without
//                  padding (models/packed_attention.h; autograd-friendly).
// Both return final hidden states; Logits() applies the LM head, and
// models/token_scores.h turns hidden states into log-probs without materialising the
// whole batch's float32 logits.
//
// LoRA (models/linear.h) can be added to any subset of the linear layers; with
// adapters disabled (ScopedAdaptersDisabled) the model is the base model — verl's
// reference policy without a second copy of the weights.
//
// Defined in causal_lm.cc, with the choice of fused kernels for each piece of a layer
// in causal_lm_kernels.cc.
//
// Thread-compatible: concurrent forwards are fine; mutation (LoRA, merge) is not.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "models/hf_config.h"
#include "models/kv_cache.h"
#include "models/linear.h"
#include "models/rope.h"

namespace rollout::models {

// The weights of q_proj, k_proj and v_proj (and their biases) are row ranges of one
// tensor, qkv_weight (qkv_bias), and those of gate_proj and up_proj of gate_up_weight
// (gate_up_bias): the inference forward computes each group with one GEMM while the
// linear layers alias its rows. Whoever replaces a linear layer's weight tensor
// instead of writing into it (LoRA's Merge) breaks the aliasing; the forward then
// notices and uses the layers one by one.
struct DecoderLayer {
  at::Tensor input_layernorm;           // [H]
  at::Tensor post_attention_layernorm;  // [H]
  at::Tensor q_norm, k_norm;            // [D]; undefined without qk_norm (Qwen3)
  Linear q_proj, k_proj, v_proj, o_proj;
  Linear gate_proj, up_proj, down_proj;
  at::Tensor qkv_weight;      // [(Hq + 2 Hkv) D, H]
  at::Tensor qkv_bias;        // [(Hq + 2 Hkv) D]; undefined without attention_bias
  at::Tensor gate_up_weight;  // [2 I, H]
  at::Tensor gate_up_bias;    // [2 I]; undefined without mlp_bias
};

struct LoadOptions {
  c10::ScalarType dtype = at::kFloat;
  c10::Device device = c10::Device(c10::kCPU);
  // False for a backbone only (the value model): an untied lm_head.weight is neither
  // required nor loaded, and Logits() must not be called.
  bool with_lm_head = true;
};

class CausalLM {
 public:
  // Reads config.json (+ generation_config.json) and the safetensors weights of an HF
  // model directory, converted to options.dtype on options.device. NotFound / DataLoss
  // naming the file or tensor when something is missing or has the wrong shape.
  static absl::StatusOr<std::unique_ptr<CausalLM>> Load(const std::string& dir,
                                                        const LoadOptions& options);
  // HF's initialisation: normal(0, 0.02) for linear and embedding weights, zero biases,
  // unit norms; deterministic for a seed.
  static std::unique_ptr<CausalLM> RandomInit(const TransformerConfig& config, uint64_t seed,
                                              const LoadOptions& options);

  // Writes config.json, generation_config.json and model.safetensors with the base
  // weights (also while LoRA is merged; adapters are saved with models/lora.h).
  // Tokenizer files are the caller's to copy.
  absl::Status Save(const std::string& dir) const;

  const TransformerConfig& config() const { return config_; }
  c10::ScalarType dtype() const { return embed_tokens_.scalar_type(); }
  c10::Device device() const { return embed_tokens_.device(); }

  // input_ids, position_ids [B, T] int64; attention_mask [B, T] (1 token, 0 padding) or
  // undefined for no padding. Returns [B, T, H] hidden states after the final norm;
  // those at padding positions are finite but unspecified. Rows whose tokens form one
  // run (left and/or right padding) are computed rotated to the front under plain causal
  // attention (RowRotation), others with a padding mask.
  at::Tensor Forward(const at::Tensor& input_ids, const at::Tensor& position_ids,
                     const at::Tensor& attention_mask) const;
  // input_ids, positions [N] int64 (the step's tokens, in the order `cache` expects).
  // Returns [N, H] hidden states after the final norm. With autograd on it runs the
  // same layers as Forward (the fused inference kernels only run without it); with
  // activation checkpointing as well, the layers attend through `cache`'s
  // RecomputationCopy(), which it must have, and again in the backward pass.
  at::Tensor ForwardStep(const at::Tensor& input_ids, const at::Tensor& positions,
                         KvCache& cache) const;
  // hidden [..., H] -> logits [..., V] in the model dtype.
  at::Tensor Logits(const at::Tensor& hidden) const;
  const at::Tensor& lm_head_weight() const;

  // What Save() writes: every parameter by HF name, linear layers with their base
  // weights (also while LoRA is merged).
  std::map<std::string, at::Tensor> BaseTensors() const;

  // Every base parameter with its HF name; for a tied model no lm_head.weight.
  std::vector<std::pair<std::string, at::Tensor*>> NamedParameters();
  std::vector<std::pair<std::string, const at::Tensor*>> NamedParameters() const;

  // Linear layers with their HF module names ("model.layers.0.self_attn.q_proj").
  std::vector<std::pair<std::string, Linear*>> NamedLinears();
  std::vector<std::pair<std::string, const Linear*>> NamedLinears() const;

  // Dropout in adapters applies only in training mode.
  void set_training(bool training) { training_ = training; }
  // With gradients, each decoder layer keeps only its input (the residual stream) and
  // runs again in the backward pass (activation_checkpoint.h), as verl's
  // enable_gradient_checkpointing does: the same gradients, one more forward of the
  // layers, and of a layer's activations only its input held between the passes.
  // Off by default.
  void set_activation_checkpointing(bool enabled) { activation_checkpointing_ = enabled; }
  bool activation_checkpointing() const { return activation_checkpointing_; }
  void set_adapters_enabled(bool enabled) { adapters_enabled_ = enabled; }
  bool adapters_enabled() const { return adapters_enabled_; }

 private:
  CausalLM(TransformerConfig config, const LoadOptions& options);
  at::Tensor Embed(const at::Tensor& input_ids) const;
  // A layer's attention output (heads merged) and MLP activation for its normed input.
  using LayerHeads =
      std::function<at::Tensor(const DecoderLayer& layer, int64_t index, const at::Tensor& normed)>;
  using LayerActivation =
      std::function<at::Tensor(const DecoderLayer& layer, const at::Tensor& normed)>;
  // The decoder stack over the embedded `hidden`: per layer, the attention and then the
  // MLP added to the residual stream through their output projections
  // (AddProjectedRmsNorm), each add fused with the next norm; returns the final norm's
  // output. `heads` / `activation`: AttentionHeads / MlpActivation or their Step variants.
  // With activation checkpointing and gradients, each layer is a CheckpointedLayer and
  // `heads` / `activation` are copied and called again in the backward pass: they must
  // hold what they read by value (or outlive that pass).
  at::Tensor DecoderStack(at::Tensor hidden, const LayerHeads& heads,
                          const LayerActivation& activation) const;
  // Layer `index` on the residual stream `hidden` (before its input norm): the stream
  // after the layer's attention and MLP are added, as DecoderStack's loop computes it.
  at::Tensor CheckpointedLayer(const DecoderLayer& layer, int64_t index, const at::Tensor& hidden,
                               const LayerHeads& heads, const LayerActivation& activation) const;
  // A layer's attention and MLP up to their output projections (o_proj, down_proj),
  // which AddProjectedRmsNorm applies: the attention output with the heads merged
  // [..., Hq D], and silu(gate) * up [..., intermediate].
  at::Tensor AttentionHeads(const DecoderLayer& layer, int64_t index, const at::Tensor& x,
                            const at::Tensor& cos, const at::Tensor& sin, const at::Tensor& mask,
                            KvCache* cache) const;
  at::Tensor MlpActivation(const DecoderLayer& layer, const at::Tensor& x) const;
  // The same for the inference step: with fused kernels and one GEMM per aliased group
  // (DecoderLayer) on CUDA while autograd is off, else as above.
  at::Tensor StepAttentionHeads(const DecoderLayer& layer, int64_t index, const at::Tensor& x,
                                const at::Tensor& cos, const at::Tensor& sin,
                                KvCache& cache) const;
  at::Tensor StepMlpActivation(const DecoderLayer& layer, const at::Tensor& x) const;
  // {residual + delta, RMSNorm(residual + delta)}; delta undefined: {residual, RMSNorm}.
  std::pair<at::Tensor, at::Tensor> AddRmsNorm(const at::Tensor& residual, const at::Tensor& delta,
                                               const at::Tensor& weight) const;
  // AddRmsNorm with delta = linear(x). On the fused CUDA path, few rows against a long
  // inner dimension take the product as split-K partials that the add + RMSNorm kernel
  // sums (models/split_k_linear.h); the delta is then rounded once from float32, where
  // a plain GEMM's rounding may differ by an ulp.
  std::pair<at::Tensor, at::Tensor> AddProjectedRmsNorm(const at::Tensor& residual,
                                                        const Linear& linear, const at::Tensor& x,
                                                        const at::Tensor& weight) const;
  // Whether the step may use the fused kernels and groups for `x`.
  bool FusedStep(const at::Tensor& x) const;
  // Whether the linear layers' product weights (Linear::ProductWeight) still alias the
  // fused group (weight, bias), and their enabled adapters need no dropout (not training).
  bool UsesGroup(std::initializer_list<const Linear*> linears, const at::Tensor& weight,
                 const at::Tensor& bias) const;
  // x W^T + b of a group that UsesGroup(), plus each enabled adapter's (alpha / r) x A^T B^T
  // in its layer's columns, rounded as Linear::Forward rounds it.
  at::Tensor ProjectGroup(std::initializer_list<const Linear*> linears, const at::Tensor& weight,
                          const at::Tensor& bias, const at::Tensor& x) const;
  // at::linear(x, weight, bias); in the fused inference step, by the decode GEMM where it
  // applies (models/fused_decode.h DecodeLinear).
  at::Tensor StepProduct(const at::Tensor& x, const at::Tensor& weight,
                         const at::Tensor& bias) const;
  at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& weight) const;
  at::Tensor Project(const Linear& linear, const at::Tensor& x) const;
  // Whether any of the layers adds an adapter term in the forward (enabled, unmerged).
  bool AddsAdapterTerm(std::initializer_list<const Linear*> linears) const;
  // Each layer's output for x: when the layers UsesGroup(), one product for all of them
  // (models/grouped_linear.h) plus each unmerged adapter's term, so that adapters that
  // add nothing (fresh, disabled) leave the output bit for bit; else each layer's Project().
  std::vector<at::Tensor> ProjectEach(std::initializer_list<const Linear*> linears,
                                      const at::Tensor& weight, const at::Tensor& bias,
                                      const at::Tensor& x) const;

  TransformerConfig config_;
  Rope rope_;
  at::Tensor embed_tokens_;  // [V, H]
  std::vector<DecoderLayer> layers_;
  at::Tensor norm_;          // [H]
  at::Tensor lm_head_;       // [V, H]; undefined when tied or without an LM head
  bool training_ = false;
  bool activation_checkpointing_ = false;
  bool adapters_enabled_ = true;
};

// Disables LoRA adapters for its lifetime (reference-policy forwards).
class ScopedAdaptersDisabled {
 public:
  explicit ScopedAdaptersDisabled(CausalLM& model)
      : model_(model), previous_(model.adapters_enabled()) {
    model_.set_adapters_enabled(false);
  }
  ~ScopedAdaptersDisabled() { model_.set_adapters_enabled(previous_); }

 private:
  CausalLM& model_;
  bool previous_;
};

}  // namespace rollout::models
