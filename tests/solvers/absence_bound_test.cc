// The absence-gap bound is valid: never above the brute-force optimum on tiny graphs, the
// MILP optimum on small ones, or any strategy's simulated cost on 200 random graphs.
#include "solvers/absence_bound.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "solvers/brute_force.h"
#include "solvers/checkmate_solver.h"
#include "solvers/lower_bound.h"
#include "strategies/checkpoint_all.h"
#include "strategies/eviction.h"
#include "strategies/registry.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

int64_t NoRematPeak(const Graph& g) {
  return CheckpointAll(g, std::numeric_limits<int64_t>::max()).peak_bytes;
}

// Budgets from just below the minimum peak to the no-remat peak, `count` of them.
std::vector<int64_t> Budgets(const Graph& g, int32_t count) {
  const int64_t lo = MinimumPeakLowerBound(g) - 1, hi = NoRematPeak(g);
  std::vector<int64_t> out;
  for (int32_t k = 0; k < count; ++k) out.push_back(lo + (hi - lo) * k / std::max(1, count - 1));
  return out;
}

// a(4 B) -> b(8 B) -> c(4 B) -> d(4 B), and d reads a; unit costs; budget 12 B. Computing c
// needs b and c live (12 B), so a (read again by d) cannot be held across that stage: it is
// recomputed once. The bound is 4 + 1 = 5, the optimum.
TEST(AbsenceBoundTest, HandCheckedChainWithSkip) {
  std::vector<Node> nodes = {{.name = "a", .cost = 1, .bytes = 4}, {.name = "b", .cost = 1, .bytes = 8},
                             {.name = "c", .cost = 1, .bytes = 4}, {.name = "d", .cost = 1, .bytes = 4}};
  const Graph g(nodes, {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
  const AbsenceBound b = AbsenceGapLowerBound(g, 12);
  ASSERT_EQ(b.status, SolveStatus::kOptimal) << b.message;
  EXPECT_NEAR(b.cost, 5, 1e-5);
  EXPECT_EQ(b.rows, 1);
  EXPECT_EQ(b.columns, 1);
  // At 16 B everything fits: no row, the bound is the sum of costs.
  EXPECT_DOUBLE_EQ(AbsenceGapLowerBound(g, 16).cost, 4);
  // Below c's own need (b + c = 12 B) no schedule exists.
  EXPECT_EQ(AbsenceGapLowerBound(g, 11).status, SolveStatus::kInfeasible);
}

// A random DAG of `ops` operations, some of them multi-output: a node t (the tuple, its bytes
// at least its members' together) read only by two zero-cost members, as AOTAutograd's graphs
// have them (a layer norm and its output, mean and rstd). Later operations read the members
// and single outputs, never a tuple. This is where Lemma 4 of the bound applies.
Graph RandomMultiOutputDag(uint32_t seed, int32_t ops) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> bytes(1, 8);
  std::uniform_int_distribution<int> cost(1, 6);
  std::bernoulli_distribution tuple(0.4), edge(0.35);
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<int32_t> readable;  // members and single outputs
  for (int32_t k = 0; k < ops; ++k) {
    const int32_t id = static_cast<int32_t>(nodes.size());
    std::vector<int32_t> inputs;
    for (int32_t r : readable) {
      if (edge(rng)) inputs.push_back(r);
    }
    if (inputs.empty() && !readable.empty()) inputs.push_back(readable.back());
    for (int32_t r : inputs) edges.push_back({r, id});
    if (tuple(rng)) {
      const int64_t first = bytes(rng), second = bytes(rng);
      nodes.push_back({.name = fmt::format("t{}", id), .cost = static_cast<double>(cost(rng)),
                       .bytes = first + second});
      nodes.push_back({.name = fmt::format("m{}", id + 1), .cost = 0, .bytes = first});
      nodes.push_back({.name = fmt::format("m{}", id + 2), .cost = 0, .bytes = second});
      edges.push_back({id, id + 1});
      edges.push_back({id, id + 2});
      readable.push_back(id + 1);
      readable.push_back(id + 2);
    } else {
      nodes.push_back({.name = fmt::format("n{}", id), .cost = static_cast<double>(cost(rng)),
                       .bytes = bytes(rng)});
      readable.push_back(id);
    }
  }
  return Graph(std::move(nodes), std::move(edges));
}

// x (1, 4 B) -> t (10, 8 B) -> members g1, g2 (0, 4 B each); y = f(g1, g2) (1 B); z = f(y)
// (8 B); w = f(z, g1) (1 B); out = f(w, g2) (1 B); all other costs 1, 15 in all; budget 16 B,
// the least peak (t, g1 and g2 while g2 is computed). While z runs, z, y, g1 and g2 take 17 B,
// and while w runs w, z, g1 and g2 do: g2 is absent there. It comes back only through t (8 B,
// as much as both members: holding t instead saves nothing), and t only through x:
// recomputing x, t and g2 at the last stage costs 11, the optimum (26). The plain covering
// drops the zero-cost member: 15. Coupled to t, the member charges t's re-evaluation: 25.
TEST(AbsenceBoundTest, HandCheckedMultiOutputMember) {
  std::vector<Node> nodes = {{.name = "x", .cost = 1, .bytes = 4},  {.name = "t", .cost = 10, .bytes = 8},
                             {.name = "g1", .cost = 0, .bytes = 4}, {.name = "g2", .cost = 0, .bytes = 4},
                             {.name = "y", .cost = 1, .bytes = 1},  {.name = "z", .cost = 1, .bytes = 8},
                             {.name = "w", .cost = 1, .bytes = 1},  {.name = "out", .cost = 1, .bytes = 1}};
  const Graph g(nodes, {{0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 4}, {4, 5}, {5, 6}, {2, 6}, {6, 7}, {3, 7}});
  EXPECT_NEAR(AbsenceGapLowerBound(g, 16, {.couple_inputs = false}).cost, 15, 1e-5);
  const AbsenceBound b = AbsenceGapLowerBound(g, 16);
  ASSERT_EQ(b.status, SolveStatus::kOptimal) << b.message;
  EXPECT_NEAR(b.cost, 25, 1e-4);
  const OptimizerResult opt = SolveOptimal(g, 16, {.mip = {.time_limit_s = 30}});
  ASSERT_EQ(opt.status, SolveStatus::kOptimal) << opt.message;
  EXPECT_NEAR(opt.schedule->cost, 26, 1e-6);
}

// With multi-output nodes: never above the brute-force optimum (6 nodes) or the MILP optimum
// (up to 16 nodes), and above the plain covering's bound somewhere.
TEST(AbsenceBoundTest, CoupledMembersNeverAboveTheOptimum) {
  int32_t stronger = 0;
  for (uint32_t seed = 0; seed < 24; ++seed) {
    const Graph g = RandomMultiOutputDag(seed, 4);
    if (g.size() > 6) continue;  // brute force stays within 2^15 checkpoint matrices
    const auto outcomes = testing::AllSchedules(g);
    for (int64_t budget : Budgets(g, 6)) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " budget " << budget);
      const double oracle = testing::OracleCost(outcomes, budget);
      const AbsenceBound b = AbsenceGapLowerBound(g, budget);
      if (std::isinf(oracle) || b.status == SolveStatus::kInfeasible) continue;
      EXPECT_LE(b.cost, oracle + 1e-6);
      if (b.cost > AbsenceGapLowerBound(g, budget, {.couple_inputs = false}).cost + 1e-6) ++stronger;
    }
  }
  for (uint32_t seed = 0; seed < 8; ++seed) {
    const Graph g = RandomMultiOutputDag(100 + seed, 6 + static_cast<int32_t>(seed % 3));
    for (int64_t budget : Budgets(g, 4)) {
      SCOPED_TRACE(::testing::Message() << "seed " << 100 + seed << " budget " << budget);
      const OptimizerResult opt = SolveOptimal(g, budget, {.mip = {.time_limit_s = 30}});
      if (opt.status == SolveStatus::kInfeasible) continue;
      ASSERT_EQ(opt.status, SolveStatus::kOptimal) << opt.message;
      const AbsenceBound b = AbsenceGapLowerBound(g, budget);
      EXPECT_LE(b.cost, opt.schedule->cost + 1e-6);
      // The LP relaxation alone (what large coverings get) is no higher and still valid.
      const AbsenceBound relaxed = AbsenceGapLowerBound(g, budget, {.max_cbc_terms = 0});
      EXPECT_LE(relaxed.cost, b.cost + 1e-6);
      if (b.cost > AbsenceGapLowerBound(g, budget, {.couple_inputs = false}).cost + 1e-6) ++stronger;
    }
  }
  EXPECT_GT(stronger, 0);
}

