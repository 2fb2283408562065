// Construction of the Checkmate MILP. Each Add* function is one constraint family of the paper.
#include "solvers/checkmate_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "core/errors.h"

namespace remat {
namespace {

// Values read by node k's position: its inputs and its own output (paper: DEPS[k] ∪ {k}).
std::vector<int32_t> FreedAt(const Graph& graph, int32_t k) {
  std::vector<int32_t> values = graph.preds(k);
  values.push_back(k);
  return values;
}

int64_t BytesGcd(const Graph& graph) {
  int64_t g = 0;
  for (const Node& node : graph.nodes()) g = std::gcd(std::gcd(g, node.bytes), node.workspace_bytes);
  return g == 0 ? 1 : g;
}

// Costs are divided by their gcd when they are all integers, else by the largest cost, so the
// objective stays in a range the solvers handle well.
double CostScale(const Graph& graph) {
  double largest = 0;
  bool integral = true;
  int64_t g = 0;
  for (const Node& node : graph.nodes()) {
    largest = std::max(largest, node.cost);
    if (node.cost != std::floor(node.cost) || node.cost > 9.0e15) integral = false;
    if (integral) g = std::gcd(g, static_cast<int64_t>(node.cost));
  }
  if (largest == 0) return 1;
  if (integral && g > 0) return static_cast<double>(g);
  return largest;
}

// The size of the paper's plain formulation (binary FREE with the two-sided linearization of
// docs/design.md §4, no reductions), computed without building it.
ModelSize PaperSize(const Graph& graph) {
  const int64_t n = graph.size();
  ModelSize size;
  int64_t frees = 0;
  int64_t correctness = 0;
  for (int32_t k = 0; k < n; ++k) {
    // FREE[t][(i, k)] exists for every stage t >= k.
    frees += (n - k) * static_cast<int64_t>(graph.preds(k).size() + 1);
    // R[t][k] <= R[t][u] + S[t][u] for every in-edge, every stage t >= k.
    correctness += (n - k) * static_cast<int64_t>(graph.preds(k).size());
  }
  correctness += (n - 1) * n / 2;  // S[t+1][i] <= S[t][i] + R[t][i]
  const int64_t triangle = n * (n + 1) / 2;
  size.columns = static_cast<int32_t>(std::min<int64_t>(
      INT32_MAX, triangle /* R */ + n * (n - 1) / 2 /* S */ + triangle /* U */ + frees));
  size.integer_columns = static_cast<int32_t>(triangle + n * (n - 1) / 2 + frees);
  size.rows = static_cast<int32_t>(std::min<int64_t>(INT32_MAX, correctness + 2 * frees + triangle));
  size.nonzeros = -1;  // not computed for the plain formulation
  return size;
}

}  // namespace

class CheckmateModelBuilder {
 public:
  // The model of stages window.first..window.last; `fixed` gives S of the other stages (none
  // for the whole model, whose window is every stage).
  CheckmateModelBuilder(const Graph& graph, int64_t budget_bytes, const CheckmateModelOptions& options,
          StageWindow window, const StageMatrix* fixed, CheckmateModel& model)
      : graph_(graph), options_(options), model_(model), n_(graph.size()), lo_(window.first),
        hi_(window.last), fixed_(fixed) {
    model_.byte_scale = BytesGcd(graph);
    model_.cost_scale = CostScale(graph);
    model_.scaled_budget = budget_bytes / model_.byte_scale;
    last_use_ = options.reductions ? LastPossibleUse(graph) : std::vector<int32_t>(n_, n_ - 1);
  }

  int64_t Bytes(int32_t v) const { return graph_.node(v).bytes / model_.byte_scale; }
  int64_t Workspace(int32_t v) const { return graph_.node(v).workspace_bytes / model_.byte_scale; }
  double Cost(int32_t v) const { return graph_.node(v).cost / model_.cost_scale; }

