// Runs a piece of work under LibTorch's Kineto profiler and saves a Chrome trace of it:
// host operators, and on CUDA the kernels with their device times
// (bench/trace_summary.py sums one by operator and lists the device's idle gaps).
// The profiler adds host time per operator, so host-bound stretches look longer there
// than they are.
#pragma once

#include <functional>
#include <string>

namespace rollout::bench {

// Profiles `body` (kernels too when `cuda`), waits for the device, writes the trace to
// `path`.
void WriteChromeTrace(const std::string& path, bool cuda, const std::function<void()>& body);

}  // namespace rollout::bench
