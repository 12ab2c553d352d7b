#include "common/parquet_rows.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/parquet_column.h"
#include "common/parquet_metadata.h"
#include "common/parquet_schema.h"
#include "common/status_macros.h"

namespace rollout::parquet {
namespace {

using json = nlohmann::ordered_json;

constexpr absl::string_view kMagic = "PAR1";
constexpr absl::string_view kEncryptedMagic = "PARE";

absl::StatusOr<absl::string_view> Footer(absl::string_view bytes) {
  if (bytes.size() < 12 || !absl::StartsWith(bytes, kMagic)) {
    return absl::InvalidArgumentError("not a Parquet file: it does not begin with PAR1 and a footer");
  }
  if (absl::EndsWith(bytes, kEncryptedMagic)) {
    return absl::InvalidArgumentError("the file is encrypted, which this reader does not read");
  }
  if (!absl::EndsWith(bytes, kMagic)) {
    return absl::InvalidArgumentError("the file does not end with PAR1: it is truncated");
  }
  uint32_t footer_size;
  std::memcpy(&footer_size, bytes.data() + bytes.size() - 8, 4);
  if (footer_size > bytes.size() - 12) {
    return absl::InvalidArgumentError(
        absl::StrCat("a footer of ", footer_size, " bytes in a file of ", bytes.size(), ": it is truncated"));
  }
  return bytes.substr(bytes.size() - 8 - footer_size, footer_size);
}

// Places one leaf column's values into the rows [first_row, first_row + num_rows) of
// `rows`, creating the objects and arrays on its path that earlier columns have not.
// A triple's repetition level r starts a new row (r = 0) or a new element of the r-th
// array on the path; its definition level says how deep the path is present.
absl::Status Assemble(const std::vector<const Shape*>& path, const LeafColumn& leaf, ColumnValues column,
                      std::vector<json>& rows, size_t first_row, int64_t num_rows) {
  int64_t row = -1;
  size_t next_value = 0;
  std::vector<size_t> element_index(leaf.max_repetition_level, 0);
  for (int64_t i = 0; i < column.size; ++i) {
    const int rep = column.repetition_levels.empty() ? 0 : column.repetition_levels[i];
    const int def = column.definition_levels.empty() ? leaf.max_definition_level : column.definition_levels[i];
    if (rep == 0 && ++row >= num_rows) {
      return absl::InvalidArgumentError(absl::StrCat("more rows than the row group's ", num_rows));
    }
    if (row < 0) return absl::InvalidArgumentError("the first value continues a row");
    json* slot = &rows[first_row + row][path[0]->name];
    int level = 0;  // arrays passed on the path
    for (size_t k = 0; k < path.size(); ++k) {
      const Shape& shape = *path[k];
      if (def < shape.present_def) {
        *slot = nullptr;
        break;
      }
      if (shape.kind == Shape::Kind::kLeaf) {
        if (next_value >= column.values.size()) return absl::InvalidArgumentError("fewer values than its levels say");
        *slot = std::move(column.values[next_value++]);
        break;
      }
      if (shape.kind == Shape::Kind::kObject) {
        if (!slot->is_object()) *slot = json::object();
        slot = &(*slot)[path[k + 1]->name];
        continue;
      }
      if (!slot->is_array()) *slot = json::array();
      ++level;
      if (def < shape.element_def) break;  // present and empty
      if (level > rep) element_index[level - 1] = 0;  // a new array: its first element
      if (level == rep) ++element_index[level - 1];
      const size_t index = element_index[level - 1];
      if (index > slot->size()) return absl::InvalidArgumentError("repetition levels skip an element");
      if (index == slot->size()) slot->push_back(nullptr);
      slot = &(*slot)[index];
    }
  }
  if (row + 1 != num_rows) {
    return absl::InvalidArgumentError(absl::StrCat(row + 1, " rows where the row group has ", num_rows));
  }
  if (next_value != column.values.size()) return absl::InvalidArgumentError("more values than its levels say");
  return absl::OkStatus();
}

absl::Status ReadRowGroup(absl::string_view bytes, const RowShape& shape, const RowGroup& group,
                          std::vector<json>& rows) {
  if (group.columns.size() != shape.columns.size()) {
    return absl::InvalidArgumentError(absl::StrCat("it has ", group.columns.size(), " column chunks for the schema's ",
                                                   shape.columns.size(), " columns"));
  }
  // Every leaf column has a level triple (at least) per row.
  if (group.num_rows < 0 || (!group.columns.empty() && group.num_rows > group.columns[0].num_values)) {
    return absl::InvalidArgumentError(absl::StrCat(group.num_rows, " rows in chunks of ",
                                                   group.columns.empty() ? 0 : group.columns[0].num_values, " values"));
  }
  const size_t first_row = rows.size();
  rows.resize(first_row + group.num_rows, json::object());
  for (size_t c = 0; c < shape.columns.size(); ++c) {
    const LeafColumn& leaf = shape.columns[c];
    const ColumnChunk& chunk = group.columns[c];
    auto in_column = [&](const absl::Status& status) {
      return absl::Status(status.code(), absl::StrCat("column '", leaf.name, "': ", status.message()));
    };
    if (absl::StrJoin(chunk.path, ".") != leaf.name || chunk.type != leaf.type) {
      return in_column(absl::InvalidArgumentError(absl::StrCat(
          "its chunk is '", absl::StrJoin(chunk.path, "."), "' of ", PhysicalTypeName(chunk.type))));
    }
    absl::StatusOr<ColumnValues> values = ReadColumnChunk(bytes, chunk, leaf);
    if (!values.ok()) return in_column(values.status());
    const absl::Status placed = Assemble(shape.paths[c], leaf, *std::move(values), rows, first_row, group.num_rows);
    if (!placed.ok()) return in_column(placed);
  }
  return absl::OkStatus();
}

}  // namespace

bool HasParquetMagic(absl::string_view bytes) { return absl::StartsWith(bytes, kMagic); }

absl::StatusOr<std::vector<json>> ReadRows(absl::string_view bytes) {
  ASSIGN_OR_RETURN(const absl::string_view footer, Footer(bytes));
  absl::StatusOr<FileMetaData> metadata = ParseFileMetaData(footer);
  if (!metadata.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("its footer: ", metadata.status().message()));
  }
  ASSIGN_OR_RETURN(const RowShape shape, ReadRowShape(metadata->schema));
  std::vector<json> rows;
  for (size_t g = 0; g < metadata->row_groups.size(); ++g) {
    const absl::Status status = ReadRowGroup(bytes, shape, metadata->row_groups[g], rows);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("row group ", g, ", ", status.message()));
    }
  }
  if (static_cast<int64_t>(rows.size()) != metadata->num_rows) {
    return absl::InvalidArgumentError(
        absl::StrCat("its row groups hold ", rows.size(), " rows where its footer says ", metadata->num_rows));
  }
  return rows;
}

}  // namespace rollout::parquet