  // Columns: R[t][i] and S[t][i] for i < t within the last possible use; U[t][k], k <= t; for
  // the window's stages t only, and no S at the window's first stage (it is fixed).
  void AddColumns() {
    model_.n_ = n_;
    model_.window_ = {lo_, hi_};
    const size_t triangle = CheckmateModel::Tri(hi_ + 1, 0) - CheckmateModel::Tri(lo_, 0);
    model_.r_.assign(triangle, CheckmateModel::kAbsent);
    model_.s_.assign(triangle, CheckmateModel::kAbsent);
    for (int32_t t = lo_; t <= hi_; ++t) {
      model_.objective_constant += Cost(t);
      for (int32_t i = 0; i < t; ++i) {
        if (t > last_use_[i]) continue;
        // S is branched on first: R follows from S (docs/design.md §3).
        if (t > lo_) {
          model_.s_[model_.Index(t, i)] = model_.lp.AddColumn(
              {.lower = 0, .upper = 1, .objective = 0, .integer = options_.integer, .priority = 1});
        }
        model_.r_[model_.Index(t, i)] = model_.lp.AddColumn(
            {.lower = 0, .upper = 1, .objective = Cost(i), .integer = options_.integer,
             .priority = 2});
      }
    }
    const double u_upper = options_.elastic ? kInfinity : static_cast<double>(model_.scaled_budget);
    model_.u_first_.resize(static_cast<size_t>(hi_ - lo_ + 1));
    for (int32_t t = lo_; t <= hi_; ++t) {
      model_.u_first_[t - lo_] = model_.lp.num_columns();
      for (int32_t k = 0; k <= t; ++k) model_.lp.AddColumn({.lower = 0, .upper = u_upper});
    }
    if (options_.elastic) {
      double all_costs = 0;
      for (int32_t v = 0; v < n_; ++v) all_costs += Cost(v);
      model_.slack_column =
          model_.lp.AddColumn({.lower = 0, .upper = kInfinity, .objective = all_costs + 1});
      for (int32_t t = lo_; t <= hi_; ++t) {
        for (int32_t k = 0; k <= t; ++k) {
          model_.lp.AddRow(-kInfinity, {{model_.u_first_[t - lo_] + k, 1}, {model_.slack_column, -1}},
                           static_cast<double>(model_.scaled_budget));
        }
      }
    }
  }

  // S[t][i]: a column, or a constant. It is 0 at or ahead of the frontier, past the last
  // possible use and past the last stage; the fixed schedule's value at the window's edges.
  struct Entry {
    int32_t column = CheckmateModel::kAbsent;
    double value = 0;  // when there is no column
  };
  Entry SEntry(int32_t t, int32_t i) const {
    if (i >= t || t >= n_ || t > last_use_[i]) return {};
    if (t > lo_ && t <= hi_) return {model_.S(t, i), 0};
    return {CheckmateModel::kAbsent, fixed_ != nullptr && fixed_->Get(t, i) ? 1.0 : 0.0};
  }

  // R[t][i] as a term, or a constant 1 (frontier) / 0 (absent).
  void AddR(std::vector<Term>& terms, double& constant, int32_t t, int32_t i, double coef) const {
    if (i == t) {
      constant += coef;
    } else if (model_.R(t, i) != CheckmateModel::kAbsent) {
      terms.push_back({model_.R(t, i), coef});
    }
  }
  void AddS(std::vector<Term>& terms, double& constant, int32_t t, int32_t i, double coef) const {
    const Entry entry = SEntry(t, i);
    if (entry.column != CheckmateModel::kAbsent) {
      terms.push_back({entry.column, coef});
    } else {
      constant += coef * entry.value;
    }
  }
  // lower <= terms + constant <= upper
  void Row(double lower, std::vector<Term> terms, double constant, double upper) {
    if (terms.empty()) {
      if (constant < lower - 1e-9 || constant > upper + 1e-9) infeasible_ = true;
      return;
    }
    model_.lp.AddRow(lower - constant, std::move(terms), upper - constant);
  }

