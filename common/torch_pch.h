// Precompiled header for every target that includes LibTorch (see
// cmake/RolloutTargets.cmake). ATen rather than <torch/torch.h>: it covers the tensor
// API at a third of the parse cost. Not to be included directly.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