// p -> q -> a -> b (8 B) -> c -> d, and d reads a again; unit costs, 4 B each but b; budget
// 12 B. While c runs, b and c take the budget, so a is absent there and computed again for d.
// It comes back only through q, and q only through p (each as large as its one consumer: holding
// it instead saves nothing), so the optimum recomputes all three: 6 + 3 = 9. The plain covering
// charges a alone (7), Lemma 4 a and q (8), the chain p too (9).
TEST(AbsenceBoundTest, HandCheckedCouplingChain) {
  std::vector<Node> nodes = {{.name = "p", .cost = 1, .bytes = 4}, {.name = "q", .cost = 1, .bytes = 4},
                             {.name = "a", .cost = 1, .bytes = 4}, {.name = "b", .cost = 1, .bytes = 8},
                             {.name = "c", .cost = 1, .bytes = 4}, {.name = "d", .cost = 1, .bytes = 4}};
  const Graph g(nodes, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {2, 5}});
  EXPECT_NEAR(AbsenceGapLowerBound(g, 12, {.couple_inputs = false}).cost, 7, 1e-5);
  EXPECT_NEAR(AbsenceGapLowerBound(g, 12, {.coupling_depth = 1}).cost, 8, 1e-5);
  const AbsenceBound b = AbsenceGapLowerBound(g, 12);
  ASSERT_EQ(b.status, SolveStatus::kOptimal) << b.message;
  EXPECT_NEAR(b.cost, 9, 1e-4);
  const double oracle = testing::OracleCost(testing::AllSchedules(g), 12);
  EXPECT_NEAR(oracle, 9, 1e-9);
}

