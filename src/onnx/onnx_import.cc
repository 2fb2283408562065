// ONNX import: protobuf parsing, onnx::checker, onnx::shape_inference with the folding of shape
// computations, and the conversion of the checked graph into a forward graph (docs/onnx.md).
#include "onnx/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/errors.h"
#include "core/file_io.h"
#include "onnx/operator_costs.h"
#include "onnx/shape_folding.h"

namespace remat {
namespace {

using onnx::TensorProto;

// Initializers up to this many elements keep their values: shape computations (Reshape's
// shape, Slice's starts, Resize's scales) read them. Larger ones become typed inputs.
constexpr int64_t kKeptInitializerElements = 64;

std::optional<int64_t> ElementBytes(int32_t data_type) {
  switch (data_type) {
    case TensorProto::BOOL:
    case TensorProto::INT8:
    case TensorProto::UINT8:
      return 1;
    case TensorProto::INT16:
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return 2;
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::DOUBLE:
    case TensorProto::INT64:
    case TensorProto::UINT64:
    case TensorProto::COMPLEX64:
      return 8;
    case TensorProto::COMPLEX128:
      return 16;
    default:
      return std::nullopt;  // UNDEFINED, STRING, or an unknown code
  }
}

bool IsFloating(int32_t data_type) {
  return data_type == TensorProto::FLOAT || data_type == TensorProto::DOUBLE ||
         data_type == TensorProto::FLOAT16 || data_type == TensorProto::BFLOAT16;
}

bool IsStandardDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// Operators whose vector-Jacobian product with respect to one input reads the other inputs:
// products and quotients. Elementwise sums and data movement do not.
bool IsProductOfInputs(const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  return IsStandardDomain(node.domain()) &&
         (op == "MatMul" || op == "Gemm" || op == "Mul" || op == "Div" || op == "Einsum");
}

// a * b, or nullopt on int64 overflow.
std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

template <typename Dims>
std::optional<int64_t> CheckedElements(const Dims& dims) {
  int64_t n = 1;
  for (const int64_t d : dims) {
    if (d < 0) return std::nullopt;
    const std::optional<int64_t> next = CheckedMul(n, d);
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

// How a tensor's value arises.
enum class Origin {
  kStatic,      // initializers, constants and whatever is computed from them and from shapes
  kData,        // a graph input without an initializer: part of the input batch
  kActivation,  // computed by a node from data: an output of a forward node
};

struct TensorInfo {
  Origin origin = Origin::kStatic;
  int32_t producer = -1;  // the ONNX node (index in the graph) of an activation
};

enum class NodeRole { kFolded, kAlias, kActivation };

std::string OneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  std::string compact;
  for (char c : text) {
    if (c == ' ' && !compact.empty() && compact.back() == ' ') continue;
    compact.push_back(c);
  }
  return compact;
}

class Importer {
 public:
  Importer(std::string source, const OnnxImportOptions& options)
      : source_(std::move(source)), options_(options) {}

  ImportedOnnxModel Run(std::string_view bytes) {
    if (options_.batch && *options_.batch <= 0) {
      Fail(fmt::format("the batch must be positive, not {}", *options_.batch));
    }
    if (options_.cost_model == CostModel::kRoofline && !options_.device) {
      Fail("the roofline cost model needs a device (--device)");
    }
    Parse(bytes);
    CollectParameters();
    Check();
    CheckSizeAttributes();
    FixBatch();
    Classify();
    SelectForwardNodes();
    CheckOperators();
    InferShapes();
    return Convert();
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw InputError(fmt::format("{}: {}", source_, what));
  }

  const onnx::GraphProto& graph() const { return model_.graph(); }

  std::string NodeName(int32_t index) const {
    const onnx::NodeProto& node = graph().node(index);
    if (!node.name().empty()) return node.name();
    if (node.output_size() > 0 && !node.output(0).empty()) return node.output(0);
    return fmt::format("#{}", index);
  }

  std::string OpType(const onnx::NodeProto& node) const {
    return IsStandardDomain(node.domain()) ? node.op_type()
                                           : node.domain() + "." + node.op_type();
  }

  // --- reading -------------------------------------------------------------------------

  void Parse(std::string_view bytes) {
    if (bytes.empty()) Fail("the file is empty, not an ONNX model");
    if (bytes.size() > static_cast<size_t>(INT_MAX)) {
      Fail("the file is larger than protobuf's 2 GiB limit; store the weights as external data");
    }
    if (!model_.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      Fail("not an ONNX model: the file does not parse as an ONNX ModelProto (truncated, "
           "corrupt or another format)");
    }
    if (!model_.has_ir_version() || !model_.has_graph()) {
      Fail(fmt::format("not an ONNX model: it has no {}",
                       model_.has_ir_version() ? "graph" : "IR version"));
    }
    for (const onnx::OperatorSetIdProto& opset : model_.opset_import()) {
      if (IsStandardDomain(opset.domain())) opset_ = opset.version();
    }
  }

  // Records every initializer and constant as a parameter, and replaces initializers whose
  // values remat does not need by typed graph inputs: the checker and shape inference then
  // see only names, types and shapes, so stripped or external weights import the same way.
  void CollectParameters() {
    onnx::GraphProto& g = *model_.mutable_graph();
    for (const onnx::NodeProto& node : g.node()) {
      if (node.op_type() != "BatchNormalization" || !IsStandardDomain(node.domain())) continue;
      for (int k = 3; k < std::min(node.input_size(), 5); ++k) {
        batch_norm_statistics_.insert(node.input(k));
      }
    }
    std::map<std::string, onnx::ValueInfoProto*> inputs;
    for (onnx::ValueInfoProto& input : *g.mutable_input()) inputs.emplace(input.name(), &input);

    auto add_parameter = [&](const std::string& name, int32_t data_type, const auto& dims,
                             const char* what) {
      return AddParameter(name, data_type, std::vector<int64_t>(dims.begin(), dims.end()), what);
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
      const int64_t elements = add_parameter(tensor.name(), tensor.data_type(), tensor.dims(),
                                             "initializer");
      const bool external = tensor.data_location() == TensorProto::EXTERNAL;
      if (!external && elements <= kKeptInitializerElements) {
        small_constants_.emplace(tensor.name(), tensor);
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
          if (node.output_size() > 0) small_constants_.emplace(node.output(0), t);
          CountConstant(t.data_type(), CheckedElements(t.dims()));
        } else if (attr.name() == "sparse_value" && attr.has_sparse_tensor()) {
          CountConstant(attr.sparse_tensor().values().data_type(),
                        CheckedElements(attr.sparse_tensor().dims()));
        } else if (attr.name() == "value_float" || attr.name() == "value_int") {
          CountConstant(attr.name() == "value_float" ? TensorProto::FLOAT : TensorProto::INT64, 1);
        } else if (attr.name() == "value_floats") {
          CountConstant(TensorProto::FLOAT, attr.floats_size());
        } else if (attr.name() == "value_ints") {
          CountConstant(TensorProto::INT64, attr.ints_size());
        }
      }
    }
  }

  // Counts a named weight; returns its element count. Floating-point weights other than
  // batch-norm running statistics are trainable.
  int64_t AddParameter(const std::string& name, int32_t data_type, const Shape& dims,
                       const char* what) {
    if (name.empty()) Fail(fmt::format("an {} has no name", what));
    if (!parameter_names_.insert(name).second) {
      Fail(fmt::format("{} '{}' is defined twice", what, name));
    }
    const std::optional<int64_t> elements = CheckedElements(dims);
    const std::optional<int64_t> element_bytes = ElementBytes(data_type);
    if (!elements) Fail(fmt::format("{} '{}' has an invalid or too large shape", what, name));
    if (!element_bytes) {
      Fail(fmt::format("{} '{}' has an unsupported element type ({})", what, name, data_type));
    }
    const std::optional<int64_t> bytes = CheckedMul(*elements, *element_bytes);
    if (!bytes) Fail(fmt::format("{} '{}' is too large", what, name));
    result_.parameters += *elements;
    result_.parameter_bytes += *bytes;
    if (IsFloating(data_type) && batch_norm_statistics_.count(name) == 0) {
      result_.trainable_parameters += *elements;
      result_.trainable_parameter_bytes += *bytes;
    }
    return *elements;
  }

  // A Constant node's value: a parameter that is never trained.
  void CountConstant(int32_t data_type, std::optional<int64_t> elements) {
    const std::optional<int64_t> element_bytes = ElementBytes(data_type);
    if (!elements || !element_bytes) return;  // strings and malformed values: the checker speaks
    const std::optional<int64_t> bytes = CheckedMul(*elements, *element_bytes);
    if (!bytes) return;
    result_.parameters += *elements;
    result_.parameter_bytes += *bytes;
  }

  void Check() {
    try {
      onnx::checker::check_model(model_);
    } catch (const std::exception& error) {
      Fail(fmt::format("not a valid ONNX model: {}", OneLine(error.what())));
    }
    if (graph().output_size() == 0) Fail("the model has no outputs");
  }

  // ONNX 1.12's checker accepts a zero stride, dilation, group or block size, and its shape
  // inference then divides by it (found by fuzzing: SIGFPE in convPoolShapeInference). Such
  // nodes are rejected here, before inference runs.
  void CheckSizeAttributes() const {
    for (int32_t i = 0; i < graph().node_size(); ++i) {
      const onnx::NodeProto& node = graph().node(i);
      if (!IsStandardDomain(node.domain())) continue;
      for (const onnx::AttributeProto& attr : node.attribute()) {
        const std::string& name = attr.name();
        const bool positive_list =
            name == "strides" || name == "dilations" || name == "kernel_shape";
        const bool positive_int = name == "group" || name == "blocksize";
        auto fail = [&](int64_t value) {
          Fail(fmt::format("node '{}' ({}) has {} = {}; it must be positive", NodeName(i),
                           OpType(node), name, value));
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

  // --- the batch -------------------------------------------------------------------------

  // The batch is the first dimension of the first graph input without an initializer. Other
  // such inputs are data when their first dimension is the batch too (the same value, or the
  // same symbol), and parameters otherwise: export_params=False lists the weights as inputs.
  // A symbolic batch is set to the requested one before shape inference; a fixed one stays
  // and sizes are rescaled later.
  void FixBatch() {
    onnx::GraphProto& g = *model_.mutable_graph();
    std::optional<std::string> batch_symbol;  // the symbolic batch's name ("" when unnamed)
    bool found = false;
    for (onnx::ValueInfoProto& input : *g.mutable_input()) {
      if (parameter_names_.count(input.name()) != 0) continue;
      if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) {
        Fail(fmt::format("input '{}' is not a tensor of known rank", input.name()));
      }
      onnx::TensorShapeProto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
      bool is_data = false;
      if (!found && shape->dim_size() > 0) {
        found = true;
        is_data = true;
        const onnx::TensorShapeProto_Dimension& dim = shape->dim(0);
        if (dim.has_dim_value()) {
          if (dim.dim_value() <= 0) {
            Fail(fmt::format("input '{}' has batch dimension {}", input.name(), dim.dim_value()));
          }
          result_.exported_batch = dim.dim_value();
        } else {
          batch_symbol = dim.dim_param();
          if (!options_.batch) {
            Fail(fmt::format("the batch dimension of input '{}' is symbolic ('{}'); give the "
                             "batch size with --batch N",
                             input.name(), dim.dim_param()));
          }
        }
      } else if (found && shape->dim_size() > 0) {
        const onnx::TensorShapeProto_Dimension& dim = shape->dim(0);
        is_data = batch_symbol ? !dim.has_dim_value() && dim.dim_param() == *batch_symbol
                               : dim.has_dim_value() && dim.dim_value() == result_.exported_batch;
      }
      Shape dims;
      for (int k = 0; k < shape->dim_size(); ++k) {
        onnx::TensorShapeProto_Dimension* dim = shape->mutable_dim(k);
        if (is_data && k == 0 && batch_symbol) dim->set_dim_value(*options_.batch);
        if (!dim->has_dim_value()) {
          Fail(fmt::format("input '{}' dimension {} is symbolic ('{}'); remat needs fixed "
                           "sizes (only the batch, dimension 0 of the first input, may be "
                           "symbolic)",
                           input.name(), k, dim->dim_param()));
        }
        if (dim->dim_value() < 0) {
          Fail(fmt::format("input '{}' dimension {} is negative", input.name(), k));
        }
        dims.push_back(dim->dim_value());
      }
      if (is_data) {
        data_inputs_.push_back(input.name());
      } else {
        AddParameter(input.name(), input.type().tensor_type().elem_type(), dims,
                     "input without batch dimension");
      }
    }
    if (!found) Fail("the model has no input with a batch dimension (an input of rank >= 1)");
    if (batch_symbol && !batch_symbol->empty()) {
      // Declared outputs and intermediate types name the batch too (dynamic_axes does that).
      for (auto* list : {g.mutable_output(), g.mutable_value_info()}) {
        for (onnx::ValueInfoProto& value : *list) {
          if (!value.type().has_tensor_type()) continue;
          auto* shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
          for (onnx::TensorShapeProto_Dimension& dim : *shape->mutable_dim()) {
            if (dim.has_dim_param() && dim.dim_param() == *batch_symbol) {
              dim.set_dim_value(*options_.batch);
            }
          }
        }
      }
    }
    if (result_.exported_batch) {
      reference_batch_ = *result_.exported_batch;
      result_.batch = options_.batch.value_or(reference_batch_);
    } else {
      reference_batch_ = *options_.batch;
      result_.batch = *options_.batch;
    }
  }

  // Bytes measured at the reference batch, at the requested batch (rounded up when a tensor
  // does not carry the batch evenly).
  int64_t ScaleBytes(int64_t bytes) const {
    if (result_.batch == reference_batch_) return bytes;
    const std::optional<int64_t> product = CheckedMul(bytes, result_.batch);
    if (!product || *product > std::numeric_limits<int64_t>::max() - reference_batch_) {
      Fail(fmt::format("a tensor is too large at batch {}", result_.batch));
    }
    return (*product + reference_batch_ - 1) / reference_batch_;
  }
  double ScaleFlops(double flops) const {
    return flops * static_cast<double>(result_.batch) / static_cast<double>(reference_batch_);
  }

  // --- what each node is -----------------------------------------------------------------

  // A Dropout is a copy, not an operation, in eval form: without training_mode (opset >= 12)
  // or with a constant false one; opsets 7..11 define it for inference only; older opsets
  // train unless is_test is set.
  bool IsEvalDropout(const onnx::NodeProto& node) const {
    if (opset_ < 7) {
      for (const onnx::AttributeProto& attr : node.attribute()) {
        if (attr.name() == "is_test") return attr.i() != 0;
      }
      return false;
    }
    if (opset_ < 12) return true;
    if (node.input_size() < 3 || node.input(2).empty()) return true;
    const auto it = small_constants_.find(node.input(2));
    if (it == small_constants_.end()) return false;  // decided at run time: assume training
    const TensorProto& t = it->second;
    if (t.data_type() != TensorProto::BOOL) return false;
    if (!t.raw_data().empty()) return t.raw_data()[0] == 0;
    if (t.int32_data_size() > 0) return t.int32_data(0) == 0;
    return false;
  }

  static bool HasSubgraph(const onnx::NodeProto& node) {
    return std::any_of(node.attribute().begin(), node.attribute().end(), [](const auto& attr) {
      return attr.has_g() || attr.graphs_size() > 0;
    });
  }

  void Classify() {
    const onnx::GraphProto& g = graph();
    for (const std::string& name : parameter_names_) tensors_[name] = {Origin::kStatic, -1};
    for (const std::string& name : data_inputs_) tensors_[name] = {Origin::kData, -1};
    roles_.assign(g.node_size(), NodeRole::kFolded);
    for (int32_t i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& node = g.node(i);
      bool reads_data = false;
      for (const std::string& input : node.input()) {
        if (input.empty()) continue;  // a missing optional input
        const auto it = tensors_.find(input);
        if (it == tensors_.end()) {
          Fail(fmt::format("node '{}' ({}) reads '{}', which nothing defines", NodeName(i),
                           OpType(node), input));
        }
        reads_data = reads_data || it->second.origin != Origin::kStatic;
      }
      const bool standard = IsStandardDomain(node.domain());
      const std::string& op = node.op_type();
      NodeRole role = NodeRole::kActivation;
      if (standard && (op == "Constant" || op == "Shape" || op == "Size")) {
        role = NodeRole::kFolded;  // values or sizes, never activations
      } else if (!reads_data && !HasSubgraph(node)) {
        role = NodeRole::kFolded;  // computed from constants and shapes only
      } else if (standard && node.input_size() > 0 && !node.input(0).empty() &&
                 (op == "Identity" || (op == "Dropout" && IsEvalDropout(node)))) {
        role = NodeRole::kAlias;
      }
      roles_[i] = role;
      for (int k = 0; k < node.output_size(); ++k) {
        const std::string& output = node.output(k);
        if (output.empty()) continue;
        TensorInfo info{Origin::kStatic, -1};
        if (role == NodeRole::kActivation) info = {Origin::kActivation, i};
        if (role == NodeRole::kAlias && k == 0) info = tensors_.at(node.input(0));
        tensors_[output] = info;
      }
    }
  }

  // The forward nodes: the activation nodes the first graph output depends on, in the file's
  // (topological) order, so the node producing the output is the last one.
  void SelectForwardNodes() {
    const onnx::GraphProto& g = graph();
    const std::string& output = g.output(0).name();
    const auto it = tensors_.find(output);
    if (it == tensors_.end()) Fail(fmt::format("output '{}' is not produced by any node", output));
    if (it->second.origin != Origin::kActivation) {
      Fail(fmt::format("output '{}' is {}, not computed from the input data", output,
                       it->second.origin == Origin::kData ? "an input" : "a constant"));
    }
    std::vector<bool> kept(g.node_size(), false);
    std::vector<int32_t> stack = {it->second.producer};
    kept[it->second.producer] = true;
    while (!stack.empty()) {
      const int32_t i = stack.back();
      stack.pop_back();
      for (const std::string& input : g.node(i).input()) {
        if (input.empty()) continue;
        const TensorInfo& info = tensors_.at(input);
        if (info.origin == Origin::kActivation && !kept[info.producer]) {
          kept[info.producer] = true;
          stack.push_back(info.producer);
        }
      }
    }
    forward_id_.assign(g.node_size(), -1);
    for (int32_t i = 0; i < g.node_size(); ++i) {
      switch (roles_[i]) {
        case NodeRole::kFolded:
          ++result_.folded_nodes;
          break;
        case NodeRole::kAlias:
          ++result_.alias_nodes;
          break;
        case NodeRole::kActivation:
          if (kept[i]) {
            forward_id_[i] = static_cast<int32_t>(forward_nodes_.size());
            forward_nodes_.push_back(i);
          } else {
            ++result_.unused_nodes;
          }
          break;
      }
    }
    result_.onnx_nodes = g.node_size();
  }

  void CheckOperators() {
    for (const int32_t i : forward_nodes_) {
      const onnx::NodeProto& node = graph().node(i);
      if (FindOpCostRule(node.op_type(), node.domain())) continue;
      if (options_.unknown_ops == UnknownOps::kError) {
        Fail(fmt::format("unsupported ONNX operator '{}' (node '{}'); docs/onnx.md lists the "
                         "supported ones, and --unknown-ops=zero-cost costs unknown ones 0",
                         OpType(node), NodeName(i)));
      }
      result_.zero_cost_nodes.push_back(fmt::format("{} ({})", OpType(node), NodeName(i)));
    }
  }

  // --- shapes ------------------------------------------------------------------------------

  // Shapes, node by node in the file's (topological) order, so that every node is looked at
  // with its inputs' types known:
  // - a folded node whose value remat can compute (onnx_folding: the shape arithmetic of
  //   exports) gets that value and its type; ONNX 1.12's data propagation stops at the Div and
  //   Cast of PyTorch's x.view(b, s, h // heads, ...) and reads out of bounds on a bad Gather
  //   index (found by fuzzing), so remat does not use it;
  // - every other node is checked (CheckWindowedOp) and given to onnx::shape_inference alone,
  //   with its inputs' types and the known values of its inputs as initializers (a Reshape's
  //   target, a Resize's scales);
  // - an unknown operator costed 0 whose output ONNX cannot size takes the type of its first
  //   sized activation input.
  void InferShapes() {
    const onnx::GraphProto& g = graph();
    for (const TensorProto& tensor : g.initializer()) {
      onnx::TypeProto_Tensor* type = types_[tensor.name()].mutable_tensor_type();
      type->set_elem_type(tensor.data_type());
      onnx::TensorShapeProto* shape = type->mutable_shape();  // present for scalars too
      for (const int64_t d : tensor.dims()) shape->add_dim()->set_dim_value(d);
      if (std::optional<onnx_folding::StaticValue> v = onnx_folding::ValueOfTensor(tensor)) {
        values_.emplace(tensor.name(), std::move(*v));
      }
    }
    // Declared types: inputs (the batch fixed), and value_info and outputs, which inference
    // merges with what it finds at their producers.
    for (const auto* list : {&g.input(), &g.value_info(), &g.output()}) {
      for (const onnx::ValueInfoProto& value : *list) {
        if (value.type().has_tensor_type()) types_.emplace(value.name(), value.type());
      }
    }
    std::unordered_map<std::string, int> opsets;
    for (const onnx::OperatorSetIdProto& opset : model_.opset_import()) {
      opsets[opset.domain()] = static_cast<int>(opset.version());
    }
    const onnx_folding::ValueLookup value_of = [this](const std::string& name) {
      const auto it = values_.find(name);
      return it == values_.end() ? nullptr : &it->second;
    };
    const onnx_folding::ShapeLookup shape_of = [this](const std::string& name) {
      return KnownShape(name);
    };
    for (int32_t i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& node = g.node(i);
      if (roles_[i] == NodeRole::kFolded && node.output_size() == 1) {
        if (std::optional<onnx_folding::StaticValue> value =
                onnx_folding::EvaluateNode(node, opset_, value_of, shape_of)) {
          onnx::TypeProto_Tensor* type = types_[node.output(0)].mutable_tensor_type();
          type->Clear();
          type->set_elem_type(value->data_type);
          onnx::TensorShapeProto* shape = type->mutable_shape();
          for (const int64_t d : value->dims) shape->add_dim()->set_dim_value(d);
          values_.insert_or_assign(node.output(0), std::move(*value));
          continue;
        }
      }
      // Control flow reads outer-scope names its node does not list: not inferred (it is an
      // unsupported operator anyway, or costed 0 with an assumed shape below).
      if (!HasSubgraph(node)) {
        CheckWindowedOp(i);
        InferNode(i, opsets);
      }
      const bool zero_cost_unknown = roles_[i] == NodeRole::kActivation &&
                                     forward_id_[i] >= 0 &&
                                     !FindOpCostRule(node.op_type(), node.domain());
      if (zero_cost_unknown && node.output_size() > 0 && !KnownShape(node.output(0))) {
        AssumeOutputTypes(node);
      }
    }
  }

  // onnx::shape_inference on a graph of this one node; its outputs' types go to types_.
  void InferNode(int32_t index, const std::unordered_map<std::string, int>& opsets) {
    const onnx::NodeProto& node = graph().node(index);
    onnx::GraphProto single;
    *single.add_node() = node;
    std::set<std::string> declared;
    for (const std::string& input : node.input()) {
      if (input.empty() || !declared.insert(input).second) continue;
      const auto type = types_.find(input);
      if (type != types_.end()) {
        onnx::ValueInfoProto* value = single.add_input();
        value->set_name(input);
        *value->mutable_type() = type->second;
      }
      if (const auto value = values_.find(input); value != values_.end()) {
        TensorProto tensor = onnx_folding::ToTensorProto(value->second);
        tensor.set_name(input);
        *single.add_initializer() = std::move(tensor);
      }
    }
    for (const std::string& output : node.output()) {
      const auto type = types_.find(output);  // declared in the file
      if (output.empty() || type == types_.end()) continue;
      onnx::ValueInfoProto* value = single.add_value_info();
      value->set_name(output);
      *value->mutable_type() = type->second;
    }
    try {
      // Strict (errors are thrown) and type-checked; ONNX's data propagation stays off.
      const onnx::ShapeInferenceOptions options(/*check_type_val=*/true, /*strict_mode_val=*/1,
                                                /*data_prop_val=*/false);
      onnx::shape_inference::InferShapes(&single, opsets, onnx::OpSchemaRegistry::Instance(),
                                         options);
    } catch (const std::exception& error) {
      Fail(fmt::format("shape inference failed at node '{}' ({}): {}", NodeName(index),
                       OpType(node), OneLine(error.what())));
    }
    for (const onnx::ValueInfoProto& value : single.value_info()) {
      types_.insert_or_assign(value.name(), value.type());
    }
  }

  // For an unknown operator costed 0: its outputs are assumed to be like its first sized
  // activation input. Without one they stay unknown and are reported when sized.
  void AssumeOutputTypes(const onnx::NodeProto& node) {
    for (const std::string& input : node.input()) {
      if (input.empty() || tensors_.at(input).origin == Origin::kStatic || !KnownShape(input)) {
        continue;
      }
      const onnx::TypeProto like = types_.at(input);
      for (const std::string& output : node.output()) {
        if (!output.empty()) types_.insert_or_assign(output, like);
      }
      return;
    }
  }

  // ONNX 1.12's convolution and pooling shape inference index dimensions by the weight's rank
  // and the attribute lists without checking them: the fuzzer found a null dereference in
  // convTransposeShapeInference on a rank-0 weight, and a rank-5 weight on a rank-4 input
  // crashes Conv's. A node's input ranks are known when it is reached, so they are checked here
  // first.
  void CheckWindowedOp(int32_t index) const {
    static const std::set<std::string> kWindowed = {"Conv", "ConvTranspose", "MaxPool",
                                                    "AveragePool", "LpPool"};
    const onnx::NodeProto& node = graph().node(index);
    if (!IsStandardDomain(node.domain()) || kWindowed.count(node.op_type()) == 0) return;
    const std::optional<int> rank =
        node.input_size() > 0 ? KnownRank(node.input(0)) : std::nullopt;
    if (!rank) return;  // ONNX infers nothing without it
    if (*rank < 3) {
      Fail(fmt::format("node '{}' ({}) reads a tensor of rank {}; it needs batch, channels and "
                       "at least one spatial dimension",
                       NodeName(index), OpType(node), *rank));
    }
    const bool convolution = node.op_type() == "Conv" || node.op_type() == "ConvTranspose";
    if (convolution && node.input_size() > 1) {
      const std::optional<int> weight_rank = KnownRank(node.input(1));
      if (weight_rank && *weight_rank != *rank) {
        Fail(fmt::format("node '{}' ({}) has a weight '{}' of rank {} for an input of rank {}",
                         NodeName(index), OpType(node), node.input(1), *weight_rank, *rank));
      }
    }
    const int spatial = *rank - 2;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      const std::string& name = attr.name();
      const bool per_axis = name == "strides" || name == "dilations" || name == "kernel_shape" ||
                            name == "output_padding";
      const int expected = per_axis ? spatial : name == "pads" ? 2 * spatial : -1;
      if (expected >= 0 && attr.ints_size() != expected) {
        Fail(fmt::format("node '{}' ({}) has {} values of {} for {} spatial dimensions",
                         NodeName(index), OpType(node), attr.ints_size(), name, spatial));
      }
    }
  }

  std::optional<int> KnownRank(const std::string& name) const {
    const auto it = types_.find(name);
    if (it == types_.end() || !it->second.has_tensor_type() ||
        !it->second.tensor_type().has_shape()) {
      return std::nullopt;
    }
    return it->second.tensor_type().shape().dim_size();
  }

  // The fully known shape of a tensor, or nullopt.
  std::optional<Shape> KnownShape(const std::string& name) const {
    const auto it = types_.find(name);
    if (it == types_.end() || !it->second.has_tensor_type()) return std::nullopt;
    const onnx::TypeProto_Tensor& type = it->second.tensor_type();
    if (!type.has_shape()) return std::nullopt;
    Shape shape;
    for (const onnx::TensorShapeProto_Dimension& dim : type.shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0) return std::nullopt;
      shape.push_back(dim.dim_value());
    }
    return shape;
  }

  // Bytes of a tensor at the reference batch, or an InputError naming it and its node.
  int64_t TensorBytes(const std::string& name, int32_t node_index) const {
    const std::optional<Shape> shape = KnownShape(name);
    const auto it = types_.find(name);
    if (!shape || it == types_.end()) {
      Fail(fmt::format("cannot size tensor '{}' (output of node '{}', {}): shape inference left "
                       "its shape unknown",
                       name, NodeName(node_index), OpType(graph().node(node_index))));
    }
    const std::optional<int64_t> element_bytes =
        ElementBytes(it->second.tensor_type().elem_type());
    if (!element_bytes) {
      Fail(fmt::format("tensor '{}' (node '{}') has an unsupported element type", name,
                       NodeName(node_index)));
    }
    const std::optional<int64_t> elements = CheckedElements(*shape);
    const std::optional<int64_t> bytes =
        elements ? CheckedMul(*elements, *element_bytes) : std::nullopt;
    if (!bytes) Fail(fmt::format("tensor '{}' is too large", name));
    return *bytes;
  }

  // --- the forward graph -------------------------------------------------------------------

  // What a forward node's backward reads and computes (docs/onnx.md, "Backward costs").
  struct BackwardInputs {
    std::optional<OpCostRule> rule;  // none: an unknown operator costed 0
    double flops = 0;
    int64_t output_bytes = 0;
    int64_t weight_bytes = 0;                                // static operands read
    std::vector<std::pair<int32_t, int64_t>> activations;  // (forward id, bytes) per input
  };

  // DESIGN §1: bwd(j) runs the input gradient of every consumer of j for each input that reads
  // j, and the weight gradients of the consumers whose first activation input is j (of a node
  // without activation inputs, its own backward node: nothing differentiates the data); the
  // last node's backward also runs the loss gradient.
  void AttributeBackwardCosts(const std::vector<BackwardInputs>& nodes) {
    ForwardGraph& forward = result_.forward;
    const DeviceSpec* device = options_.device ? &*options_.device : nullptr;
    std::vector<double> cost(nodes.size(), 0.0);
    // Workspace (docs/onnx.md): a gradient contribution after the first is a temporary of the
    // value's size; a weight gradient is a fresh tensor of the weights' size.
    std::vector<int32_t> contributions(nodes.size(), 0);
    std::vector<int64_t> weight_gradient(nodes.size(), 0);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const BackwardInputs& node = nodes[i];
      if (!node.rule) continue;
      for (size_t k = 0; k < node.activations.size(); ++k) {
        const auto [source, bytes] = node.activations[k];
        int64_t other = node.weight_bytes;
        if (*node.rule == OpCostRule::kMatMul && node.activations.size() == 2) {
          other = node.activations[1 - k].second;  // a product of two activations
        }
        cost[source] += KernelCost(
            options_.cost_model,
            OpInputGradientWork(*node.rule, node.flops, node.output_bytes, bytes, other), device);
        ++contributions[source];
      }
      const int64_t input = node.activations.empty() ? 0 : node.activations[0].second;
      if (const std::optional<KernelWork> weights = OpWeightGradientWork(
              *node.rule, node.flops, node.output_bytes, input, node.weight_bytes)) {
        const size_t owner = node.activations.empty() ? i : node.activations[0].first;
        cost[owner] += KernelCost(options_.cost_model, *weights, device);
        weight_gradient[owner] = std::max(weight_gradient[owner], node.weight_bytes);
      }
    }
    if (options_.workspace != WorkspaceModel::kNone) {
      for (size_t j = 0; j < nodes.size(); ++j) {
        forward.nodes[j].backward_workspace_bytes =
            (contributions[j] > 1 ? forward.nodes[j].bytes : 0) + weight_gradient[j];
      }
    }
    if (!nodes.empty()) {
      cost.back() += KernelCost(options_.cost_model,
                                LossGradientWork(nodes.back().output_bytes), device);
    }
    for (size_t i = 0; i < nodes.size(); ++i) forward.nodes[i].backward_cost = cost[i];
  }

  ImportedOnnxModel Convert() {
    const onnx::GraphProto& g = graph();
    // Which activations later forward nodes (or the output) read: a node's bytes are those of
    // its outputs that are read, and always its first (Dropout masks and batch-norm running
    // statistics nobody reads cost no memory).
    std::set<std::string> read;
    read.insert(g.output(0).name());
    for (const int32_t i : forward_nodes_) {
      for (const std::string& input : g.node(i).input()) {
        if (!input.empty()) read.insert(input);
      }
    }
    std::vector<BackwardInputs> backward_inputs;
    ForwardGraph& forward = result_.forward;
    forward.name = fmt::format("{} (onnx, batch {})",
                               std::filesystem::path(source_).stem().string(), result_.batch);
    forward.cost_unit = CostUnit(options_.cost_model);
    for (const int32_t i : forward_nodes_) {
      const onnx::NodeProto& node = g.node(i);
      int64_t output_bytes = 0;
      for (int k = 0; k < node.output_size(); ++k) {
        const std::string& output = node.output(k);
        if (output.empty() || (k > 0 && read.count(output) == 0)) continue;
        output_bytes += TensorBytes(output, i);
      }
      int64_t static_input_bytes = 0;  // weights read, for the roofline
      int64_t input_bytes = 0;         // activations and data read
      OpShapes shapes;
      for (const std::string& input : node.input()) {
        shapes.inputs.push_back(input.empty() ? std::nullopt : KnownShape(input));
        if (input.empty() || !shapes.inputs.back()) continue;
        const int64_t bytes = TensorBytes(input, i);
        (tensors_.at(input).origin == Origin::kStatic ? static_input_bytes : input_bytes) += bytes;
      }
      double flops = 0;
      const std::optional<OpCostRule> rule = FindOpCostRule(node.op_type(), node.domain());
      if (rule) {
        const std::optional<Shape> output = node.output_size() > 0 && !node.output(0).empty()
                                                ? KnownShape(node.output(0))
                                                : std::nullopt;
        if (!output) {
          Fail(fmt::format("node '{}' ({}) has no first output", NodeName(i), OpType(node)));
        }
        shapes.output = *output;
        for (const onnx::AttributeProto& attr : node.attribute()) {
          if (attr.name() == "transA") shapes.trans_a = attr.i() != 0;
        }
        const std::optional<double> f = OpForwardFlops(*rule, shapes);
        if (!f) {
          Fail(fmt::format("cannot count the FLOPs of node '{}' ({}): an input's shape is "
                           "unknown or of an unexpected rank",
                           NodeName(i), OpType(node)));
        }
        flops = ScaleFlops(*f);
      }
      const int64_t bytes = ScaleBytes(output_bytes);
      const KernelWork work{.flops = flops,
                            .bytes_moved = bytes + ScaleBytes(input_bytes) + static_input_bytes};
      // An unknown operator (--unknown-ops=zero-cost) costs 0, traffic included.
      const double cost = rule ? KernelCost(options_.cost_model, work,
                                            options_.device ? &*options_.device : nullptr)
                               : 0.0;
      forward.nodes.push_back({.name = NodeName(i), .cost = cost, .bytes = bytes});
      BackwardInputs& b = backward_inputs.emplace_back();
      b.rule = rule;
      b.flops = flops;
      b.output_bytes = node.output_size() > 0 && !node.output(0).empty() &&
                               KnownShape(node.output(0))
                           ? ScaleBytes(TensorBytes(node.output(0), i))
                           : bytes;
      b.weight_bytes = static_input_bytes;
      for (const std::string& input : node.input()) {
        if (input.empty()) continue;
        const TensorInfo& info = tensors_.at(input);
        if (info.origin == Origin::kActivation) {
          b.activations.emplace_back(forward_id_[info.producer], ScaleBytes(TensorBytes(input, i)));
        }
      }
      result_.op_types.push_back(OpType(node));
      result_.flops.push_back(flops);
      std::vector<int32_t> sources;
      for (const std::string& input : node.input()) {
        if (input.empty()) continue;
        const TensorInfo& info = tensors_.at(input);
        if (info.origin == Origin::kActivation) sources.push_back(forward_id_[info.producer]);
      }
      std::sort(sources.begin(), sources.end());
      sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
      for (const int32_t src : sources) forward.edges.push_back({src, forward_id_[i]});
      // A product of two activations: the gradient of each factor reads the other
      // (BuildTrainingGraph's extra edges, docs/semantics.md).
      forward.nodes.back().backward_reads_inputs =
          sources.size() >= 2 && IsProductOfInputs(node);
    }
    forward.loss_bytes = 4 * result_.batch;  // one float per sample (DESIGN §1)
    forward.loss_cost = 0.0;
    AttributeBackwardCosts(backward_inputs);

    for (const std::string& name : data_inputs_) {
      const auto it = types_.find(name);
      const std::optional<Shape> shape = KnownShape(name);
      const std::optional<int64_t> element_bytes =
          it == types_.end() ? std::nullopt : ElementBytes(it->second.tensor_type().elem_type());
      const std::optional<int64_t> elements = shape ? CheckedElements(*shape) : std::nullopt;
      const std::optional<int64_t> bytes =
          elements && element_bytes ? CheckedMul(*elements, *element_bytes) : std::nullopt;
      if (!bytes) Fail(fmt::format("input '{}' has no size", name));
      result_.input_bytes += ScaleBytes(*bytes);  // data inputs all carry the batch
    }
    result_.ir_version = model_.ir_version();
    result_.opset = opset_;
    result_.producer = model_.producer_name().empty()
                           ? std::string()
                           : model_.producer_name() + " " + model_.producer_version();
    return std::move(result_);
  }

  std::string source_;
  OnnxImportOptions options_;
  onnx::ModelProto model_;
  int64_t opset_ = 0;
  int64_t reference_batch_ = 1;  // the batch shapes are inferred at
  std::set<std::string> parameter_names_;        // initializers and weight inputs
  std::set<std::string> batch_norm_statistics_;  // running means and variances
  std::map<std::string, TensorProto> small_constants_;  // values shape computations may read
  std::map<std::string, onnx_folding::StaticValue> values_;  // folded tensors' values
  std::vector<std::string> data_inputs_;
  std::unordered_map<std::string, TensorInfo> tensors_;
  std::unordered_map<std::string, onnx::TypeProto> types_;  // tensor types known so far
  std::vector<NodeRole> roles_;
  std::vector<int32_t> forward_nodes_;  // ONNX node indices, in forward order
  std::vector<int32_t> forward_id_;     // ONNX node index -> forward node, or -1
  ImportedOnnxModel result_;
};

}  // namespace

const char* UnknownOpsName(UnknownOps mode) {
  return mode == UnknownOps::kError ? "error" : "zero-cost";
}

std::optional<UnknownOps> ParseUnknownOps(const std::string& name) {
  if (name == "error") return UnknownOps::kError;
  if (name == "zero-cost") return UnknownOps::kZeroCost;
  return std::nullopt;
}

ImportedOnnxModel ImportOnnxBytes(std::string_view bytes, const std::string& source,
                                  const OnnxImportOptions& options) {
  return Importer(source, options).Run(bytes);
}

ImportedOnnxModel ImportOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  const std::string bytes = ReadFileText(path);
  return ImportOnnxBytes(bytes, path, options);
}

FixedMemory OnnxFixedMemory(const ImportedOnnxModel& model, Optimizer optimizer) {
  return {.parameter_bytes = model.parameter_bytes,
          .gradient_bytes = model.trainable_parameter_bytes,
          .optimizer_bytes = model.trainable_parameter_bytes * OptimizerStateCopies(optimizer),
          .input_bytes = model.input_bytes};
}

}  // namespace remat