  // Paper §4: S[t+1][i] <= S[t][i] + R[t][i] (a checkpoint exists before or is computed).
  void AddCheckpointCorrectness() {
    for (int32_t t = lo_; t <= hi_ && t + 1 < n_; ++t) {
      for (int32_t i = 0; i < t; ++i) {
        const Entry next = SEntry(t + 1, i);
        if (next.column == CheckmateModel::kAbsent && next.value == 0) continue;
        std::vector<Term> terms;
        double constant = 0;
        AddS(terms, constant, t + 1, i, 1);
        AddS(terms, constant, t, i, -1);
        AddR(terms, constant, t, i, -1);
        Row(-kInfinity, std::move(terms), constant, 0);
      }
    }
  }

  // Paper §4: R[t][v] <= R[t][u] + S[t][u] for every edge u -> v (inputs are present).
  void AddInputCorrectness() {
    for (int32_t t = lo_; t <= hi_; ++t) {
      for (int32_t v = 0; v <= t; ++v) {
        if (v < t && model_.R(t, v) == CheckmateModel::kAbsent) continue;
        for (int32_t u : graph_.preds(v)) {
          std::vector<Term> terms;
          double constant = 0;
          AddR(terms, constant, t, v, 1);
          AddR(terms, constant, t, u, -1);
          AddS(terms, constant, t, u, -1);
          Row(-kInfinity, std::move(terms), constant, 0);
        }
      }
    }
  }

  // FREE[t][(i, k)] in [0, 1], continuous: freeing only lowers memory, so bounding FREE by its
  // indicator's conditions from above is exact at integer R and S (docs/solvers.md):
  // FREE <= R[t][k], FREE <= 1 - S[t+1][i], FREE <= 1 - R[t][j] for successors j > k of i.
  // A value read in stage t by many consumers gets the last family through its later-reader
  // chain instead (ChainColumn): one row per FREE rather than one per later consumer.
  void AddFreeColumns() {
    for (int32_t t = lo_; t <= hi_; ++t) {
      chains_.clear();
      for (int32_t k = 0; k <= t; ++k) {
        if (k < t && model_.R(t, k) == CheckmateModel::kAbsent) continue;
        for (int32_t i : FreedAt(graph_, k)) {
          // A later consumer at the frontier always runs: then i is never freed after k.
          const auto& succs = graph_.succs(i);
          if (std::any_of(succs.begin(), succs.end(), [&](int32_t j) { return j > k && j == t; })) {
            continue;
          }
          // A value the window's fixed edge holds into the next stage is never freed.
          const Entry next = SEntry(t + 1, i);
          if (next.column == CheckmateModel::kAbsent && next.value == 1) continue;
          const int32_t column = model_.lp.AddColumn({.lower = 0, .upper = 1});
          model_.frees_.push_back({t, i, k, column});
          if (k < t) Row(-kInfinity, {{column, 1}, {model_.R(t, k), -1}}, 0, 0);
          if (next.column != CheckmateModel::kAbsent) {
            Row(-kInfinity, {{column, 1}, {next.column, 1}}, 0, 1);
          }
          const std::vector<int32_t> later = ReadersAfter(t, i, k);
          if (static_cast<int32_t>(later.size()) >= options_.later_reader_chain_from) {
            Row(-kInfinity, {{column, 1}, {ChainColumn(t, i, later), 1}}, 0, 1);
          } else {
            for (int32_t j : later) Row(-kInfinity, {{column, 1}, {model_.R(t, j), 1}}, 0, 1);
          }
        }
      }
    }
  }

  // The consumers j of i with k < j < t that stage t may run (R[t][j] has a column), ascending
  // as the graph keeps them.
  std::vector<int32_t> ReadersAfter(int32_t t, int32_t i, int32_t k) const {
    std::vector<int32_t> readers;
    for (int32_t j : graph_.succs(i)) {
      if (j > k && j < t && model_.R(t, j) != CheckmateModel::kAbsent) readers.push_back(j);
    }
    return readers;
  }

