// A Parquet schema read as the shape of the JSON rows it gives (common/parquet_rows.h):
// objects, arrays and leaves, each with the definition level from which it is present,
// and the leaf columns with their maximum levels, in the order of the row groups'
// column chunks.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/parquet_column.h"
#include "common/parquet_metadata.h"

namespace rollout::parquet {

struct Shape {
  enum class Kind { kObject, kArray, kLeaf };
  Kind kind = Kind::kLeaf;
  std::string name;     // its key in the enclosing object (unused for array elements)
  int present_def = 0;  // a definition level below this makes the value null
  int element_def = 0;  // arrays: a definition level below this (and not below
                        // present_def) makes the array empty
  std::vector<Shape> fields;   // objects
  std::vector<Shape> element;  // arrays: exactly one
  int column = -1;             // leaves: the index in RowShape::columns
};

struct RowShape {
  RowShape() = default;
  RowShape(RowShape&&) = default;
  RowShape& operator=(RowShape&&) = default;
  RowShape(const RowShape&) = delete;  // `paths` points into `fields`

  std::vector<Shape> fields;  // the top-level columns
  std::vector<LeafColumn> columns;
  // For each leaf column, the shapes from its top-level field down to its leaf.
  std::vector<std::vector<const Shape*>> paths;
};

// The shape of the rows of `schema` (FileMetaData::schema, depth first, the root first).
// InvalidArgument naming the column for what common/parquet_rows.h does not read, and
// for a malformed schema.
absl::StatusOr<RowShape> ReadRowShape(const std::vector<SchemaElement>& schema);

}  // namespace rollout::parquet
