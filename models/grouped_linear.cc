#include "models/grouped_linear.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>

#include <functional>

namespace rollout::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The gradient of the group's product, [M, sum N_i], from the gradients of its layers'
// outputs (zeros for an unused output). When they are, in order, the column blocks of
// one buffer (as SwiGLU's backward writes them), that buffer itself; else their
// concatenation.
at::Tensor ProductGradient(const variable_list& grads, const std::vector<int64_t>& widths,
                           int64_t rows, const at::TensorOptions& options) {
  int64_t total = 0;
  for (int64_t w : widths) total += w;
  bool adjacent = grads[0].defined();
  int64_t column = 0;
  for (size_t i = 0; i < widths.size() && adjacent; ++i) {
    const at::Tensor& g = grads[i];
    adjacent = g.defined() && g.is_alias_of(grads[0]) && IsColumnBlock(g, total) &&
               g.data_ptr() == static_cast<const char*>(grads[0].data_ptr()) +
                                   column * static_cast<int64_t>(g.element_size());
    column += widths[i];
  }
  if (adjacent && widths.size() > 1) return grads[0].as_strided({rows, total}, {total, 1});
  std::vector<at::Tensor> columns;
  for (size_t i = 0; i < widths.size(); ++i) {
    columns.push_back(grads[i].defined() ? grads[i].reshape({rows, widths[i]})
                                         : at::zeros({rows, widths[i]}, options));
  }
  return columns.size() == 1 ? columns.front() : at::cat(columns, 1);
}

// Inputs: x, the layer weights and the layer biases (tracked by autograd), and the
// group (not a tensor argument: its concatenated tensors only serve the products).
struct GroupedLinearFunction : public torch::autograd::Function<GroupedLinearFunction> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, at::TensorList weights,
                               at::TensorList biases, const LinearGroup& group) {
    const at::Tensor x2d = x.reshape({-1, x.size(-1)});
    const at::Tensor y = group.bias.defined() ? at::addmm(group.bias, x2d, group.weight.t())
                                              : at::mm(x2d, group.weight.t());  // [M, sum N_i]
    std::vector<int64_t> widths, shape = x.sizes().vec();
    variable_list outputs;
    int64_t column = 0;
    for (const at::Tensor& w : weights) {
      widths.push_back(w.size(0));
      shape.back() = w.size(0);
      outputs.push_back(y.narrow(1, column, w.size(0)).view(shape));
      column += w.size(0);
    }
    ctx->set_materialize_grads(false);  // an unused output's gradient stays undefined
    ctx->save_for_backward({x2d, group.weight});
    ctx->saved_data["x_shape"] = x.sizes().vec();
    ctx->saved_data["widths"] = widths;
    ctx->saved_data["biases"] = !biases.empty();
    return outputs;
  }

  // Gradients for x, each weight, each bias, and none for the group.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& x2d = saved[0];
    const at::Tensor& weight = saved[1];
    const std::vector<int64_t> widths = ctx->saved_data["widths"].toIntVector();
    const size_t layers = widths.size();
    const bool biases = ctx->saved_data["biases"].toBool();
    const at::Tensor grad_y = ProductGradient(grads, widths, x2d.size(0), x2d.options());
    variable_list out;
    out.push_back(ctx->needs_input_grad(0)
                      ? grad_y.mm(weight).view(ctx->saved_data["x_shape"].toIntVector())
                      : at::Tensor());
    // One product (or reduction) for the group, split by rows among the layers that
    // need it; `first` is the layers' first input position.
    auto per_layer = [&](size_t first, const std::function<at::Tensor()>& compute) {
      bool needed = false;
      for (size_t i = 0; i < layers; ++i) needed = needed || ctx->needs_input_grad(first + i);
      const at::Tensor all = needed ? compute() : at::Tensor();
      int64_t row = 0;
      for (size_t i = 0; i < layers; ++i) {
        // A layer whose output went unused gets no gradient, as if it had run alone.
        const bool wanted = ctx->needs_input_grad(first + i) && grads[i].defined();
        out.push_back(wanted ? all.narrow(0, row, widths[i]) : at::Tensor());
        row += widths[i];
      }
    };
    per_layer(1, [&] { return grad_y.t().mm(x2d); });
    if (biases) per_layer(1 + layers, [&] { return grad_y.sum(0); });
    out.push_back(at::Tensor());  // the group
    return out;
  }
};

}  // namespace

bool IsColumnBlock(const at::Tensor& t, int64_t row_stride) {
  if (t.dim() == 0 || t.stride(-1) != 1) return false;
  int64_t expected = row_stride;
  for (int64_t d = t.dim() - 2; d >= 0; --d) {
    if (t.size(d) != 1 && t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

std::vector<at::Tensor> GroupedLinear(const at::Tensor& x, const LinearGroup& group) {
  TORCH_CHECK(!group.layer_weights.empty(), "grouped linear: no layers");
  TORCH_CHECK(group.layer_biases.empty() == !group.bias.defined() &&
                  (group.layer_biases.empty() ||
                   group.layer_biases.size() == group.layer_weights.size()),
              "grouped linear: every layer has a bias or none does");
  // As TensorLists, not vectors: only those count as tensor inputs for autograd.
  return GroupedLinearFunction::apply(x, at::TensorList(group.layer_weights),
                                      at::TensorList(group.layer_biases), group);
}

}  // namespace rollout::models
