// Central finite differences for gradient checks in tests: float64 inputs, one element
// at a time, so a loss's autograd gradient can be compared against them.
#pragma once

#include <ATen/ATen.h>

#include <functional>

namespace rollout::testing {

// d f / d x at `x` (float64), element by element: (f(x + h e_i) - f(x - h e_i)) / 2h.
inline at::Tensor NumericGradient(const std::function<double(const at::Tensor&)>& f,
                                  const at::Tensor& x, double h = 1e-6) {
  at::Tensor grad = at::zeros_like(x);
  for (int64_t i = 0; i < x.numel(); ++i) {
    at::Tensor plus = x.clone();
    at::Tensor minus = x.clone();
    plus.view({-1})[i].add_(h);
    minus.view({-1})[i].sub_(h);
    grad.view({-1})[i] = (f(plus) - f(minus)) / (2 * h);
  }
  return grad;
}

}  // namespace rollout::testing
