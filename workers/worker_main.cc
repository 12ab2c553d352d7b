#include "workers/worker_main.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/flags.h"
#include "common/logging.h"
#include "common/recipe_loader.h"
#include "common/run_token.h"
#include "workers/controller_link.h"
#include "workers/controller_rendezvous.h"
#include "common/device.h"
#include "workers/diagnostic_methods.h"
#include "workers/method_registry.h"
#include "workers/role_host.h"
#include "workers/worker_service.h"

namespace rollout::workers {
namespace {

constexpr int kExitBadSetup = 2;
constexpr int kExitRegisterFailed = 3;
constexpr int kExitControllerLost = 4;

struct WorkerFlags {
  std::string controller;
  int64_t worker_id = -1;
  std::string pool;
  std::string roles;
  int64_t rank = 0;
  int64_t world = 1;
  std::string device = "cpu";
  std::string bind = "127.0.0.1";
  double heartbeat_interval_s = 0.5;
  double heartbeat_timeout_s = 4;
  double register_timeout_s = 60;
  int64_t parent_pid = 0;
  std::string log_level = "info";
};

FlagSet MakeFlags(WorkerFlags* f) {
  FlagSet flags("rollout worker --controller=HOST:PORT --worker_id=N [flags]",
                "A worker process. Started by the controller's launcher, not by hand.");
  flags.AddString("controller", &f->controller, "controller gRPC address");
  flags.AddInt("worker_id", &f->worker_id, "this worker's id in the placement");
  flags.AddString("pool", &f->pool, "resource pool name");
  flags.AddString("roles", &f->roles, "hosted roles, comma separated");
  flags.AddInt("rank", &f->rank, "rank within the pool");
  flags.AddInt("world", &f->world, "processes in the pool");
  flags.AddString("device", &f->device, "cpu or cuda:N");
  flags.AddString("bind", &f->bind, "address the worker's server binds to");
  flags.AddDouble("heartbeat_interval_s", &f->heartbeat_interval_s, "heartbeat period");
  flags.AddDouble("heartbeat_timeout_s", &f->heartbeat_timeout_s,
                  "exit when the controller is silent this long");
  flags.AddDouble("register_timeout_s", &f->register_timeout_s, "give up registering after");
  flags.AddInt("parent_pid", &f->parent_pid, "exit when this parent process is gone");
  flags.AddString("log_level", &f->log_level, "debug|info|warning|error");
  return flags;
}

int Fail(int code, const std::string& message) {
  ROLLOUT_LOG(ERROR) << message;
  return code;
}

// The host the controller and the other workers reach this worker at (its server, its
// collectives): its bind address, or its host name when it binds to every interface.
std::string ReachableHost(const std::string& bind) {
  if (bind != "0.0.0.0") return bind;
  char hostname[256] = {0};
  gethostname(hostname, sizeof(hostname) - 1);
  return hostname;
}

WorkerIdentity IdentityFrom(const WorkerFlags& f) {
  WorkerIdentity identity;
  identity.worker_id = static_cast<int>(f.worker_id);
  identity.pool = f.pool;
  identity.roles = absl::StrSplit(f.roles, ',', absl::SkipEmpty());
  identity.rank = static_cast<int>(f.rank);
  identity.world = static_cast<int>(f.world);
  return identity;
}

ControllerLinkOptions LinkOptions(const WorkerFlags& f, const std::string& token) {
  ControllerLinkOptions options;
  options.controller_address = f.controller;
  options.run_token = token;
  options.worker_id = static_cast<int>(f.worker_id);
  options.heartbeat_interval = absl::Seconds(f.heartbeat_interval_s);
  options.heartbeat_timeout = absl::Seconds(f.heartbeat_timeout_s);
  options.parent_pid = f.parent_pid;
  return options;
}

// Serves `registry` until the controller asks to stop; returns the exit code.
int Serve(const WorkerFlags& f, const std::string& token, c10::Device device,
          MethodRegistry* registry, RoleHost* roles) {
  absl::Notification shutdown_requested;
  WorkerService service(token, registry, &shutdown_requested);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat(f.bind, ":0"), grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(-1);
  builder.SetMaxSendMessageSize(-1);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return Fail(kExitBadSetup, absl::StrCat("cannot start the worker server on ", f.bind));
  }
  const std::string address = absl::StrCat(ReachableHost(f.bind), ":", port);

  ControllerLink link(LinkOptions(f, token));
  absl::StatusOr<wire::RegisterReply> registered =
      link.Register(address, absl::Now() + absl::Seconds(f.register_timeout_s));
  if (!registered.ok()) return Fail(kExitRegisterFailed, std::string(registered.status().message()));
  // The controller's recipe must read here too: a worker built from another schema
  // version stops now rather than misreading its configuration later.
  absl::StatusOr<config::LoadedRecipe> recipe =
      config::ParseRecipeYaml(registered->recipe_yaml(), "the recipe from the controller");
  if (!recipe.ok()) return Fail(kExitRegisterFailed, std::string(recipe.status().message()));
  roles->SetRecipe(recipe->recipe);
  ROLLOUT_LOG(INFO) << "serving on " << address << " (device " << device.str() << ", pid "
                    << getpid() << ")";

  link.StartHeartbeats([](const std::string& why) {
    ROLLOUT_LOG(ERROR) << why << "; exiting";
    std::_Exit(kExitControllerLost);  // a method may be mid-computation: do not wait for it
  });
  shutdown_requested.WaitForNotification();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}

}  // namespace

int RunWorker(const std::vector<std::string>& args) {
  WorkerFlags f;
  FlagSet flags = MakeFlags(&f);
  absl::StatusOr<FlagSet::Parsed> parsed = flags.Parse(args);
  if (!parsed.ok()) return Fail(kExitBadSetup, std::string(parsed.status().message()));
  if (parsed->help) {
    std::cout << flags.Usage();
    return 0;
  }
  const WorkerIdentity identity = IdentityFrom(f);
  log::SetProcessTag(absl::StrCat("worker ", f.worker_id, " ", absl::StrJoin(identity.roles, "+"),
                                  " r", f.rank));
  log::Level level;
  if (log::ParseLevel(f.log_level, &level)) log::SetMinLevel(level);
  const char* token = std::getenv(kRunTokenEnv);
  if (f.controller.empty() || f.worker_id < 0 || token == nullptr) {
    return Fail(kExitBadSetup, absl::StrCat("needs --controller, --worker_id and ", kRunTokenEnv,
                                            " in the environment (started by the launcher)"));
  }
  absl::StatusOr<c10::Device> device = OpenDevice(f.device);
  if (!device.ok()) return Fail(kExitBadSetup, std::string(device.status().message()));
  MethodRegistry registry(*device);
  if (absl::Status s = RegisterDiagnosticMethods(identity, *device, &registry); !s.ok()) {
    return Fail(kExitBadSetup, std::string(s.message()));
  }
  ControllerRendezvous rendezvous(f.controller, token);
  RoleHostOptions role_options;
  role_options.roles = identity.roles;
  role_options.device = *device;
  role_options.pool = identity.pool;
  role_options.rank = identity.rank;
  role_options.world = identity.world;
  role_options.rendezvous = &rendezvous;
  role_options.collective_address = ReachableHost(f.bind);
  RoleHost roles(std::move(role_options), &registry);
  if (absl::Status s = roles.RegisterInitMethod(); !s.ok()) {
    return Fail(kExitBadSetup, std::string(s.message()));
  }
  return Serve(f, token, *device, &registry, &roles);
}

}  // namespace rollout::workers
