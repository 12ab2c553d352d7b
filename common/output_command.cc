#include "common/output_command.h"

#include <fstream>
#include <iostream>

namespace rollout {

int RunOutputCommand(const std::string& name, const FlagSet& flags,
                     const std::vector<std::string>& args, const std::string* output_path,
                     const std::function<absl::Status(std::ostream& out)>& body) {
  const absl::StatusOr<FlagSet::Parsed> parsed = flags.Parse(args);
  if (!parsed.ok()) {
    std::cerr << "rollout " << name << ": " << parsed.status().message() << "\n";
    return 2;
  }
  if (parsed->help) {
    std::cout << flags.Usage();
    return 0;
  }
  std::ofstream file;
  if (!output_path->empty()) {
    file.open(*output_path);
    if (!file) {
      std::cerr << "rollout " << name << ": cannot write " << *output_path << "\n";
      return 1;
    }
  }
  const absl::Status status = body(output_path->empty() ? std::cout : file);
  if (!status.ok()) {
    std::cerr << "rollout " << name << ": " << status.message() << "\n";
    return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}

}  // namespace rollout