// A random DAG whose operations often read only the one before, which no one else reads then
// (a pointwise chain, each link at least as large as the next: a coupling input), otherwise
// a few earlier values that are not such links: where Lemma 5 follows chains.
Graph RandomChainDag(uint32_t seed, int32_t ops) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> bytes(1, 8);
  std::uniform_int_distribution<int> cost(1, 6);
  std::bernoulli_distribution link(0.5), edge(0.4);
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<bool> sealed;  // a link: read by the next operation alone
  for (int32_t id = 0; id < ops; ++id) {
    int64_t size = bytes(rng);
    if (id > 0 && link(rng)) {
      edges.push_back({id - 1, id});
      sealed[id - 1] = true;
      size = std::min(size, nodes.back().bytes);
    } else {
      for (int32_t r = 0; r < id; ++r) {
        if (!sealed[r] && (edge(rng) || r == id - 1)) edges.push_back({r, id});
      }
    }
    nodes.push_back({.name = fmt::format("n{}", id), .cost = static_cast<double>(cost(rng)),
                     .bytes = size});
    sealed.push_back(false);
  }
  return Graph(std::move(nodes), std::move(edges));
}

// Chains: never above the brute-force optimum (6 nodes) or the MILP optimum (8 to 11), and
// above Lemma 4 alone somewhere.
TEST(AbsenceBoundLongTest, CouplingChainsNeverAboveTheOptimum) {
  int32_t stronger = 0;
  for (uint32_t seed = 0; seed < 80; ++seed) {
    const Graph g = RandomChainDag(seed, 6);
    const auto outcomes = testing::AllSchedules(g);
    for (int64_t budget : Budgets(g, 6)) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " budget " << budget);
      const double oracle = testing::OracleCost(outcomes, budget);
      const AbsenceBound b = AbsenceGapLowerBound(g, budget);
      if (std::isinf(oracle) || b.status == SolveStatus::kInfeasible) continue;
      EXPECT_LE(b.cost, oracle + 1e-6);
      if (b.cost > AbsenceGapLowerBound(g, budget, {.coupling_depth = 1}).cost + 1e-6) ++stronger;
    }
  }
  for (uint32_t seed = 0; seed < 16; ++seed) {
    const Graph g = RandomChainDag(seed, 8 + static_cast<int32_t>(seed % 4));
    for (int64_t budget : Budgets(g, 6)) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " budget " << budget);
      const OptimizerResult opt = SolveOptimal(g, budget, {.mip = {.time_limit_s = 30}});
      if (opt.status == SolveStatus::kInfeasible) continue;
      ASSERT_EQ(opt.status, SolveStatus::kOptimal) << opt.message;
      const AbsenceBound b = AbsenceGapLowerBound(g, budget);
      EXPECT_LE(b.cost, opt.schedule->cost + 1e-6);
      if (b.cost > AbsenceGapLowerBound(g, budget, {.coupling_depth = 1}).cost + 1e-6) ++stronger;
    }
  }
  EXPECT_GT(stronger, 0);
}

