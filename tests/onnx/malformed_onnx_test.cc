// Malformed, truncated and non-ONNX files are InputErrors (exit 3) whose message names the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "core/errors.h"
#include "onnx/onnx_import.h"

namespace remat {
namespace {

std::string ReadData(const std::string& name) {
  std::ifstream in(std::string(REMAT_ONNX_TESTDATA) + "/" + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The InputError message of importing `bytes` as `source`, or a failure.
std::string ImportError(const std::string& bytes, const std::string& source) {
  try {
    ImportOnnxBytes(bytes, source);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "imported without an error";
  return "";
}

void ExpectRejected(const std::string& bytes, const std::string& source,
                    const std::string& expected_text) {
  const std::string message = ImportError(bytes, source);
  EXPECT_EQ(message.rfind(source + ": ", 0), 0u) << message;  // starts with the file name
  EXPECT_NE(message.find(expected_text), std::string::npos) << message;
}

TEST(MalformedOnnxTest, MissingFileNamesIt) {
  try {
    ImportOnnxFile("/nonexistent/model.onnx");
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/model.onnx"), std::string::npos);
  }
}

TEST(MalformedOnnxTest, EmptyFile) { ExpectRejected("", "empty.onnx", "empty"); }

TEST(MalformedOnnxTest, JsonIsNotOnnx) {
  ExpectRejected(R"({"schema": "remat.graph/1", "nodes": []})", "graph.json", "not an ONNX model");
}

TEST(MalformedOnnxTest, TextIsNotOnnx) {
  ExpectRejected("hello, this is not a model\n", "notes.txt", "not");
}

TEST(MalformedOnnxTest, RandomBytesAreNotOnnx) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    SCOPED_TRACE(trial);
    std::string bytes(256, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
    const std::string message = ImportError(bytes, "random.onnx");
    EXPECT_EQ(message.rfind("random.onnx: ", 0), 0u) << message;
  }
}

TEST(MalformedOnnxTest, ProtobufWithoutGraphIsNotOnnx) {
  // Field 1 (ir_version), varint 8: a valid ModelProto that has no graph.
  ExpectRejected(std::string("\x08\x08", 2), "nograph.onnx", "no graph");
}

// A zero stride passes onnx.checker but makes ONNX 1.12's shape inference divide by zero
// (found by the fuzzer); the importer rejects it before inference.
TEST(MalformedOnnxTest, ZeroStrideIsRejectedBeforeShapeInference) {
  ExpectRejected(ReadData("conv_zero_stride.onnx"), "conv_zero_stride.onnx",
                 "node 'bad_conv' (Conv) has strides = 0; it must be positive");
}

// A rank-1 ConvTranspose weight: ONNX 1.12's shape inference dereferences a missing dimension
// of it (found by the fuzzer); the importer checks ranks before inference.
TEST(MalformedOnnxTest, ConvolutionWeightRankIsCheckedBeforeShapeInference) {
  ExpectRejected(ReadData("convtranspose_rank1_weight.onnx"), "convtranspose_rank1_weight.onnx",
                 "node 'bad_deconv' (ConvTranspose) has a weight 'w' of rank 1 for an input of "
                 "rank 4");
}

// A shape computation that gathers index 4294967295 of a rank-2 shape: remat's folding
// refuses it (ONNX 1.12's own data propagation, which remat leaves off, read out of bounds on
// such an index under the fuzzer), so the Reshape it feeds has no size.
TEST(MalformedOnnxTest, OutOfRangeShapeGatherLeavesTheReshapeUnsized) {
  ExpectRejected(ReadData("shape_gather_out_of_range.onnx"), "shape_gather_out_of_range.onnx",
                 "cannot size tensor 'y' (output of node 'reshape', Reshape)");
}

// Cutting resnet18.onnx anywhere leaves an unparsable or invalid model.
TEST(MalformedOnnxTest, TruncatedModelsAreRejected) {
  const std::string bytes = ReadData("resnet18.onnx");
  ASSERT_GT(bytes.size(), 10000u);
  for (size_t cut : {size_t{1}, size_t{16}, size_t{100}, bytes.size() / 4, bytes.size() / 2,
                     bytes.size() * 3 / 4, bytes.size() - 100, bytes.size() - 10,
                     bytes.size() - 1}) {
    SCOPED_TRACE(cut);
    const std::string message = ImportError(bytes.substr(0, cut), "cut.onnx");
    EXPECT_EQ(message.rfind("cut.onnx: ", 0), 0u) << message;
  }
}

TEST(MalformedOnnxTest, TruncatedFileOnDiskNamesTheFile) {
  const std::string bytes = ReadData("tiny_mlp.onnx");
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "remat_onnx_truncated_test.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    out << bytes.substr(0, bytes.size() / 2);
  }
  try {
    ImportOnnxFile(path.string());
    ADD_FAILURE() << "no error";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos) << error.what();
  }
  std::filesystem::remove(path);
}

// A flipped byte in the middle of a valid model: any outcome but a crash or a non-InputError.
TEST(MalformedOnnxTest, CorruptedBytesNeverEscapeAsOtherErrors) {
  const std::string original = ReadData("ops_cnn.onnx");
  std::mt19937 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    std::string bytes = original;
    const size_t at = rng() % bytes.size();
    bytes[at] = static_cast<char>(bytes[at] ^ (1 + rng() % 255));
    SCOPED_TRACE(at);
    try {
      ImportOnnxBytes(bytes, "flipped.onnx", {.batch = 2});
    } catch (const InputError& error) {
      EXPECT_EQ(std::string(error.what()).rfind("flipped.onnx: ", 0), 0u) << error.what();
    }
  }
}

}  // namespace
}  // namespace remat
