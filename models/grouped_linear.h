// Linear layers that read the same input (q/k/v, gate/up, or a single layer) as one
// autograd node: x [..., K] times the group's concatenated weight [sum of N_i, K]
// (plus bias), split into one output [..., N_i] per layer. The backward returns each
// layer's own weight and bias gradient, so autograd delivers them to the layers'
// parameters as if every layer had run alone.
//
// Why: in a training step at the Qwen2.5-0.5B shape the host, not the GPU, sets the
// pace, and at::linear on a [B, T, K] input records four autograd nodes (view,
// transpose, addmm, view) whose evaluation costs more host time than the GEMMs they
// launch; a group also runs one GEMM instead of one a layer, and one for its input's
// gradient instead of one a layer plus the additions that sum them.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace rollout::models {

// The weights (and biases) of a group: `weight` [sum of N_i, K] holds the layers'
// weights [N_i, K] in order, as contiguous row blocks (the layers' weights alias it, or
// it is the only layer's weight); `bias` likewise, or undefined for no biases.
struct LinearGroup {
  at::Tensor weight;
  at::Tensor bias;
  std::vector<at::Tensor> layer_weights;  // views of `weight`, the tensors autograd tracks
  std::vector<at::Tensor> layer_biases;   // views of `bias`; empty without biases
};

// Whether t [..., N] is a column block of a [rows, row_stride] buffer: unit column
// stride, rows `row_stride` elements apart (as GroupedLinear's outputs are).
bool IsColumnBlock(const at::Tensor& t, int64_t row_stride);

// x [..., K] -> one tensor [..., N_i] per layer (views of one product, rows of stride
// sum of N_i). Gradients reach x and every layer weight and bias that requires one.
std::vector<at::Tensor> GroupedLinear(const at::Tensor& x, const LinearGroup& group);

}  // namespace rollout::models