// r (cost 5) is read by n and m (4 B each: r covers neither together, but each alone), m by
// b (8 B), b by c, and d reads c and n; unit costs but r's, budget 12 B. While b and while c
// run they fill the budget, so n is absent there and computed again for d, from r, which is
// dead after m and cannot be held beside them either: the optimum is 10 + 1 + 5 = 16. Lemmas
// 4 and 5 charge n alone (11); coupled to r by room and from r's death on (Lemma 6), the bound
// charges r too (16).
TEST(AbsenceBoundTest, HandCheckedCouplingByRoomFromTheInputsDeath) {
  std::vector<Node> nodes = {{.name = "r", .cost = 5, .bytes = 4}, {.name = "n", .cost = 1, .bytes = 4},
                             {.name = "m", .cost = 1, .bytes = 4}, {.name = "b", .cost = 1, .bytes = 8},
                             {.name = "c", .cost = 1, .bytes = 4}, {.name = "d", .cost = 1, .bytes = 4}};
  const Graph g(nodes, {{0, 1}, {0, 2}, {2, 3}, {3, 4}, {4, 5}, {1, 5}});
  EXPECT_NEAR(AbsenceGapLowerBound(g, 12, {.couple_by_room = false}).cost, 11, 1e-5);
  const AbsenceBound b = AbsenceGapLowerBound(g, 12);
  ASSERT_EQ(b.status, SolveStatus::kOptimal) << b.message;
  EXPECT_NEAR(b.cost, 16, 1e-4);
  EXPECT_NEAR(testing::OracleCost(testing::AllSchedules(g), 12), 16, 1e-9);
}

// r (cost 5, 4 B) is read by n1, n2 and m (4 B each), m by b (8 B), b by c, and d reads c,
// n1 and n2; unit costs but r's, budget 16 B. While c runs (12 B with b), 4 B more fit: r,
// so that n1 and n2 are computed again from it (13), not both of them. r has room for one
// of its consumers only: coupling both would charge r's re-evaluation for dropping either.
TEST(AbsenceBoundTest, AnInputHasRoomForTheBytesItCovers) {
  std::vector<Node> nodes = {{.name = "r", .cost = 5, .bytes = 4}, {.name = "n1", .cost = 1, .bytes = 4},
                             {.name = "n2", .cost = 1, .bytes = 4}, {.name = "m", .cost = 1, .bytes = 4},
                             {.name = "b", .cost = 1, .bytes = 8}, {.name = "c", .cost = 1, .bytes = 4},
                             {.name = "d", .cost = 1, .bytes = 4}};
  const Graph g(nodes, {{0, 1}, {0, 2}, {0, 3}, {3, 4}, {4, 5}, {5, 6}, {1, 6}, {2, 6}});
  const OptimizerResult opt = SolveOptimal(g, 16, {.mip = {.time_limit_s = 30}});
  ASSERT_EQ(opt.status, SolveStatus::kOptimal) << opt.message;
  EXPECT_DOUBLE_EQ(opt.schedule->cost, 13);
  const AbsenceBound b = AbsenceGapLowerBound(g, 16);
  ASSERT_EQ(b.status, SolveStatus::kOptimal) << b.message;
  EXPECT_LE(b.cost, 13 + 1e-6);
  EXPECT_GT(b.cost, g.total_cost() + 1e-6);
}

