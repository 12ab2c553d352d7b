#include "rewards/cli_reward_server.h"

#include <grpc/grpc.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/flags.h"
#include "common/signal_watch.h"
#include "common/status_macros.h"
#include "rewards/process_reward_runner.h"
#include "rewards/reward_service.h"
#include "rewards/thread_reward_runner.h"

namespace rollout::rewards {
namespace {

constexpr int kExitStopped = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// Once a signal asks the server to stop: how long calls in flight may finish and
// connected clients may take to hang up (gRPC waits for them) before both are cut off.
constexpr absl::Duration kShutdownGrace = absl::Seconds(5);

struct ServerFlags {
  RewardSpec spec;
  std::string isolation = "thread";
  int64_t num_workers = 0;
  double timeout_s = 10;
  int64_t memory_limit_mb = 4096;
  std::string bind = "127.0.0.1";
  int64_t port = 50051;
};

FlagSet MakeFlags(ServerFlags* f) {
  FlagSet flags(
      "rollout reward-server [--name NAME | --plugin LIB.so] [--isolation thread|process] "
      "[--port P] [flags]",
      "Serves a reward function as a RewardService (proto/reward.proto) for the trainer's\n"
      "reward.remote: host:port. Without --name or --plugin, each sample's data_source\n"
      "picks the reward. Stops on SIGINT or SIGTERM.");
  flags.AddString("name", &f->spec.name, "reward function (gsm8k, countdown, math, exact_match, format)");
  flags.AddString("plugin", &f->spec.plugin, "a reward plug-in library (rewards/plugin_api.h)");
  flags.AddString("isolation", &f->isolation, "thread (in this process) or process (helper processes)");
  flags.AddInt("num_workers", &f->num_workers, "threads or helper processes; 0: one per core");
  flags.AddDouble("timeout_s", &f->timeout_s, "per sample; past it the sample scores 0");
  flags.AddInt("memory_limit_mb", &f->memory_limit_mb,
               "isolation process: what a reward function may allocate; 0: no limit");
  flags.AddString("bind", &f->bind, "address to listen on (0.0.0.0: every interface)");
  flags.AddInt("port", &f->port, "port to listen on; 0: a free one");
  return flags;
}

absl::Status CheckFlags(const ServerFlags& f, const FlagSet::Parsed& parsed) {
  if (!parsed.positional.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", parsed.positional[0], "'"));
  }
  if (f.isolation != "thread" && f.isolation != "process") {
    return absl::InvalidArgumentError(
        absl::StrCat("--isolation must be thread or process, not '", f.isolation, "'"));
  }
  if (!f.spec.name.empty() && !f.spec.plugin.empty()) {
    return absl::InvalidArgumentError("give --name or --plugin, not both");
  }
  if (f.num_workers < 0) return absl::InvalidArgumentError("--num_workers must be 0 or more");
  if (!(f.timeout_s > 0)) return absl::InvalidArgumentError("--timeout_s must be more than 0");
  if (f.memory_limit_mb < 0) return absl::InvalidArgumentError("--memory_limit_mb must be 0 or more");
  if (f.bind.empty()) return absl::InvalidArgumentError("--bind must not be empty");
  if (f.port < 0 || f.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("--port must be in 0..65535, not ", f.port));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RewardRunner>> MakeRunner(const ServerFlags& f) {
  if (f.isolation == "process") {
    ProcessRunnerOptions options;
    options.spec = f.spec;
    options.num_workers = static_cast<int>(f.num_workers);
    options.timeout = absl::Seconds(f.timeout_s);
    options.memory_limit_mb = f.memory_limit_mb;
    ASSIGN_OR_RETURN(std::unique_ptr<ProcessRewardRunner> runner, ProcessRewardRunner::Create(options));
    return std::unique_ptr<RewardRunner>(std::move(runner));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const RewardSelector> selector, RewardSelector::Create(f.spec));
  ThreadRunnerOptions options;
  options.num_workers = static_cast<int>(f.num_workers);
  options.timeout = absl::Seconds(f.timeout_s);
  return std::unique_ptr<RewardRunner>(std::make_unique<ThreadRewardRunner>(std::move(selector), options));
}

// "host:port", with an IPv6 host in brackets.
std::string HostPort(const std::string& host, int64_t port) {
  const bool bare_ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return bare_ipv6 ? absl::StrCat("[", host, "]:", port) : absl::StrCat(host, ":", port);
}

// Serves `runner` until `stop` is notified.
absl::Status Serve(const ServerFlags& f, RewardRunner* runner, absl::Notification* stop) {
  RewardServiceImpl service(runner);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(HostPort(f.bind, f.port), grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(-1);
  builder.SetMaxSendMessageSize(-1);
  // Without this a second server on a port in use would start and share its traffic.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", HostPort(f.bind, f.port), " (is the port in use?)"));
  }
  std::cout << "reward server listening on " << HostPort(f.bind, port) << std::endl;
  stop->WaitForNotification();
  server->Shutdown(absl::ToChronoTime(absl::Now() + kShutdownGrace));
  return absl::OkStatus();
}

// Parses `args` and serves until `stop` is notified (or prints the usage for --help).
absl::Status Run(const std::vector<std::string>& args, absl::Notification* stop) {
  ServerFlags f;
  FlagSet flags = MakeFlags(&f);
  ASSIGN_OR_RETURN(const FlagSet::Parsed parsed, flags.Parse(args));
  if (parsed.help) {
    std::cout << flags.Usage();
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(CheckFlags(f, parsed));
  ASSIGN_OR_RETURN(std::unique_ptr<RewardRunner> runner, MakeRunner(f));
  return Serve(f, runner.get(), stop);
}

}  // namespace

int RunRewardServerCommand(const std::vector<std::string>& args) {
  absl::Notification stop;
  SignalWatch signals([&stop](int, int count) {
    // A call still scoring holds up the first stop; a second signal does not wait for it.
    if (count > 1) std::_Exit(kExitStopped);
    stop.Notify();
  });
  const absl::Status status = Run(args, &stop);
  if (status.ok()) return kExitStopped;
  std::cerr << "rollout reward-server: " << status.message() << "\n";
  // Bad flags, an unknown reward name: InvalidArgument. Anything else is the server's.
  return status.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitFailed;
}

}  // namespace rollout::rewards
