#include "controller/slurm_hostlist.h"

#include <cstdint>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace rollout::controller {
namespace {

// The values of one bracket group's contents ("01-03,07"), each written with its
// range's lower bound's width.
absl::StatusOr<std::vector<std::string>> ExpandGroup(absl::string_view group) {
  std::vector<std::string> values;
  for (absl::string_view range : absl::StrSplit(group, ',')) {
    const std::vector<absl::string_view> bounds = absl::StrSplit(range, absl::MaxSplits('-', 1));
    uint64_t low = 0;
    uint64_t high = 0;
    const bool digits = !bounds.front().empty() &&
                        absl::c_all_of(bounds.front(), [](char c) { return absl::ascii_isdigit(c); });
    if (!digits || !absl::SimpleAtoi(bounds.front(), &low) ||
        (bounds.size() == 2 && !absl::SimpleAtoi(bounds.back(), &high))) {
      return absl::InvalidArgumentError(absl::StrCat("'", range, "' is not a number or a range of numbers"));
    }
    if (bounds.size() == 1) high = low;
    if (high < low) return absl::InvalidArgumentError(absl::StrCat("the range '", range, "' counts down"));
    const int width = static_cast<int>(bounds.front().size());
    for (uint64_t value = low; value <= high; ++value) values.push_back(absl::StrFormat("%0*d", width, value));
  }
  return values;
}

// The host names of one entry ("gpu-a[1-2]x[0-1]").
absl::StatusOr<std::vector<std::string>> ExpandEntry(absl::string_view entry) {
  std::vector<std::string> names = {""};
  while (!entry.empty()) {
    const size_t open = entry.find('[');
    const absl::string_view text = entry.substr(0, open);
    for (std::string& name : names) absl::StrAppend(&name, text);
    if (open == absl::string_view::npos) break;
    const size_t close = entry.find(']', open);
    if (close == absl::string_view::npos) return absl::InvalidArgumentError("a '[' is not closed");
    ASSIGN_OR_RETURN(const std::vector<std::string> values, ExpandGroup(entry.substr(open + 1, close - open - 1)));
    std::vector<std::string> product;
    for (const std::string& name : names) {
      for (const std::string& value : values) product.push_back(name + value);
    }
    names = std::move(product);
    entry.remove_prefix(close + 1);
  }
  return names;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandSlurmHostlist(const std::string& hostlist) {
  // Split at the commas outside brackets.
  std::vector<absl::string_view> entries;
  size_t begin = 0;
  int depth = 0;
  for (size_t i = 0; i <= hostlist.size(); ++i) {
    if (i == hostlist.size() || (hostlist[i] == ',' && depth == 0)) {
      entries.push_back(absl::string_view(hostlist).substr(begin, i - begin));
      begin = i + 1;
    } else if (hostlist[i] == '[') {
      ++depth;
    } else if (hostlist[i] == ']') {
      --depth;
    }
  }
  std::vector<std::string> hosts;
  for (const absl::string_view entry : entries) {
    if (entry.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("the host list '", hostlist, "' has an empty entry"));
    }
    absl::StatusOr<std::vector<std::string>> names = ExpandEntry(entry);
    if (!names.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the host list '", hostlist, "': in '", entry, "', ", names.status().message()));
    }
    hosts.insert(hosts.end(), names->begin(), names->end());
  }
  return hosts;
}

}  // namespace rollout::controller
