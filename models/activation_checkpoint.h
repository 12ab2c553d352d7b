// Activation checkpointing (verl's enable_gradient_checkpointing, PyTorch's
// torch.utils.checkpoint): a piece of the forward pass that keeps none of its
// intermediate activations for the backward pass, which runs the piece again, with
// gradients, from its saved input. Less memory for one more forward of the piece.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

namespace rollout::models {

// `piece(input)` with gradients flowing to `input` and to every parameter `piece` reads
// (accumulated into their .grad in the backward pass, as an ordinary forward would),
// keeping only `input` between the passes. `piece` must be a pure function of its input
// and of state that does not change before the backward pass (the parameters, the
// model's training and adapter switches); it may draw random numbers (LoRA dropout):
// the device's default generator is restored for the recomputation, so it draws the
// same. It runs in grad mode both times (its graph dropped after the first run), so its
// output is what an unchecked forward gives. Without grad mode, simply `piece(input)`.
// `piece` is copied and kept until the backward pass.
at::Tensor Checkpointed(const std::function<at::Tensor(const at::Tensor&)>& piece, const at::Tensor& input);

}  // namespace rollout::models
