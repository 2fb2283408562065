// The first steps of an ONNX import: the model parsed, its weights counted as parameters, checked,
// and its batch found and fixed.
#include "onnx/model_reading.h"

#include <onnx/checker.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>

namespace remat::onnx_import {
namespace {

using onnx::TensorProto;

// Initializers up to this many elements keep their values: shape computations (Reshape's
// shape, Slice's starts, Resize's scales) read them. Larger ones become typed inputs.
constexpr int64_t kKeptInitializerElements = 64;

// Counts a named weight; returns its element count. Floating-point weights other than
// batch-norm running statistics are trainable.
int64_t AddParameter(ImportState& state, const std::string& name, int32_t data_type,
                     const Shape& dims, const char* what) {
  if (name.empty()) state.Fail(fmt::format("an {} has no name", what));
  if (!state.parameter_names_.insert(name).second) {
    state.Fail(fmt::format("{} '{}' is defined twice", what, name));
  }
  const std::optional<int64_t> elements = CheckedElements(dims);
  const std::optional<int64_t> element_bytes = ElementBytes(data_type);
  if (!elements) state.Fail(fmt::format("{} '{}' has an invalid or too large shape", what, name));
  if (!element_bytes) {
    state.Fail(fmt::format("{} '{}' has an unsupported element type ({})", what, name, data_type));
  }
  const std::optional<int64_t> bytes = CheckedMul(*elements, *element_bytes);
  if (!bytes) state.Fail(fmt::format("{} '{}' is too large", what, name));
  state.result_.parameters += *elements;
  state.result_.parameter_bytes += *bytes;
  if (IsFloating(data_type) && state.batch_norm_statistics_.count(name) == 0) {
    state.result_.trainable_parameters += *elements;
    state.result_.trainable_parameter_bytes += *bytes;
  }
  return *elements;
}

// A Constant node's value: a parameter that is never trained.
void CountConstant(ImportState& state, int32_t data_type, std::optional<int64_t> elements) {
  const std::optional<int64_t> element_bytes = ElementBytes(data_type);
  if (!elements || !element_bytes) return;  // strings and malformed values: the checker speaks
  const std::optional<int64_t> bytes = CheckedMul(*elements, *element_bytes);
  if (!bytes) return;
  state.result_.parameters += *elements;
  state.result_.parameter_bytes += *bytes;
}

}  // namespace

void ParseModel(ImportState& state, std::string_view bytes) {
  if (bytes.empty()) state.Fail("the file is empty, not an ONNX model");
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    state.Fail(
        "the file is larger than protobuf's 2 GiB limit; store the weights as external data");
  }
  if (!state.model_.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    state.Fail(
        "not an ONNX model: the file does not parse as an ONNX ModelProto (truncated, "
        "corrupt or another format)");
  }
  if (!state.model_.has_ir_version() || !state.model_.has_graph()) {
    state.Fail(fmt::format("not an ONNX model: it has no {}",
                           state.model_.has_ir_version() ? "graph" : "IR version"));
  }
  for (const onnx::OperatorSetIdProto& opset : state.model_.opset_import()) {
    if (IsStandardDomain(opset.domain())) state.opset_ = opset.version();
  }
}

void CollectParameters(ImportState& state) {
  onnx::GraphProto& g = *state.model_.mutable_graph();
  for (const onnx::NodeProto& node : g.node()) {
    if (node.op_type() != "BatchNormalization" || !IsStandardDomain(node.domain())) continue;
    for (int k = 3; k < std::min(node.input_size(), 5); ++k) {
      state.batch_norm_statistics_.insert(node.input(k));
    }
  }
  std::map<std::string, onnx::ValueInfoProto*> inputs;
  for (onnx::ValueInfoProto& input : *g.mutable_input()) inputs.emplace(input.name(), &input);

  auto add_parameter = [&](const std::string& name, int32_t data_type, const auto& dims,
                           const char* what) {
    return AddParameter(state, name, data_type, std::vector<int64_t>(dims.begin(), dims.end()),
                        what);
  };
  auto declare_input = [&](const std::string& name, int32_t data_type, const auto& dims) {
    auto it = inputs.find(name);
    onnx::ValueInfoProto* input = it != inputs.end() ? it->second : g.add_input();
    input->set_name(name);
    onnx::TypeProto_Tensor* type = input->mutable_type()->mutable_tensor_type();
    type->set_elem_type(data_type);
    onnx::TensorShapeProto* shape = type->mutable_shape();
    shape->clear_dim();
    for (const int64_t d : dims) shape->add_dim()->set_dim_value(d);
  };

  google::protobuf::RepeatedPtrField<TensorProto> kept;
  for (TensorProto& tensor : *g.mutable_initializer()) {
    const int64_t elements =
        add_parameter(tensor.name(), tensor.data_type(), tensor.dims(), "initializer");
    const bool external = tensor.data_location() == TensorProto::EXTERNAL;
    if (!external && elements <= kKeptInitializerElements) {
      state.small_constants_.emplace(tensor.name(), tensor);
      kept.Add(std::move(tensor));
    } else {
      declare_input(tensor.name(), tensor.data_type(), tensor.dims());
    }
  }
  g.mutable_initializer()->Swap(&kept);
  for (const onnx::SparseTensorProto& sparse : g.sparse_initializer()) {
    add_parameter(sparse.values().name(), sparse.values().data_type(), sparse.dims(),
                  "sparse initializer");
    declare_input(sparse.values().name(), sparse.values().data_type(), sparse.dims());
  }
  g.clear_sparse_initializer();

  for (const onnx::NodeProto& node : g.node()) {
    if (node.op_type() != "Constant" || !IsStandardDomain(node.domain())) continue;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.name() == "value" && attr.has_t()) {
        const TensorProto& t = attr.t();
        if (node.output_size() > 0) state.small_constants_.emplace(node.output(0), t);
        CountConstant(state, t.data_type(), CheckedElements(t.dims()));
      } else if (attr.name() == "sparse_value" && attr.has_sparse_tensor()) {
        CountConstant(state, attr.sparse_tensor().values().data_type(),
                      CheckedElements(attr.sparse_tensor().dims()));
      } else if (attr.name() == "value_float" || attr.name() == "value_int") {
        CountConstant(state, attr.name() == "value_float" ? TensorProto::FLOAT : TensorProto::INT64,
                      1);
      } else if (attr.name() == "value_floats") {
        CountConstant(state, TensorProto::FLOAT, attr.floats_size());
      } else if (attr.name() == "value_ints") {
        CountConstant(state, TensorProto::INT64, attr.ints_size());
      }
    }
  }
}

