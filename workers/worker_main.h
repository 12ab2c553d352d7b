// `rollout worker ...`: the worker process. Started by a Launcher, never by hand.
//
// Start-up: open the device, register the methods of the hosted roles, start the
// Worker gRPC server on a free port, register with the controller, then serve until
// the controller calls Shutdown. The worker ends itself when the controller stops
// answering heartbeats or its launching parent dies (DESIGN.md §1 "Lifetimes").
// Exit codes: 0 after Shutdown, 2 bad arguments or device, 3 registration failed,
// 4 controller lost.
#pragma once

#include <string>
#include <vector>

namespace rollout::workers {

// `args` are the arguments after `rollout worker`; the run token comes from the
// environment (ROLLOUT_RUN_TOKEN).
int RunWorker(const std::vector<std::string>& args);

}  // namespace rollout::workers
