#include "controller/controller_service.h"

#include "common/grpc_status.h"
#include "common/run_token.h"

namespace rollout::controller {

ControllerService::ControllerService(std::string run_token, std::string recipe_yaml,
                                     WorkerRegistry* registry)
    : run_token_(std::move(run_token)), recipe_yaml_(std::move(recipe_yaml)), registry_(registry) {}

grpc::Status ControllerService::Register(grpc::ServerContext* context,
                                         const wire::RegisterRequest* request,
                                         wire::RegisterReply* reply) {
  if (absl::Status ok = CheckRunToken(run_token_, *context); !ok.ok()) return ToGrpcStatus(ok);
  absl::Status registered = registry_->Register(*request);
  if (registered.ok()) reply->set_recipe_yaml(recipe_yaml_);
  return ToGrpcStatus(registered);
}

grpc::Status ControllerService::Heartbeat(grpc::ServerContext* context,
                                          const wire::HeartbeatRequest* request,
                                          wire::HeartbeatReply* reply) {
  if (absl::Status ok = CheckRunToken(run_token_, *context); !ok.ok()) return ToGrpcStatus(ok);
  return ToGrpcStatus(registry_->Heartbeat(request->worker_id()));
}

grpc::Status ControllerService::StoreSet(grpc::ServerContext* context,
                                         const wire::StoreSetRequest* request,
                                         wire::StoreSetReply* reply) {
  if (absl::Status ok = CheckRunToken(run_token_, *context); !ok.ok()) return ToGrpcStatus(ok);
  return ToGrpcStatus(rendezvous_.Set(request->key(), request->value()));
}

grpc::Status ControllerService::StoreGet(grpc::ServerContext* context,
                                         const wire::StoreGetRequest* request,
                                         wire::StoreGetReply* reply) {
  if (absl::Status ok = CheckRunToken(run_token_, *context); !ok.ok()) return ToGrpcStatus(ok);
  if (std::optional<std::string> value = rendezvous_.Get(request->key())) {
    reply->set_found(true);
    reply->set_value(*std::move(value));
  }
  return grpc::Status::OK;
}

}  // namespace rollout::controller