// A chain whose operations often read one earlier value too, as a residual block's output is
// read by the next block and its normalized copy by backward: inputs read by several consumers,
// none covering them all, dying before a consumer's last read (where Lemma 6 couples).
Graph RandomSkipChain(uint32_t seed, int32_t ops) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> bytes(1, 8);
  std::uniform_int_distribution<int> cost(1, 6);
  std::bernoulli_distribution skip(0.6);
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  for (int32_t id = 0; id < ops; ++id) {
    nodes.push_back({.name = fmt::format("n{}", id), .cost = static_cast<double>(cost(rng)),
                     .bytes = bytes(rng)});
    if (id > 0) edges.push_back({id - 1, id});
    if (id > 1 && skip(rng)) {
      edges.push_back({std::uniform_int_distribution<int32_t>(0, id - 2)(rng), id});
    }
  }
  return Graph(std::move(nodes), std::move(edges));
}

// Coupling by room: never above the brute-force optimum (6 nodes) or the MILP optimum (8 to
// 11), and above the bound without it somewhere.
TEST(AbsenceBoundLongTest, CouplingByRoomNeverAboveTheOptimum) {
  int32_t stronger = 0;
  auto check = [&](const Graph& g, int64_t budget, double optimum) {
    const AbsenceBound b = AbsenceGapLowerBound(g, budget);
    if (b.status == SolveStatus::kInfeasible) return;
    EXPECT_LE(b.cost, optimum + 1e-6);
    if (b.cost > AbsenceGapLowerBound(g, budget, {.couple_by_room = false}).cost + 1e-6) {
      ++stronger;
    }
  };
  for (uint32_t seed = 0; seed < 150; ++seed) {
    const Graph g = seed % 3 == 0   ? testing::RandomTrainingGraph(seed, 2)
                    : seed % 3 == 1 ? testing::RandomUnlabeledDag(seed, 6, 0.4)
                                    : RandomSkipChain(seed, 6);
    const auto outcomes = testing::AllSchedules(g);
    for (int64_t budget : Budgets(g, 6)) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " budget " << budget);
      const double oracle = testing::OracleCost(outcomes, budget);
      if (!std::isinf(oracle)) check(g, budget, oracle);
    }
  }
  for (uint32_t seed = 0; seed < 12; ++seed) {
    const Graph g = seed % 2 == 0 ? testing::RandomUnlabeledDag(seed, 8 + static_cast<int32_t>(seed % 4), 0.35)
                                  : RandomSkipChain(seed, 8 + static_cast<int32_t>(seed % 4));
    for (int64_t budget : Budgets(g, 5)) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " budget " << budget);
      const OptimizerResult opt = SolveOptimal(g, budget, {.mip = {.time_limit_s = 30}});
      if (opt.status == SolveStatus::kInfeasible) continue;
      ASSERT_EQ(opt.status, SolveStatus::kOptimal) << opt.message;
      check(g, budget, opt.schedule->cost);
    }
  }
  EXPECT_GT(stronger, 0);
}

TEST(AbsenceBoundTest, NeverAboveTheBruteForceOptimum) {
  int32_t binding = 0;  // cases where the bound says more than the sum of costs
  for (uint32_t seed = 0; seed < 12; ++seed) {
    const Graph g = seed % 2 == 0 ? testing::RandomTrainingGraph(seed, 2)
                                  : testing::RandomUnlabeledDag(seed, 6, 0.4);
    const auto outcomes = testing::AllSchedules(g);
    for (int64_t budget : Budgets(g, 8)) {
      SCOPED_TRACE(::testing::Message() << g.name() << " budget " << budget);
      const double oracle = testing::OracleCost(outcomes, budget);
      const AbsenceBound b = AbsenceGapLowerBound(g, budget);
      if (b.status == SolveStatus::kInfeasible) {
        EXPECT_TRUE(std::isinf(oracle)) << "bound claims infeasible, oracle found " << oracle;
        continue;
      }
      ASSERT_EQ(b.status, SolveStatus::kOptimal) << b.message;
      if (std::isinf(oracle)) continue;
      EXPECT_LE(b.cost, oracle + 1e-6);
      if (b.cost > g.total_cost() + 1e-6) ++binding;
    }
  }
  EXPECT_GT(binding, 0);  // the comparison covers bounds that actually charge recomputation
}

