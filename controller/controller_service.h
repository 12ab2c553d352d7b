// gRPC adapter for the Controller service (proto/runtime.proto): checks the run
// token and forwards registrations and heartbeats to the WorkerRegistry, and the
// workers' rendezvous keys to a RendezvousStore it owns.
#pragma once

#include <string>

#include "controller/rendezvous_store.h"
#include "controller/worker_registry.h"
#include "proto/runtime.grpc.pb.h"

namespace rollout::controller {

class ControllerService final : public wire::Controller::Service {
 public:
  // `registry` must outlive the service; `recipe_yaml` is handed to each worker.
  ControllerService(std::string run_token, std::string recipe_yaml, WorkerRegistry* registry);

  grpc::Status Register(grpc::ServerContext* context, const wire::RegisterRequest* request,
                        wire::RegisterReply* reply) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const wire::HeartbeatRequest* request,
                         wire::HeartbeatReply* reply) override;
  grpc::Status StoreSet(grpc::ServerContext* context, const wire::StoreSetRequest* request,
                        wire::StoreSetReply* reply) override;
  grpc::Status StoreGet(grpc::ServerContext* context, const wire::StoreGetRequest* request,
                        wire::StoreGetReply* reply) override;

 private:
  const std::string run_token_;
  const std::string recipe_yaml_;
  WorkerRegistry* const registry_;
  RendezvousStore rendezvous_;
};

}  // namespace rollout::controller