  // L[t][(i, j)] in [0, 1] for the consumers j of i that stage t may run: L >= R[t][j] and
  // L >= L of i's next such consumer, so L is at least "some consumer from j on runs in stage
  // t"; FREE <= 1 - L. At integer R the least L is that indicator, and the LP's least L is the
  // largest R[t][j'] over j' >= j: the same bound on FREE as one row per consumer. Returns the
  // column of `readers`' first (the consumers after k); the chain is built once per (t, i),
  // from the last consumer down, as far as the earliest asked for.
  int32_t ChainColumn(int32_t t, int32_t i, const std::vector<int32_t>& readers) {
    std::vector<std::pair<int32_t, int32_t>>& chain = chains_[i];  // (j, column), j descending
    for (auto j = readers.rbegin(); j != readers.rend(); ++j) {
      if (!chain.empty() && chain.back().first <= *j) continue;
      const int32_t column = model_.lp.AddColumn({.lower = 0, .upper = 1});
      model_.later_readers_.push_back({t, i, *j, column});
      Row(-kInfinity, {{model_.R(t, *j), 1}, {column, -1}}, 0, 0);
      if (!chain.empty()) Row(-kInfinity, {{chain.back().second, 1}, {column, -1}}, 0, 0);
      chain.emplace_back(*j, column);
    }
    // Each FREE of i in stage t asks for a suffix of the same consumers (k grows).
    const auto first = std::find_if(chain.begin(), chain.end(), [&](const auto& entry) {
      return entry.first == readers.front();
    });
    return first->second;
  }

  // Paper §4 memory recurrence, with workspace w (docs/design.md §3): U[t][k] is the memory while k
  // runs, so it holds k's workspace, which the next position releases.
  // U[t][0] = R[t][0] (b0 + w0) + sum S[t][i] b_i;
  // U[t][k] = U[t][k-1] - R[t][k-1] w_{k-1} + R[t][k] (b_k + w_k)
  //           - sum over (i, k-1) of b_i FREE[t][(i, k-1)].
  void AddMemoryRecurrence() {
    std::vector<std::vector<Term>> freed(static_cast<size_t>(n_));  // per k, for current t
    size_t next_free = 0;
    for (int32_t t = lo_; t <= hi_; ++t) {
      for (auto& terms : freed) terms.clear();
      while (next_free < model_.frees_.size() && model_.frees_[next_free].t == t) {
        const auto& f = model_.frees_[next_free++];
        freed[f.k].push_back({f.column, static_cast<double>(Bytes(f.i))});
      }
      const int32_t u0 = model_.u_first_[t - lo_];
      for (int32_t k = 0; k <= t; ++k) {
        std::vector<Term> terms{{u0 + k, 1}};
        double constant = 0;
        AddR(terms, constant, t, k, -static_cast<double>(Bytes(k) + Workspace(k)));
        if (k == 0) {
          for (int32_t i = 0; i < t; ++i) {
            AddS(terms, constant, t, i, -static_cast<double>(Bytes(i)));
          }
        } else {
          terms.push_back({u0 + k - 1, -1});
          if (Workspace(k - 1) > 0) {
            AddR(terms, constant, t, k - 1, static_cast<double>(Workspace(k - 1)));
          }
          terms.insert(terms.end(), freed[k - 1].begin(), freed[k - 1].end());
        }
        Row(0, std::move(terms), constant, 0);
      }
    }
  }

  // Dominance (safe): recomputing i in stage t is useless unless a consumer runs later in the
  // stage or the next stage holds i: R[t][i] <= sum R[t][j] (j in succ(i), j <= t) + S[t+1][i].
  void AddDominanceRows() {
    for (int32_t t = lo_; t <= hi_; ++t) {
      for (int32_t i = 0; i < t; ++i) {
        if (model_.R(t, i) == CheckmateModel::kAbsent) continue;
        std::vector<Term> terms{{model_.R(t, i), 1}};
        double constant = 0;
        bool frontier_reads = false;
        for (int32_t j : graph_.succs(i)) {
          if (j == t) frontier_reads = true;
          if (j < t) AddR(terms, constant, t, j, -1);
        }
        if (frontier_reads || SEntry(t + 1, i).value == 1) continue;
        AddS(terms, constant, t + 1, i, -1);
        Row(-kInfinity, std::move(terms), constant, 0);
      }
    }
  }