// With the rows capped at a few terms, the cuts that overflow most get rows. A subset of the
// rows is a relaxation, so the bound is no higher than with every row (itself checked against
// exact optima above); the message says which stages got none, and the rows kept still charge
// recomputation.
TEST(AbsenceBoundTest, CappedRowsTakeTheLargestOverflowsAndStayBelowTheFullBound) {
  int32_t capped = 0, binding = 0;
  for (uint32_t seed = 0; seed < 30; ++seed) {
    const Graph g = seed % 2 == 0 ? testing::RandomTrainingGraph(seed, 8)
                                  : testing::RandomUnlabeledDag(seed, 16, 0.3);
    for (int64_t budget : Budgets(g, 4)) {
      SCOPED_TRACE(::testing::Message() << g.name() << " budget " << budget);
      const AbsenceBound full = AbsenceGapLowerBound(g, budget);
      if (full.status != SolveStatus::kOptimal) continue;
      const AbsenceBound few = AbsenceGapLowerBound(g, budget, {.max_row_terms = 4});
      // Solved, or stopped early on a loaded machine: either is a valid bound.
      ASSERT_TRUE(few.status == SolveStatus::kOptimal || few.status == SolveStatus::kFeasible)
          << few.message;
      EXPECT_LE(few.cost, full.cost + 1e-6);
      if (few.message.find("overflowing stages without a row") == std::string::npos) continue;
      ++capped;
      EXPECT_LT(few.rows, full.rows);
      if (few.cost > g.total_cost() + 1e-6) ++binding;
    }
  }
  EXPECT_GT(capped, 0);
  EXPECT_GT(binding, 0);
}

TEST(AbsenceBoundTest, NeverAboveTheMilpOptimum) {
  for (uint32_t seed = 0; seed < 6; ++seed) {
    const Graph g = seed % 2 == 0 ? testing::RandomTrainingGraph(seed, 5 + static_cast<int32_t>(seed))
                                  : testing::RandomUnlabeledDag(seed, 10 + 2 * static_cast<int32_t>(seed), 0.2);
    for (int64_t budget : Budgets(g, 4)) {
      SCOPED_TRACE(::testing::Message() << g.name() << " budget " << budget);
      const OptimizerResult opt = SolveOptimal(g, budget, {.mip = {.time_limit_s = 30}});
      const AbsenceBound b = AbsenceGapLowerBound(g, budget);
      if (opt.status == SolveStatus::kInfeasible) continue;
      if (b.status == SolveStatus::kInfeasible) {
        ADD_FAILURE() << "bound claims infeasible, MILP found " << SolveStatusName(opt.status);
        continue;
      }
      ASSERT_EQ(opt.status, SolveStatus::kOptimal) << opt.message;
      EXPECT_LE(b.cost, opt.schedule->cost + 1e-6);
      // The combined bound is no weaker than either part and still valid.
      const BestBound best = BestLowerBound(g, budget, {.time_limit_s = 30});
      EXPECT_GE(best.cost, b.cost - 1e-9);
      EXPECT_LE(best.cost, opt.schedule->cost + 1e-6);
    }
  }
}

TEST(AbsenceBoundTest, NeverAboveAnyStrategyOn200RandomGraphs) {
  for (uint32_t seed = 0; seed < 200; ++seed) {
    const Graph g = seed % 2 == 0 ? testing::RandomTrainingGraph(seed, 2 + static_cast<int32_t>(seed % 30))
                                  : testing::RandomUnlabeledDag(seed, 4 + static_cast<int32_t>(seed % 40), 0.15);
    const std::vector<int64_t> budgets = Budgets(g, 3);
    const int64_t budget = budgets[1];
    SCOPED_TRACE(::testing::Message() << g.name() << " budget " << budget);
    const AbsenceBound b = AbsenceGapLowerBound(g, budget);
    std::vector<StrategyResult> results = {Evict(g, budget)};
    for (const StrategySpec& spec : BaselineStrategies()) {
      if (spec.applies(g)) {
        results.push_back(spec.run(g, budget));
      }
    }
    for (const StrategyResult& r : results) {
      if (r.status != FitStatus::kFits) continue;
      ASSERT_NE(b.status, SolveStatus::kInfeasible) << r.strategy << " fits";
      EXPECT_LE(b.cost, r.cost + 1e-6) << r.strategy;
    }
  }
}

}  // namespace
}  // namespace remat
