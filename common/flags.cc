#include "common/flags.h"

#include <iostream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rollout {

FlagSet::FlagSet(std::string usage_line, std::string summary)
    : usage_line_(std::move(usage_line)), summary_(std::move(summary)) {}

void FlagSet::AddString(const std::string& name, std::string* target, const std::string& help) {
  flags_.push_back({name, Kind::kString, target, help, *target});
}

void FlagSet::AddInt(const std::string& name, int64_t* target, const std::string& help) {
  flags_.push_back({name, Kind::kInt, target, help, std::to_string(*target)});
}

void FlagSet::AddDouble(const std::string& name, double* target, const std::string& help) {
  flags_.push_back({name, Kind::kDouble, target, help, absl::StrCat(*target)});
}

void FlagSet::AddBool(const std::string& name, bool* target, const std::string& help) {
  flags_.push_back({name, Kind::kBool, target, help, *target ? "true" : "false"});
}

const FlagSet::Flag* FlagSet::Find(const std::string& name) const {
  for (const Flag& flag : flags_) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

absl::Status FlagSet::Assign(const Flag& flag, const std::string& value) const {
  switch (flag.kind) {
    case Kind::kString:
      *static_cast<std::string*>(flag.target) = value;
      return absl::OkStatus();
    case Kind::kInt:
      if (absl::SimpleAtoi(value, static_cast<int64_t*>(flag.target))) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag.name, " expects an integer, got '", value, "'"));
    case Kind::kDouble:
      if (absl::SimpleAtod(value, static_cast<double*>(flag.target))) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag.name, " expects a number, got '", value, "'"));
    case Kind::kBool:
      if (absl::SimpleAtob(value, static_cast<bool*>(flag.target))) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag.name, " expects true or false, got '", value, "'"));
  }
  return absl::InternalError("unreachable flag kind");
}

absl::StatusOr<FlagSet::Parsed> FlagSet::Parse(const std::vector<std::string>& args) const {
  Parsed parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      parsed.help = true;
      return parsed;
    }
    if (arg == "--") {
      parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      parsed.positional.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const Flag* flag = Find(name);
    if (flag == nullptr && !has_value && name.compare(0, 3, "no-") == 0) {
      const Flag* negated = Find(name.substr(3));
      if (negated != nullptr && negated->kind == Kind::kBool) {
        *static_cast<bool*>(negated->target) = false;
        continue;
      }
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, " (see --help)"));
    }
    if (!has_value) {
      if (flag->kind == Kind::kBool) {
        *static_cast<bool*>(flag->target) = true;
        continue;
      }
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
      value = args[++i];
    }
    absl::Status status = Assign(*flag, value);
    if (!status.ok()) return status;
  }
  return parsed;
}

std::optional<int> FlagSet::ParseFlagsOnly(const std::vector<std::string>& args,
                                           const std::string& program) const {
  absl::StatusOr<Parsed> parsed = Parse(args);
  if (parsed.ok() && parsed->help) {
    std::cout << Usage();
    return 0;
  }
  if (parsed.ok() && parsed->positional.empty()) return std::nullopt;
  const std::string error = parsed.ok()
                                ? absl::StrCat("unexpected argument '", parsed->positional.front(), "'")
                                : std::string(parsed.status().message());
  std::cerr << program << ": " << error << "\n" << Usage();
  return 2;
}

std::string FlagSet::Usage() const {
  std::ostringstream out;
  out << "usage: " << usage_line_ << "\n\n" << summary_ << "\n";
  if (!flags_.empty()) out << "\nflags:\n";
  for (const Flag& flag : flags_) {
    out << absl::StrFormat("  --%-24s %s", flag.name, flag.help);
    if (!flag.default_text.empty()) out << " (default: " << flag.default_text << ")";
    out << "\n";
  }
  out << "  --help                     this text\n";
  return out.str();
}

}  // namespace rollout