  // Knapsack rows: when node t runs in stage t, its workspace, its inputs and every value the
  // next stage holds are live, so b_t + w_t + sum b_u (u in preds(t)) + sum b_i S[t+1][i]
  // (other i < t) <= budget. CBC's cover cuts cannot see this through the continuous U chain.
  void AddKnapsackRows() {
    // At the last stage nothing is held into a next stage: the row is a constant, and a node
    // that cannot fit with its inputs makes the model infeasible without a solver.
    for (int32_t t = lo_; t <= hi_; ++t) {
      double fixed = static_cast<double>(Bytes(t) + Workspace(t));
      std::vector<bool> is_input(n_, false);
      for (int32_t u : graph_.preds(t)) {
        fixed += static_cast<double>(Bytes(u));
        is_input[u] = true;
      }
      std::vector<Term> terms;
      double total = fixed;
      for (int32_t i = 0; i < t; ++i) {
        if (is_input[i] || Bytes(i) == 0) continue;
        const Entry next = SEntry(t + 1, i);
        if (next.column != CheckmateModel::kAbsent) {
          terms.push_back({next.column, static_cast<double>(Bytes(i))});
          total += static_cast<double>(Bytes(i));
        } else {
          fixed += next.value * static_cast<double>(Bytes(i));
          total += next.value * static_cast<double>(Bytes(i));
        }
      }
      if (total <= static_cast<double>(model_.scaled_budget)) continue;  // never binding
      if (options_.elastic) terms.push_back({model_.slack_column, -1});
      Row(-kInfinity, std::move(terms), fixed, static_cast<double>(model_.scaled_budget));
    }
  }

  // Clique-ancestor rows. At stage t's frontier compute the values held into t+1 and not read
  // by t fit in cap_t (the budget less node t, its workspace and its inputs), so at most one value of
  // C = {i < t not read by t: cap_t / 2 < b_i <= cap_t} is held into t+1. A held one is present
  // in stage t, so (walking down through inputs) a value of the ancestor closure X_x of
  // C_x = {c in C: c <= x} is held into t, or a source of X_x is computed in t. For each x:
  // sum_{c in C_x} S[t+1][c] <= sum_{u in X_x} S[t][u] + sum_{u in X_x, no inputs} R[t][u].
  void AddCliqueAncestorRows() {
    for (int32_t t = std::max(lo_, 1); t <= hi_ && t + 1 < n_; ++t) {
      double cap = static_cast<double>(model_.scaled_budget - Bytes(t) - Workspace(t));
      std::vector<bool> is_input(t, false);
      for (int32_t u : graph_.preds(t)) {
        cap -= static_cast<double>(Bytes(u));
        is_input[u] = true;
      }
      std::vector<bool> in_closure(t, false);
      std::vector<Term> held_next;  // S[t+1][c] for c in C_x
      double held_fixed = 0;        // members a window's fixed edge holds into t+1
      for (int32_t x = 0; x < t; ++x) {
        const double bytes = static_cast<double>(Bytes(x));
        if (is_input[x] || 2 * bytes <= cap || bytes > cap) continue;
        // A member never held into t+1 adds nothing to either side.
        const Entry next = SEntry(t + 1, x);
        if (next.column == CheckmateModel::kAbsent && next.value == 0) continue;
        if (next.column != CheckmateModel::kAbsent) {
          held_next.push_back({next.column, 1});
        } else {
          held_fixed += 1;
        }
        std::vector<int32_t> stack{x};
        while (!stack.empty()) {
          const int32_t v = stack.back();
          stack.pop_back();
          if (in_closure[v]) continue;
          in_closure[v] = true;
          for (int32_t u : graph_.preds(v)) stack.push_back(u);
        }
        // One member: a sum of correctness rows.
        if (held_next.size() + static_cast<size_t>(held_fixed) < 2) continue;
        std::vector<Term> terms = held_next;
        double constant = held_fixed;
        for (int32_t u = 0; u < t; ++u) {
          if (!in_closure[u]) continue;
          AddS(terms, constant, t, u, -1);
          if (graph_.preds(u).empty()) AddR(terms, constant, t, u, -1);
        }
        Row(-kInfinity, std::move(terms), constant, 0);
      }
    }
  }

