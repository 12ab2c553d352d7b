// reward.remote: batches scored on a RewardService keep their scores, extras, outcomes
// and order, large batches go as several calls, an unreachable server is a clear error
// after the retries, and `rollout reward-server` serves a plug-in until it is signalled.
#include "rewards/remote_reward_runner.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <numeric>
#include <string>

#include "absl/strings/str_cat.h"
#include "rewards/reward_service.h"
#include "rewards/thread_reward_runner.h"
#include "tests/support/subprocess.h"
#include "tests/support/unused_port.h"

namespace rollout::rewards {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using rollout::testing::UnusedPort;

// Scores the response's length with an "acc" extra; "error" fails, "sleep N" sleeps N ms.
class LengthReward final : public RewardFunction {
 public:
  const std::string& name() const override { return name_; }
  absl::StatusOr<RewardOutput> Score(const RewardInput& input) const override {
    if (input.response == "error") return absl::InvalidArgumentError("bad ground truth");
    if (input.response.rfind("sleep ", 0) == 0) {
      absl::SleepFor(absl::Milliseconds(std::stoi(input.response.substr(6))));
    }
    RewardOutput output;
    output.score = static_cast<double>(input.response.size());
    output.extra["acc"] = 0.5;
    return output;
  }

 private:
  std::string name_ = "length";
};

// Scores with `inner` and records the size of each batch it is given.
class RecordingRunner final : public RewardRunner {
 public:
  explicit RecordingRunner(RewardRunner* inner) : inner_(inner) {}
  absl::StatusOr<std::vector<ScoredSample>> Score(const std::vector<RewardInput>& samples) override {
    batch_sizes.push_back(samples.size());
    return inner_->Score(samples);
  }
  std::vector<size_t> batch_sizes;

 private:
  RewardRunner* const inner_;
};

// Fails its first `failures` calls with `code`, then answers every sample with score 1,
// leaving out `missing` results.
class ScriptedService final : public wire::RewardService::Service {
 public:
  ScriptedService(grpc::StatusCode code, int failures, int missing = 0)
      : code_(code), failures_(failures), missing_(missing) {}
  grpc::Status Score(grpc::ServerContext*, const wire::ScoreRequest* request,
                     wire::ScoreReply* reply) override {
    if (++calls <= failures_) return grpc::Status(code_, "scripted failure");
    for (int i = 0; i < request->samples_size() - missing_; ++i) reply->add_results()->set_score(1);
    return grpc::Status::OK;
  }
  std::atomic<int> calls{0};

 private:
  const grpc::StatusCode code_;
  const int failures_;
  const int missing_;
};

// A gRPC server for `service` on a free local port, until destroyed.
class TestServer {
 public:
  explicit TestServer(grpc::Service* service) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(service);
    server_ = builder.BuildAndStart();
  }
  ~TestServer() { server_->Shutdown(); }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

RemoteRunnerOptions Remote(const std::string& address) {
  RemoteRunnerOptions options;
  options.address = address;
  options.deadline = absl::Seconds(60);
  options.initial_backoff = absl::Milliseconds(10);
  return options;
}

std::vector<RewardInput> Samples(const std::vector<std::string>& responses) {
  std::vector<RewardInput> samples;
  for (const std::string& response : responses) {
    samples.emplace_back();
    samples.back().response = response;
    samples.back().ground_truth = "42";
  }
  return samples;
}

ThreadRunnerOptions ThreadOptions(absl::Duration timeout) {
  ThreadRunnerOptions options;
  options.num_workers = 2;
  options.timeout = timeout;
  return options;
}

TEST(RemoteRewardRunner, ScoresExtrasAndOutcomesSurviveTheRoundTrip) {
  ThreadRewardRunner local(RewardSelector::Of(std::make_unique<LengthReward>()),
                           ThreadOptions(absl::Seconds(1)));
  RewardServiceImpl service(&local);
  TestServer server(&service);
  auto remote = RemoteRewardRunner::Create(Remote(server.address())).value();

  const std::vector<ScoredSample> results =
      remote->Score(Samples({"abc", "error", "sleep 30000", "hello"})).value();
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].outcome, SampleOutcome::kOk) << results[0].error;
  EXPECT_EQ(results[0].output.score, 3.0);
  EXPECT_EQ(results[0].output.extra, (std::map<std::string, double>{{"acc", 0.5}}));
  EXPECT_EQ(results[1].outcome, SampleOutcome::kError);
  EXPECT_THAT(results[1].error, HasSubstr("bad ground truth"));
  EXPECT_EQ(results[1].output.score, 0.0);
  EXPECT_TRUE(results[1].output.extra.empty());
  EXPECT_EQ(results[2].outcome, SampleOutcome::kTimeout);
  EXPECT_FALSE(results[2].error.empty());
  EXPECT_EQ(results[3].outcome, SampleOutcome::kOk) << results[3].error;
  EXPECT_EQ(results[3].output.score, 5.0);
  const RewardFailures failures = CountFailures(results);
  EXPECT_EQ(failures.errors, 1);
  EXPECT_EQ(failures.timeouts, 1);
}

