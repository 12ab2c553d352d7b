#include "tests/support/local_slurm.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "tests/support/unused_port.h"

namespace rollout::testing {
namespace {

std::string ShortHostName() {
  char hostname[256] = {0};
  gethostname(hostname, sizeof(hostname) - 1);
  const std::string host = hostname;
  return host.substr(0, host.find('.'));
}

// The last lines of `path`, for an error message.
std::string LogTail(const std::string& path) {
  std::string text = ReadFile(path).value_or("(no log)");
  if (text.size() > 1500) text = "..." + text.substr(text.size() - 1500);
  return text;
}

// Runs `command` under bash with its output into `log`, as a daemon in the foreground.
std::unique_ptr<Subprocess> StartDaemon(const std::string& command, const std::string& log) {
  return std::make_unique<Subprocess>(
      std::vector<std::string>{"/bin/bash", "-c", absl::StrCat("exec ", command, " >", log, " 2>&1")});
}

}  // namespace

std::string LocalSlurmCluster::Program(const std::string& name) {
  for (const char* folder : {"/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"}) {
    const std::string path = absl::StrCat(folder, "/", name);
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

std::string LocalSlurmCluster::MissingPrograms() {
  for (const char* program : {"munged", "mungekey", "slurmctld", "slurmd", "salloc", "srun", "sinfo", "squeue"}) {
    if (Program(program).empty()) return absl::StrCat(program, " is not installed (scripts/setup.sh installs it)");
  }
  return "";
}

absl::StatusOr<std::unique_ptr<LocalSlurmCluster>> LocalSlurmCluster::Start(const std::string& dir, int cpus) {
  std::unique_ptr<LocalSlurmCluster> cluster(new LocalSlurmCluster());
  for (const char* folder : {"state", "spool"}) {
    if (mkdir(JoinPath(dir, folder).c_str(), 0700) != 0) {
      return absl::InternalError(absl::StrCat("cannot make ", JoinPath(dir, folder)));
    }
  }
  const std::string key = JoinPath(dir, "munge.key");
  const std::string socket = JoinPath(dir, "munge.socket");
  const CommandResult made_key = RunCommand({Program("mungekey"), "--create", "--keyfile=" + key, "--force"}, 30);
  if (made_key.exit_code != 0) return absl::InternalError("mungekey: " + made_key.output);
  chmod(key.c_str(), 0600);
  cluster->daemons_.push_back(StartDaemon(
      absl::StrCat(Program("munged"), " --foreground --force --socket=", socket, " --key-file=", key,
                   " --pid-file=", JoinPath(dir, "munged.pid"), " --seed-file=", JoinPath(dir, "munged.seed"),
                   " --log-file=", JoinPath(dir, "munged.log")),
      JoinPath(dir, "munged.out")));

  const std::string host = ShortHostName();
  cluster->conf_ = JoinPath(dir, "slurm.conf");
  std::ofstream(cluster->conf_) << absl::StrCat(
      "ClusterName=rollouttest\nSlurmctldHost=", host, "(127.0.0.1)\nSlurmUser=root\nSlurmdUser=root\n",
      "SlurmctldPort=", UnusedPort(), "\nSlurmdPort=", UnusedPort(), "\n",
      "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=", socket, "\n",
      "StateSaveLocation=", JoinPath(dir, "state"), "\nSlurmdSpoolDir=", JoinPath(dir, "spool"), "\n",
      "SlurmctldPidFile=", JoinPath(dir, "slurmctld.pid"), "\nSlurmdPidFile=", JoinPath(dir, "slurmd.pid"), "\n",
      "SlurmctldLogFile=", JoinPath(dir, "slurmctld.log"), "\nSlurmdLogFile=", JoinPath(dir, "slurmd.log"), "\n",
      "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nReturnToService=2\n",
      "SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n",
      "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\nMpiDefault=none\n",
      "NodeName=", host, " NodeAddr=127.0.0.1 CPUs=", cpus, " State=UNKNOWN\n",
      "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n");
  cluster->daemons_.push_back(StartDaemon(absl::StrCat(Program("slurmctld"), " -D -i -f ", cluster->conf_),
                                          JoinPath(dir, "slurmctld.out")));
  cluster->daemons_.push_back(
      StartDaemon(absl::StrCat(Program("slurmd"), " -D -N ", host, " -f ", cluster->conf_),
                  JoinPath(dir, "slurmd.out")));

  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string state;
  while (absl::Now() < deadline) {
    const CommandResult sinfo =
        RunCommand({"/usr/bin/env", "SLURM_CONF=" + cluster->conf_, Program("sinfo"), "-h", "-o", "%t"}, 10);
    state = std::string(absl::StripAsciiWhitespace(sinfo.output));
    if (sinfo.exit_code == 0 && state == "idle") return cluster;
    absl::SleepFor(absl::Milliseconds(200));
  }
  return absl::UnavailableError(absl::StrCat("the local Slurm cluster did not come up (sinfo: ", state,
                                             ")\nslurmctld:\n", LogTail(JoinPath(dir, "slurmctld.log")),
                                             "\nslurmd:\n", LogTail(JoinPath(dir, "slurmd.log")), "\nmunged:\n",
                                             LogTail(JoinPath(dir, "munged.log"))));
}

LocalSlurmCluster::~LocalSlurmCluster() {
  // slurmd, then slurmctld, then munged; each a moment to end on SIGTERM.
  // (A daemon still running after 5 s is killed as its Subprocess goes.)
  for (auto daemon = daemons_.rbegin(); daemon != daemons_.rend(); ++daemon) {
    kill((*daemon)->pid(), SIGTERM);
    (*daemon)->Wait(5);
    daemon->reset();
  }
}

}  // namespace rollout::testing
