// Tests src/exec/transformer_layers.cc: the embedding's parameter gradients, accumulated on the
// rows of the tokens that occur, are autograd's bit for bit.
#include "exec/transformer_layers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

namespace remat::exec {
namespace {

TEST(EmbeddingGradientTest, RowsOfRepeatedTokensAddUpAsAutogradsTable) {
  // 6 tokens of a 5-token vocabulary, H = 4: token 3 three times, 1 twice, 0 once, 2 and 4
  // never. The token-table gradient already holds another consumer's part (a tied head's), so
  // the result is that part plus embedding_dense_backward's table, added once per row.
  at::manual_seed(11);
  const at::Tensor tokens =
      at::tensor(std::vector<int32_t>{3, 1, 3, 1, 3, 0}, at::kInt).view({2, 3});
  const at::Tensor grad = at::randn({2, 3, 4});
  const LayerTensors p{.weight = at::randn({5, 4}), .position = at::randn({3, 4})};
  const at::Tensor tied_part = at::randn({5, 4});
  std::vector<at::Tensor> gradients = {tied_part.clone(), at::zeros({3, 4})};

  EmbeddingParameterGradients(p, tokens, grad, gradients);

  const at::Tensor table = at::embedding_dense_backward(grad, tokens, 5, -1, false);
  EXPECT_TRUE(at::equal(gradients[0], tied_part + table));
  EXPECT_TRUE(at::equal(gradients[1], at::zeros({3, 4}) + grad.sum(0)));
}

}  // namespace
}  // namespace remat::exec
