// Command-line flags for the `rollout` subcommands: `--name=value` or `--name value`,
// `--flag` / `--no-flag` for booleans, `--` ends flags. Everything else is positional.
// An unknown flag or a malformed value is an InvalidArgument naming it.
//
//   FlagSet flags("rollout plan RECIPE [key=value ...]", "Prints the resolved recipe.");
//   flags.AddString("log_level", &log_level, "debug|info|warning|error");
//   ASSIGN_OR_RETURN(FlagSet::Parsed parsed, flags.Parse(args));
//   if (parsed.help) { std::cout << flags.Usage(); return 0; }
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout {

class FlagSet {
 public:
  FlagSet(std::string usage_line, std::string summary);

  // Targets keep their current values as defaults and must outlive Parse().
  void AddString(const std::string& name, std::string* target, const std::string& help);
  void AddInt(const std::string& name, int64_t* target, const std::string& help);
  void AddDouble(const std::string& name, double* target, const std::string& help);
  void AddBool(const std::string& name, bool* target, const std::string& help);

  struct Parsed {
    std::vector<std::string> positional;
    bool help = false;  // --help or -h was given; nothing else is checked then
  };
  // `args` excludes the program and subcommand names.
  absl::StatusOr<Parsed> Parse(const std::vector<std::string>& args) const;

  // The usage line, the summary and one line per flag with its default.
  std::string Usage() const;

  // For programs that take flags only (the benchmarks): parses `args`; with --help prints
  // the usage on stdout and returns 0, and for a bad flag or a positional argument
  // prints "<program>: <error>" and the usage on stderr and returns 2 — the exit status
  // to stop with. Returns nullopt to go on.
  std::optional<int> ParseFlagsOnly(const std::vector<std::string>& args,
                                    const std::string& program) const;

 private:
  enum class Kind { kString, kInt, kDouble, kBool };
  struct Flag {
    std::string name;
    Kind kind;
    void* target;
    std::string help;
    std::string default_text;
  };
  const Flag* Find(const std::string& name) const;
  absl::Status Assign(const Flag& flag, const std::string& value) const;

  std::string usage_line_;
  std::string summary_;
  std::vector<Flag> flags_;
};

}  // namespace rollout
