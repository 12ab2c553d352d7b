// Batched token sampling for the rollout engine, on the logits' device (no host
// synchronisation): greedy, temperature, top-k, top-p and min-p per row, each row with
// its own random stream so a request's samples reproduce whatever it is batched with.
//
// Randomness is counter-based: the uniform for (seed, step, token) is a fixed hash
// (engine/sampling_noise.h), and a row samples argmax(logits / temperature + Gumbel
// noise) over the tokens its filters keep — the same draw on CPU and GPU, with no
// generator state to carry between steps. Ties go to the lowest token id.
//
// Filters act on softmax(logits / temperature), in HF's order: top-k keeps the k most
// likely tokens (equal logits ranked by token id); top-p then keeps the smallest set of
// most likely tokens whose probability, renormalised over the top-k survivors, reaches
// top_p; min-p keeps tokens with probability >= min_p * the top probability. The most
// likely token always survives.
//
// Returned log-probs are those of the sampled token under log_softmax(logits /
// temperature) before top-k/top-p/min-p filtering — what the actor recomputes
// (verl's old_log_prob divides logits by the rollout temperature the same way);
// greedy rows use temperature 1.
#pragma once

#include <ATen/core/Tensor.h>

namespace rollout::engine {

// Per-row parameters, all [B] tensors on the logits' device. top_k, top_p and min_p
// are read only when any_filter is true.
struct SamplingTensors {
  at::Tensor temperature;  // float32; <= 0 = greedy (argmax)
  at::Tensor top_k;        // int64; <= 0 = off
  at::Tensor top_p;        // float32; 1 = off
  at::Tensor min_p;        // float32; 0 = off
  at::Tensor seed;         // int64; the row's random stream
  at::Tensor step;         // int64; which draw of that stream (the output token index)
  // Host-side summary: true when some row has top_k > 0, top_p < 1 or min_p > 0. When
  // false the sampler takes the fast path (one fused pass over the logits on CUDA).
  bool any_filter = false;
};

struct SampledTokens {
  at::Tensor tokens;     // [B] int64
  at::Tensor log_probs;  // [B] float32
};

// logits [B, V] (float32, bfloat16 or float16), V > 0. B may be 0. On CUDA it runs on the
// current stream with fixed-size temporaries and no host synchronisation, so it can be
// captured in a CUDA graph; without filters it is one fused kernel. Wrong shapes,
// dtypes or devices throw c10::Error (programmer errors).
SampledTokens SampleTokens(const at::Tensor& logits, const SamplingTensors& params);

}  // namespace rollout::engine
