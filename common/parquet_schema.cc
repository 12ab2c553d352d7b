#include "common/parquet_schema.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::parquet {
namespace {

// An array present from definition level `present`, with an element from present + 1.
Shape ArrayShape(const std::string& name, int present) {
  Shape array;
  array.kind = Shape::Kind::kArray;
  array.name = name;
  array.present_def = present;
  array.element_def = present + 1;
  return array;
}

// Walks the depth-first schema, building shapes and leaf columns as it goes.
class ShapeBuilder {
 public:
  explicit ShapeBuilder(const std::vector<SchemaElement>& schema) : schema_(schema) {}

  absl::StatusOr<RowShape> Build() && {
    if (schema_.empty()) return absl::InvalidArgumentError("the schema is empty");
    const SchemaElement& root = schema_[next_++];
    for (int32_t i = 0; i < root.num_children; ++i) {
      ASSIGN_OR_RETURN(Shape field, Node(0, 0, ""));
      row_.fields.push_back(std::move(field));
    }
    if (next_ != schema_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("the schema lists ", schema_.size(), " elements; its tree holds ", next_));
    }
    row_.paths.resize(row_.columns.size());
    std::vector<const Shape*> path;
    for (const Shape& field : row_.fields) CollectPaths(field, path);
    return std::move(row_);
  }

 private:
  absl::StatusOr<const SchemaElement*> Take() {
    if (next_ >= schema_.size()) return absl::InvalidArgumentError("the schema ends inside a group");
    return &schema_[next_++];
  }

  // The next element and its subtree, `def` and `rep` the levels of its parent.
  absl::StatusOr<Shape> Node(int def, int rep, const std::string& parent) {
    ASSIGN_OR_RETURN(const SchemaElement* element, Take());
    const std::string path = parent.empty() ? element->name : absl::StrCat(parent, ".", element->name);
    if (element->annotation == Annotation::kMap) {
      return absl::InvalidArgumentError(absl::StrCat("column '", path, "' is a ", element->annotation_name,
                                                     ", which this reader does not read"));
    }
    if (element->repetition == Repetition::kRepeated) {  // a bare repeated field
      Shape array = ArrayShape(element->name, def);
      ASSIGN_OR_RETURN(Shape value, Value(*element, def + 1, rep + 1, path));
      array.element.push_back(std::move(value));
      return array;
    }
    const int present = def + (element->repetition == Repetition::kOptional ? 1 : 0);
    if (element->annotation == Annotation::kList && !element->type.has_value()) return List(*element, present, rep, path);
    return Value(*element, present, rep, path);
  }

  // A LIST-annotated group: one repeated child, which is the element (a primitive, or
  // a group of several fields, or named "array" or "<list>_tuple": the legacy 2-level
  // forms) or holds it as its only child (the 3-level form).
  absl::StatusOr<Shape> List(const SchemaElement& list, int present, int rep, const std::string& path) {
    ASSIGN_OR_RETURN(const SchemaElement* repeated, Take());
    if (list.num_children != 1 || repeated->repetition != Repetition::kRepeated) {
      return absl::InvalidArgumentError(absl::StrCat("column '", path, "' is a LIST without one repeated child"));
    }
    Shape array = ArrayShape(list.name, present);
    const std::string repeated_path = absl::StrCat(path, ".", repeated->name);
    const bool two_level = repeated->type.has_value() || repeated->num_children > 1 || repeated->name == "array" ||
                           repeated->name == list.name + "_tuple";
    absl::StatusOr<Shape> element = two_level ? Value(*repeated, present + 1, rep + 1, repeated_path)
                                              : (repeated->num_children == 1
                                                     ? Node(present + 1, rep + 1, repeated_path)
                                                     : absl::InvalidArgumentError(absl::StrCat(
                                                           "column '", repeated_path, "' is an empty group")));
    RETURN_IF_ERROR(element.status());
    array.element.push_back(*std::move(element));
    return array;
  }

  // `element` (already taken) as one value present from definition level `present`:
  // a leaf, or an object of its children.
  absl::StatusOr<Shape> Value(const SchemaElement& element, int present, int rep, const std::string& path) {
    if (!element.type.has_value()) {
      Shape object;
      object.kind = Shape::Kind::kObject;
      object.name = element.name;
      object.present_def = present;
      for (int32_t i = 0; i < element.num_children; ++i) {
        ASSIGN_OR_RETURN(Shape field, Node(present, rep, path));
        object.fields.push_back(std::move(field));
      }
      return object;
    }
    RETURN_IF_ERROR(CheckLeafType(element, path));
    LeafColumn& column = row_.columns.emplace_back();
    column.name = path;
    column.type = *element.type;
    column.annotation = element.annotation;
    column.max_definition_level = present;
    column.max_repetition_level = rep;
    Shape leaf;
    leaf.kind = Shape::Kind::kLeaf;
    leaf.name = element.name;
    leaf.present_def = present;
    leaf.column = static_cast<int>(row_.columns.size()) - 1;
    return leaf;
  }

  static absl::Status CheckLeafType(const SchemaElement& element, const std::string& path) {
    const PhysicalType type = *element.type;
    const bool integer = type == PhysicalType::kInt32 || type == PhysicalType::kInt64;
    const bool readable =
        (element.annotation == Annotation::kNone &&
         (integer || type == PhysicalType::kBoolean || type == PhysicalType::kFloat ||
          type == PhysicalType::kDouble || type == PhysicalType::kByteArray)) ||
        (element.annotation == Annotation::kString && type == PhysicalType::kByteArray) ||
        ((element.annotation == Annotation::kSignedInt || element.annotation == Annotation::kUnsignedInt) && integer);
    if (readable) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "column '", path, "' holds ", PhysicalTypeName(type),
        element.annotation_name.empty() ? "" : absl::StrCat(" (", element.annotation_name, ")"),
        "; this reader reads booleans, integers, floating-point numbers and text"));
  }

  void CollectPaths(const Shape& shape, std::vector<const Shape*>& path) {
    path.push_back(&shape);
    if (shape.kind == Shape::Kind::kLeaf) row_.paths[shape.column] = path;
    for (const Shape& field : shape.fields) CollectPaths(field, path);
    for (const Shape& element : shape.element) CollectPaths(element, path);
    path.pop_back();
  }

  const std::vector<SchemaElement>& schema_;
  size_t next_ = 0;
  RowShape row_;
};

}  // namespace

absl::StatusOr<RowShape> ReadRowShape(const std::vector<SchemaElement>& schema) {
  return ShapeBuilder(schema).Build();
}

}  // namespace rollout::parquet