void CheckModel(ImportState& state) {
  try {
    onnx::checker::check_model(state.model_);
  } catch (const std::exception& error) {
    state.Fail(fmt::format("not a valid ONNX model: {}", OneLine(error.what())));
  }
  if (state.graph().output_size() == 0) state.Fail("the model has no outputs");
}

void CheckSizeAttributes(const ImportState& state) {
  for (int32_t i = 0; i < state.graph().node_size(); ++i) {
    const onnx::NodeProto& node = state.graph().node(i);
    if (!IsStandardDomain(node.domain())) continue;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      const std::string& name = attr.name();
      const bool positive_list = name == "strides" || name == "dilations" || name == "kernel_shape";
      const bool positive_int = name == "group" || name == "blocksize";
      auto fail = [&](int64_t value) {
        state.Fail(fmt::format("node '{}' ({}) has {} = {}; it must be positive", state.NodeName(i),
                               state.OpType(node), name, value));
      };
      if (positive_list) {
        for (const int64_t v : attr.ints()) {
          if (v <= 0) fail(v);
        }
      } else if (positive_int && attr.i() <= 0) {
        fail(attr.i());
      }
    }
  }
}

void FixBatch(ImportState& state) {
  onnx::GraphProto& g = *state.model_.mutable_graph();
  std::optional<std::string> batch_symbol;  // the symbolic batch's name ("" when unnamed)
  bool found = false;
  for (onnx::ValueInfoProto& input : *g.mutable_input()) {
    if (state.parameter_names_.count(input.name()) != 0) continue;
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) {
      state.Fail(fmt::format("input '{}' is not a tensor of known rank", input.name()));
    }
    onnx::TensorShapeProto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    bool is_data = false;
    if (!found && shape->dim_size() > 0) {
      found = true;
      is_data = true;
      const onnx::TensorShapeProto_Dimension& dim = shape->dim(0);
      if (dim.has_dim_value()) {
        if (dim.dim_value() <= 0) {
          state.Fail(
              fmt::format("input '{}' has batch dimension {}", input.name(), dim.dim_value()));
        }
        state.result_.exported_batch = dim.dim_value();
      } else {
        batch_symbol = dim.dim_param();
        if (!state.options_.batch) {
          state.Fail(
              fmt::format("the batch dimension of input '{}' is symbolic ('{}'); give the "
                          "batch size with --batch N",
                          input.name(), dim.dim_param()));
        }
      }
    } else if (found && shape->dim_size() > 0) {
      const onnx::TensorShapeProto_Dimension& dim = shape->dim(0);
      is_data = batch_symbol
                    ? !dim.has_dim_value() && dim.dim_param() == *batch_symbol
                    : dim.has_dim_value() && dim.dim_value() == state.result_.exported_batch;
    }
    Shape dims;
    for (int k = 0; k < shape->dim_size(); ++k) {
      onnx::TensorShapeProto_Dimension* dim = shape->mutable_dim(k);
      if (is_data && k == 0 && batch_symbol) dim->set_dim_value(*state.options_.batch);
      if (!dim->has_dim_value()) {
        state.Fail(
            fmt::format("input '{}' dimension {} is symbolic ('{}'); remat needs fixed "
                        "sizes (only the batch, dimension 0 of the first input, may be "
                        "symbolic)",
                        input.name(), k, dim->dim_param()));
      }
      if (dim->dim_value() < 0) {
        state.Fail(fmt::format("input '{}' dimension {} is negative", input.name(), k));
      }
      dims.push_back(dim->dim_value());
    }
    if (is_data) {
      state.data_inputs_.push_back(input.name());
    } else {
      AddParameter(state, input.name(), input.type().tensor_type().elem_type(), dims,
                   "input without batch dimension");
    }
  }
  if (!found) state.Fail("the model has no input with a batch dimension (an input of rank >= 1)");
  if (batch_symbol && !batch_symbol->empty()) {
    // Declared outputs and intermediate types name the batch too (dynamic_axes does that).
    for (auto* list : {g.mutable_output(), g.mutable_value_info()}) {
      for (onnx::ValueInfoProto& value : *list) {
        if (!value.type().has_tensor_type()) continue;
        auto* shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
        for (onnx::TensorShapeProto_Dimension& dim : *shape->mutable_dim()) {
          if (dim.has_dim_param() && dim.dim_param() == *batch_symbol) {
            dim.set_dim_value(*state.options_.batch);
          }
        }
      }
    }
  }
  if (state.result_.exported_batch) {
    state.reference_batch_ = *state.result_.exported_batch;
    state.result_.batch = state.options_.batch.value_or(state.reference_batch_);
  } else {
    state.reference_batch_ = *state.options_.batch;
    state.result_.batch = *state.options_.batch;
  }
}

}  // namespace remat::onnx_import