TEST(RemoteRewardRunner, LargeBatchGoesAsSeveralCallsInOrder) {
  ThreadRewardRunner local(RewardSelector::Of(std::make_unique<LengthReward>()),
                           ThreadOptions(absl::Seconds(30)));
  RecordingRunner recording(&local);
  RewardServiceImpl service(&recording);
  TestServer server(&service);
  RemoteRunnerOptions options = Remote(server.address());
  options.max_request_bytes = 100;
  auto remote = RemoteRewardRunner::Create(options).value();

  std::vector<std::string> responses;
  for (int i = 0; i < 60; ++i) responses.push_back(std::string(1 + i % 7, 'x'));
  responses[30] = std::string(500, 'y');  // larger than a request: goes alone
  const std::vector<ScoredSample> results = remote->Score(Samples(responses)).value();
  ASSERT_EQ(results.size(), responses.size());
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].output.score, static_cast<double>(responses[i].size())) << i;
  }
  EXPECT_GT(recording.batch_sizes.size(), 2u);
  EXPECT_THAT(recording.batch_sizes, Contains(1u));
  EXPECT_EQ(std::accumulate(recording.batch_sizes.begin(), recording.batch_sizes.end(), size_t{0}),
            responses.size());
}

TEST(RemoteRewardRunner, EmptyBatchNeedsNoServer) {
  auto remote =
      RemoteRewardRunner::Create(Remote(absl::StrCat("127.0.0.1:", UnusedPort()))).value();
  const absl::StatusOr<std::vector<ScoredSample>> results = remote->Score({});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE(results->empty());
}

TEST(RemoteRewardRunner, DeadServerIsAClearErrorAfterRetries) {
  const int port = UnusedPort();
  ASSERT_NE(port, 0);
  RemoteRunnerOptions options = Remote(absl::StrCat("127.0.0.1:", port));
  options.max_attempts = 3;
  auto remote = RemoteRewardRunner::Create(options).value();
  const absl::Status status = remote->Score(Samples({"42"})).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              StartsWith(absl::StrCat("reward server 127.0.0.1:", port, ": unreachable after 3 attempts: ")));
}

TEST(RemoteRewardRunner, UnavailableIsRetriedUntilTheServerAnswers) {
  ScriptedService service(grpc::StatusCode::UNAVAILABLE, /*failures=*/2);
  TestServer server(&service);
  RemoteRunnerOptions options = Remote(server.address());
  options.max_attempts = 3;
  auto remote = RemoteRewardRunner::Create(options).value();
  const absl::StatusOr<std::vector<ScoredSample>> results = remote->Score(Samples({"a", "b"}));
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(results->size(), 2u);
  EXPECT_EQ(service.calls.load(), 3);
}

TEST(RemoteRewardRunner, UnavailableOnEveryAttemptKeepsTheServersMessage) {
  ScriptedService service(grpc::StatusCode::UNAVAILABLE, /*failures=*/100);
  TestServer server(&service);
  RemoteRunnerOptions options = Remote(server.address());
  options.max_attempts = 2;
  auto remote = RemoteRewardRunner::Create(options).value();
  const absl::Status status = remote->Score(Samples({"a"})).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), absl::StrCat("reward server ", server.address(),
                                           ": unreachable after 2 attempts: scripted failure"));
  EXPECT_EQ(service.calls.load(), 2);
}

TEST(RemoteRewardRunner, OtherErrorsAreNotRetried) {
  ScriptedService service(grpc::StatusCode::FAILED_PRECONDITION, /*failures=*/1);
  TestServer server(&service);
  auto remote = RemoteRewardRunner::Create(Remote(server.address())).value();
  const absl::Status status = remote->Score(Samples({"a"})).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), absl::StrCat("reward server ", server.address(), ": scripted failure"));
  EXPECT_EQ(service.calls.load(), 1);
}

