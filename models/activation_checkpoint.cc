#include "models/activation_checkpoint.h"

#include <ATen/ATen.h>
#include <ATen/core/Generator.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <mutex>
#include <utility>

namespace rollout::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The piece to run again, and the random state it started from.
struct Recomputation : torch::CustomClassHolder {
  std::function<at::Tensor(const at::Tensor&)> piece;
  at::Generator generator;  // the device's default generator
  at::Tensor generator_state;
};

// The default generator of `device`'s type, whose state is saved and restored.
at::Generator DefaultGenerator(const c10::Device& device) {
  return at::globalContext().defaultGenerator(device.is_cuda() ? device : c10::Device(c10::kCPU));
}

at::Tensor GeneratorState(at::Generator& generator) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void SetGeneratorState(at::Generator& generator, const at::Tensor& state) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

struct CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
  static at::Tensor forward(AutogradContext* ctx, c10::intrusive_ptr<Recomputation> recomputation,
                            const at::Tensor& input) {
    ctx->save_for_backward({input});
    at::Tensor output;
    {
      // Recorded, then dropped: the piece runs as its recomputation will (code that picks
      // its kernels by grad mode picks the same ones), so the output is what an unchecked
      // forward gives; only one piece's activations are held at a time.
      at::AutoGradMode grad_mode(true);
      output = recomputation->piece(input.detach()).detach();
    }
    ctx->saved_data["recomputation"] = c10::IValue::make_capsule(std::move(recomputation));
    return output;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor input = ctx->get_saved_variables()[0].detach().requires_grad_(true);
    const c10::intrusive_ptr<Recomputation> recomputation =
        c10::static_intrusive_pointer_cast<Recomputation>(ctx->saved_data["recomputation"].toCapsule());
    const at::Tensor current_state = GeneratorState(recomputation->generator);
    SetGeneratorState(recomputation->generator, recomputation->generator_state);
    at::Tensor output;
    {
      at::AutoGradMode grad_mode(true);
      output = recomputation->piece(input);
    }
    SetGeneratorState(recomputation->generator, current_state);
    // Accumulates into the parameters' .grad and the fresh input's.
    torch::autograd::backward({output}, {grads[0]});
    return {at::Tensor(), input.grad()};
  }
};

}  // namespace

at::Tensor Checkpointed(const std::function<at::Tensor(const at::Tensor&)>& piece, const at::Tensor& input) {
  if (!at::GradMode::is_enabled()) return piece(input);
  auto recomputation = c10::make_intrusive<Recomputation>();
  recomputation->piece = piece;
  recomputation->generator = DefaultGenerator(input.device());
  recomputation->generator_state = GeneratorState(recomputation->generator);
  // The backward pass must reach the piece's parameters even when nothing before it
  // trains (LoRA over a frozen embedding): then the input is made a leaf that asks for
  // gradients, as transformers' enable_input_require_grads does.
  const at::Tensor entry = input.requires_grad() ? input : input.detach().requires_grad_(true);
  return CheckpointFunction::apply(std::move(recomputation), entry);
}

}  // namespace rollout::models