  bool infeasible() const { return infeasible_; }

 private:
  const Graph& graph_;
  const CheckmateModelOptions& options_;
  CheckmateModel& model_;
  const int32_t n_;
  const int32_t lo_, hi_;         // the window's stages
  const StageMatrix* fixed_;      // S outside the window; null for the whole model
  std::vector<int32_t> last_use_;
  bool infeasible_ = false;
  // Per value, the later-reader chain of the stage being built: (consumer, column) descending.
  std::unordered_map<int32_t, std::vector<std::pair<int32_t, int32_t>>> chains_;
};

namespace {

ModelSize SizeOf(const LinearModel& lp) {
  return {lp.num_columns(), lp.num_integer_columns(), lp.num_rows(), lp.num_nonzeros()};
}

}  // namespace

std::vector<int32_t> LastPossibleUse(const Graph& graph) {
  std::vector<int32_t> last(graph.size());
  for (int32_t i = graph.size() - 1; i >= 0; --i) {
    last[i] = i;
    for (int32_t j : graph.succs(i)) last[i] = std::max(last[i], last[j]);
  }
  return last;
}

namespace {

CheckmateModel BuildModel(const Graph& graph, int64_t budget_bytes,
                          const CheckmateModelOptions& options, StageWindow window,
                          const StageMatrix* fixed) {
  if (budget_bytes < 0) throw InputError(fmt::format("budget {} B is negative", budget_bytes));
  CheckmateModel model;
  CheckmateModelBuilder builder(graph, budget_bytes, options, window, fixed, model);
  builder.AddColumns();
  builder.AddFreeColumns();
  builder.AddCheckpointCorrectness();
  builder.AddInputCorrectness();
  builder.AddMemoryRecurrence();
  if (options.reductions) builder.AddDominanceRows();
  if (options.knapsack_rows) builder.AddKnapsackRows();
  if (options.clique_ancestor_rows && !options.elastic) builder.AddCliqueAncestorRows();
  model.proven_infeasible = builder.infeasible();
  model.size = SizeOf(model.lp);
  return model;
}

}  // namespace

CheckmateModel BuildCheckmateModel(const Graph& graph, int64_t budget_bytes,
                                   const CheckmateModelOptions& options) {
  CheckmateModel model =
      BuildModel(graph, budget_bytes, options, {0, graph.size() - 1}, nullptr);
  model.full_size = PaperSize(graph);
  return model;
}

CheckmateModel BuildWindowModel(const Graph& graph, int64_t budget_bytes, const Schedule& fixed,
                                StageWindow window, const CheckmateModelOptions& options) {
  if (window.first < 0 || window.last < window.first || window.last >= graph.size()) {
    throw InputError(fmt::format("stage window {}..{} is empty or outside the {} stages",
                                 window.first, window.last, graph.size()));
  }
  if (fixed.S.rows() != graph.size() || fixed.S.cols() != graph.size()) {
    throw InputError(fmt::format("the fixed schedule has {} stages, the graph {} nodes",
                                 fixed.S.rows(), graph.size()));
  }
  CheckmateModel model = BuildModel(graph, budget_bytes, options, window, &fixed.S);
  model.full_size = model.size;
  return model;
}

StageMatrix CheckmateModel::DecodeS(const std::vector<double>& values, double threshold,
                                    const StageMatrix* outside) const {
  StageMatrix S = outside != nullptr ? *outside : StageMatrix(n_, n_);
  const int32_t first_free = window_.first + 1;  // S of a window's first stage is fixed
  if (outside != nullptr) {
    for (int32_t i = 0; i < n_; ++i) S.SetRun(i, first_free, window_.last, false);
  }
  for (int32_t t = first_free; t <= window_.last; ++t) {
    for (int32_t i = 0; i < t; ++i) {
      const int32_t column = this->S(t, i);
      if (column != kAbsent && values[column] >= threshold) S.Set(t, i);
    }
  }
  return S;
}

std::vector<double> CheckmateModel::Assignment(const Graph& graph,
                                               const Schedule& schedule) const {
  std::vector<double> values(static_cast<size_t>(lp.num_columns()), 0.0);
  const StageMatrix& Rm = schedule.R;
  const StageMatrix& Sm = schedule.S;
  for (int32_t t = window_.first; t <= window_.last; ++t) {
    for (int32_t i = 0; i < t; ++i) {
      if (Rm.Get(t, i) && R(t, i) != kAbsent) values[R(t, i)] = 1;
      if (Sm.Get(t, i) && S(t, i) != kAbsent) values[S(t, i)] = 1;
    }
  }
  auto running = [&](int32_t t, int32_t v) { return v <= t && Rm.Get(t, v); };
  const int32_t lo = window_.first;
  for (const FreeColumn& f : frees_) {
    bool free = running(f.t, f.k) && !(f.t + 1 < n_ && Sm.Get(f.t + 1, f.i));
    for (int32_t j : graph.succs(f.i)) {
      if (j > f.k && running(f.t, j)) free = false;
    }
    values[f.column] = free ? 1 : 0;
  }
  for (const LaterReaderColumn& l : later_readers_) {
    const auto& succs = graph.succs(l.i);
    values[l.column] = std::any_of(succs.begin(), succs.end(), [&](int32_t j) {
      return j >= l.j && j < l.t && running(l.t, j);
    }) ? 1 : 0;
  }
  // U by the recurrence, with the same scaled bytes as the rows.
  std::vector<double> freed_bytes(n_);
  size_t next = 0;
  for (int32_t t = lo; t <= window_.last; ++t) {
    std::fill(freed_bytes.begin(), freed_bytes.end(), 0.0);
    while (next < frees_.size() && frees_[next].t == t) {
      const FreeColumn& f = frees_[next++];
      freed_bytes[f.k] += values[f.column] * static_cast<double>(graph.node(f.i).bytes / byte_scale);
    }
    double u = 0;
    for (int32_t i = 0; i < t; ++i) {
      if (Sm.Get(t, i)) u += static_cast<double>(graph.node(i).bytes / byte_scale);
    }
    auto workspace = [&](int32_t v) {
      return static_cast<double>(graph.node(v).workspace_bytes / byte_scale);
    };
    for (int32_t k = 0; k <= t; ++k) {
      if (k > 0) u -= freed_bytes[k - 1];
      if (k > 0 && running(t, k - 1)) u -= workspace(k - 1);
      if (running(t, k)) {
        u += static_cast<double>(graph.node(k).bytes / byte_scale) + workspace(k);
      }
      values[u_first_[t - lo] + k] = u;
    }
  }
  if (slack_column >= 0) {  // the least overflow that makes every row hold
    double overflow = 0;
    for (const Row& row : lp.rows()) {
      double sum = 0;
      bool has_slack = false;
      for (const Term& term : row.terms) {
        if (term.column == slack_column) {
          has_slack = true;
        } else {
          sum += term.coefficient * values[term.column];
        }
      }
      if (has_slack) overflow = std::max(overflow, sum - row.upper);
    }
    values[slack_column] = overflow;
  }
  return values;
}

}  // namespace remat