TEST(RemoteRewardRunner, ReplyWithAMissingResultIsDataLoss) {
  ScriptedService service(grpc::StatusCode::OK, /*failures=*/0, /*missing=*/1);
  TestServer server(&service);
  auto remote = RemoteRewardRunner::Create(Remote(server.address())).value();
  const absl::Status status = remote->Score(Samples({"a", "b", "c"})).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(),
            absl::StrCat("reward server ", server.address(), ": 2 results for 3 samples"));
}

TEST(RemoteRewardRunner, AddressThatIsNotHostPortIsInvalidArgument) {
  for (const std::string address :
       {"", "localhost", "localhost:", ":50051", "host:port", "host:0", "host:70000", "::1:50051",
        "dns:///host:50051"}) {
    const absl::Status status = RemoteRewardRunner::Create(Remote(address)).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << address;
    EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("'", address, "' is not host:port")));
  }
  for (const std::string address : {"localhost:50051", "10.0.0.5:1", "[::1]:50051"}) {
    EXPECT_TRUE(RemoteRewardRunner::Create(Remote(address)).ok()) << address;
  }
}

// `rollout reward-server ARGS --port 0`, until it listens; address() is where.
class RewardServerProcess {
 public:
  explicit RewardServerProcess(std::vector<std::string> args) : process_(Argv(std::move(args))) {
    const std::string prefix = "reward server listening on ";
    const std::string line = process_.WaitForLine(prefix, 60);
    if (!line.empty()) address_ = line.substr(prefix.size());
  }
  const std::string& address() const { return address_; }
  testing::Subprocess& process() { return process_; }

 private:
  static std::vector<std::string> Argv(std::vector<std::string> args) {
    args.insert(args.begin(), {ROLLOUT_BINARY_PATH, "reward-server"});
    args.insert(args.end(), {"--port", "0"});
    return args;
  }

  testing::Subprocess process_;
  std::string address_;
};

TEST(RewardServerCommand, ServesAPluginAndStopsCleanlyOnSigterm) {
  RewardServerProcess server({"--plugin", EXAMPLE_PLUGIN_PATH});
  ASSERT_THAT(server.address(), StartsWith("127.0.0.1:")) << server.process().Output();
  auto remote = RemoteRewardRunner::Create(Remote(server.address())).value();
  const std::vector<ScoredSample> results = remote->Score(Samples({"x 42", "x 41"})).value();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].output.score, 1.0);
  EXPECT_EQ(results[1].output.score, 0.0);
  EXPECT_EQ(results[1].output.extra.at("response_chars"), 4.0);

  // The client stays connected: the server still stops, after its grace period.
  ASSERT_EQ(kill(server.process().pid(), SIGTERM), 0);
  const int status = server.process().Wait(30);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(server.process().Output(),
            absl::StrCat("reward server listening on ", server.address(), "\n"));
}

TEST(RewardServerCommand, ProcessIsolationReturnsACrashAsAResult) {
  RewardServerProcess server(
      {"--plugin", MISBEHAVING_PLUGIN_PATH, "--isolation", "process", "--num_workers", "1"});
  ASSERT_THAT(server.address(), StartsWith("127.0.0.1:")) << server.process().Output();
  auto remote = RemoteRewardRunner::Create(Remote(server.address())).value();
  const std::vector<ScoredSample> results =
      remote->Score(Samples({"42", "segfault", "42"})).value();
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].output.score, 1.0);
  EXPECT_EQ(results[1].outcome, SampleOutcome::kError);
  EXPECT_THAT(results[1].error, HasSubstr("(SIGSEGV)"));
  EXPECT_EQ(results[2].output.score, 1.0);

  remote.reset();  // with no client connected, the server need not wait out its grace period
  ASSERT_EQ(kill(server.process().pid(), SIGINT), 0);
  const int status = server.process().Wait(30);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(RewardServerCommand, BadFlagsExitWithCode2AndOneLine) {
  const std::vector<std::vector<std::string>> cases = {
      {"--isolation", "fork"},
      {"--no_such_flag"},
      {"--port", "70000"},
      {"--name", "no_such_reward"},
      {"--name", "gsm8k", "--plugin", EXAMPLE_PLUGIN_PATH},
      {"stray"},
  };
  for (const std::vector<std::string>& args : cases) {
    std::vector<std::string> argv = {ROLLOUT_BINARY_PATH, "reward-server"};
    argv.insert(argv.end(), args.begin(), args.end());
    const testing::CommandResult result = testing::RunCommand(argv, 60);
    EXPECT_EQ(result.exit_code, 2) << args[0] << ": " << result.output;
    EXPECT_THAT(result.output, StartsWith("rollout reward-server: ")) << args[0];
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
  }
}

}  // namespace
}  // namespace rollout::rewards
