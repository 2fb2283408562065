// remat maxbatch: per strategy, the largest batch whose training step fits a device after its
// fixed memory, within an overhead cap (the paper's max-batch experiment, figure 6).
#include "cli/maxbatch_command.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/budget_sweep.h"
#include "cli/commands.h"
#include "cli/gnuplot.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "core/sizes.h"
#include "solvers/strategy_runner.h"
#include "cli/zoo_commands.h"
#include "core/errors.h"
#include "core/training_graph.h"
#include "solvers/checkmate_solver.h"
#include "solvers/lower_bound.h"
#include "strategies/registry.h"
#include "zoo/devices.h"
#include "zoo/fixed_memory.h"

namespace remat {
namespace {

constexpr const char* kReference = "checkpoint-all";

struct MaxBatchOptions {
  ZooModelArgs zoo;
  std::string memory_text;
  std::string strategies = "all";
  SolverSettings solver{.time_limit_s = 60};
  double max_overhead = 0;  // 0: one extra forward pass (the paper's cap)
  int64_t max_batch = 65536;
  double total_time_limit_s = 0;  // the whole command; 0: none
  bool json = false;
  bool quiet = false;
  std::string plot_path;
};

// The model rebuilt at one batch size, with what the device leaves for activations.
struct BatchCase {
  int64_t batch = 0;
  std::unique_ptr<Graph> graph;
  FixedMemory fixed;
  int64_t budget_bytes = 0;  // device memory - fixed memory; <= 0 when the weights do not fit
  int64_t min_peak_bytes = 0;
  double total_cost = 0;     // the no-remat cost: every node once
  double cost_cap = 0;       // the largest cost that counts
};

enum class Outcome {
  kFeasible,    // a simulated schedule fits the budget within the cost cap
  kInfeasible,  // none exists (optimal: proven), or the strategy finds none
  kUndecided,   // optimal only: the time limit stopped the solver before either
};

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kFeasible: return "feasible";
    case Outcome::kInfeasible: return "infeasible";
    case Outcome::kUndecided: return "undecided";
  }
  return "?";
}

struct Probe {
  int64_t batch = 0;
  int64_t budget_bytes = 0;
  int64_t fixed_bytes = 0;
  Outcome outcome = Outcome::kInfeasible;
  bool no_schedule_can_fit = false;  // weights fill the device or budget < minimum peak
  std::string reason;
  std::string solver_status;
  std::optional<double> cost;  // of the schedule found, feasible or not
  std::optional<double> overhead;
  std::optional<int64_t> peak_bytes;
  double seconds = 0;
};

struct StrategySearch {
  std::string strategy;
  int64_t max_batch = 0;            // largest batch with a schedule found (0: none)
  bool limit_reached = false;       // feasible at --max-batch; the search stopped there
  bool exact = false;               // the next batch is infeasible (proven for optimal)
  std::optional<Probe> at_max;      // the probe at max_batch
  std::optional<Probe> next;        // the probe at max_batch + 1: why the search stopped
  std::optional<Probe> uncertified; // the largest undecided batch probed above max_batch
  std::optional<int64_t> smallest_infeasible;  // the smallest batch probed that cannot fit
  int64_t seeded_from = 0;          // optimal: started above the best baseline's batch
  std::vector<Probe> probes;        // in the order they ran
  double seconds = 0;
  bool stopped_at_total_limit = false;  // --total-time-limit ended the search early
};

class MaxBatchSearch {
 public:
  MaxBatchSearch(const MaxBatchOptions& options, int64_t memory_bytes)
      : options_(options), memory_bytes_(memory_bytes), model_options_(ToModelOptions(options.zoo)),
        optimizer_(ToOptimizer(options.zoo)) {
    settings_ = options.solver;
    settings_.progress = false;
    begin_ = std::chrono::steady_clock::now();
  }

  // Seconds left of --total-time-limit (infinity without one).
  double TotalLeft() const {
    if (options_.total_time_limit_s <= 0) return std::numeric_limits<double>::infinity();
    return options_.total_time_limit_s -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  }

  BatchCase& Case(int64_t batch) {
    auto found = cases_.find(batch);
    if (found != cases_.end()) return *found->second;
    auto c = std::make_unique<BatchCase>();
    c->batch = batch;
    ModelOptions model_options = model_options_;
    model_options.batch = batch;
    BuiltModel built = BuildModel(options_.zoo.model, model_options);
    c->graph = std::make_unique<Graph>(BuildTrainingGraph(built.forward));
    c->fixed = ComputeFixedMemory(built.info, optimizer_);
    c->budget_bytes = ActivationBudgetBytes(memory_bytes_, c->fixed);
    c->min_peak_bytes = MinimumPeakLowerBound(*c->graph);
    c->total_cost = c->graph->total_cost();
    double forward_cost = 0;
    for (const Node& node : c->graph->nodes()) {
      if (node.kind == NodeKind::kForward) forward_cost += node.cost;
    }
    // The paper's cap: one extra forward pass on top of the no-remat step.
    c->cost_cap = options_.max_overhead > 0 ? options_.max_overhead * c->total_cost
                                            : c->total_cost + forward_cost;
    return *cases_.emplace(batch, std::move(c)).first->second;
  }

  Probe Run(const std::string& strategy, int64_t batch) {
    BatchCase& c = Case(batch);
    Probe probe{.batch = batch, .budget_bytes = c.budget_bytes,
                .fixed_bytes = c.fixed.total_bytes()};
    if (c.budget_bytes <= 0) {
      probe.reason = fmt::format("the fixed memory {} fills the device", FormatBytes(probe.fixed_bytes));
      probe.no_schedule_can_fit = true;
      return probe;
    }
    if (c.budget_bytes < c.min_peak_bytes) {
      probe.no_schedule_can_fit = true;
      probe.reason = fmt::format("budget {} is below the minimum peak {}",
                                 FormatBytes(c.budget_bytes), FormatBytes(c.min_peak_bytes));
      return probe;
    }
    SolverSettings settings = settings_;  // a probe never outlives the total limit
    settings.time_limit_s = std::max(0.5, std::min(settings.time_limit_s, TotalLeft()));
    settings.decide_at_cost = c.cost_cap * (1 + 1e-12);
    const StrategyRow row = RunStrategy(strategy, *c.graph, c.budget_bytes, settings);
    probe.seconds = row.seconds;
    probe.solver_status = row.solver_status;
    if (row.result) {
      probe.cost = row.result->cost;
      probe.overhead = row.result->cost / c.total_cost;
      probe.peak_bytes = row.result->peak_bytes;
    }
    // A tiny tolerance: costs are sums of doubles and the cap is one.
    const double cap = c.cost_cap * (1 + 1e-12);
    if (row.fits() && row.result->cost <= cap) {
      probe.outcome = Outcome::kFeasible;
      return probe;
    }
    if (row.fits()) {
      probe.reason = fmt::format("overhead {:.3f}x above the cap {:.3f}x", *probe.overhead,
                                 c.cost_cap / c.total_cost);
    } else if (row.result) {
      probe.reason = fmt::format("peak {} over the budget {}", FormatBytes(row.result->peak_bytes),
                                 FormatBytes(c.budget_bytes));
    } else {
      probe.reason = "no schedule (" + row.solver_status + ")";
    }
    if (strategy != "optimal") return probe;  // a heuristic's own verdict

    // Optimal: infeasible only with a proof that no schedule within the cap exists.
    if (row.solver_status == "infeasible") {
      probe.reason = "proven infeasible";
      return probe;
    }
    if (row.own_bound && *row.own_bound > cap) {
      probe.reason += fmt::format("; proven: lower bound {:.3f}x", *row.own_bound / c.total_cost);
      return probe;
    }
    const BestBound best = BestLowerBound(
        *c.graph, c.budget_bytes,
        {.time_limit_s = std::max(0.5, std::min(settings_.time_limit_s, TotalLeft())),
         .threads = settings_.threads});
    if (best.status == SolveStatus::kInfeasible) {
      probe.reason += fmt::format("; proven: {} shows no schedule fits", best.source);
      return probe;
    }
    if (best.cost > cap) {
      probe.reason += fmt::format("; proven: {} bound {:.3f}x", best.source, best.cost / c.total_cost);
      return probe;
    }
    probe.outcome = Outcome::kUndecided;
    probe.reason = fmt::format("undecided: solver {} at the time limit, {}, and no proof that "
                               "none fits",
                               row.solver_status, probe.reason);
    return probe;
  }

  // Exponential then binary search for the largest feasible batch, starting above
  // `known_feasible` (a batch already known to have a schedule, or 0). For optimal, whose
  // feasibility is monotone in the batch, doubling stops at the first failure. A heuristic
  // can fail at one batch and succeed at a larger one (a rounding of a different LP), so its
  // doubling goes on until no schedule of any strategy can fit (the budget is below the
  // minimum peak, or the weights fill the device) and the binary search then runs above the
  // largest power of two that worked.
  StrategySearch Search(const std::string& strategy, int64_t known_feasible, ProgressLine& progress,
                        const std::string& position) {
    StrategySearch search;
    search.strategy = strategy;
    search.seeded_from = known_feasible;
    const auto start = std::chrono::steady_clock::now();
    std::map<int64_t, Probe> by_batch;
    auto probe = [&](int64_t batch) {
      progress.Start(fmt::format("{} at batch {} ({})", strategy, batch, position));
      Probe p = Run(strategy, batch);
      progress.Finish();
      search.probes.push_back(p);
      by_batch[batch] = p;
      return p.outcome == Outcome::kFeasible;
    };
    int64_t lo = std::min(known_feasible, options_.max_batch);
    int64_t hi = 0;  // smallest batch found not feasible; 0: none yet
    int64_t batch = lo > 0 ? std::min(2 * lo, options_.max_batch) : 1;
    if (lo == options_.max_batch) {
      search.limit_reached = true;
    } else {
      const bool monotone = strategy == "optimal";
      while (true) {
        if (TotalLeft() <= 0) {
          search.stopped_at_total_limit = true;
          break;
        }
        if (probe(batch)) {
          lo = batch;
          hi = 0;
        } else if (hi == 0 || batch < hi) {
          hi = batch;
        }
        if (hi > 0 && (monotone || by_batch.at(batch).no_schedule_can_fit)) break;
        if (batch == options_.max_batch) {
          search.limit_reached = hi == 0;
          break;
        }
        batch = std::min(2 * batch, options_.max_batch);
      }
      // The smallest failure above the largest success bounds the binary search.
      if (hi > 0) {
        for (const auto& [b, p] : by_batch) {
          if (b > lo && p.outcome != Outcome::kFeasible) {
            hi = b;
            break;
          }
        }
      }
      while (hi - lo > 1) {
        if (TotalLeft() <= 0) {
          search.stopped_at_total_limit = true;
          break;
        }
        const int64_t mid = lo + (hi - lo) / 2;
        if (probe(mid)) lo = mid;
        else hi = mid;
      }
    }
    search.max_batch = lo;
    if (lo > 0) {
      auto found = by_batch.find(lo);
      search.at_max = found != by_batch.end() ? found->second : Run(strategy, lo);
    }
    if (hi > 0) {
      search.next = by_batch.at(hi);
      search.exact = search.next->outcome == Outcome::kInfeasible;
    }
    // Stopped early, batches between max_batch and the next probe were never tried.
    if (search.stopped_at_total_limit) search.exact = false;
    for (const auto& [b, p] : by_batch) {
      if (b > lo && p.outcome == Outcome::kUndecided) search.uncertified = p;
      if (b > lo && p.outcome == Outcome::kInfeasible && !search.smallest_infeasible) {
        search.smallest_infeasible = b;
      }
    }
    search.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return search;
  }

  const BatchCase& Reference() { return Case(1); }

 private:
  const MaxBatchOptions& options_;
  int64_t memory_bytes_;
  ModelOptions model_options_;
  Optimizer optimizer_;
  SolverSettings settings_;
  std::chrono::steady_clock::time_point begin_;
  std::map<int64_t, std::unique_ptr<BatchCase>> cases_;
};

nlohmann::json ProbeJson(const Probe& p) {
  nlohmann::json j = {{"batch", p.batch},
                      {"activation_budget_bytes", p.budget_bytes},
                      {"fixed_memory_bytes", p.fixed_bytes},
                      {"outcome", OutcomeName(p.outcome)},
                      {"solve_time_s", p.seconds}};
  if (!p.reason.empty()) j["reason"] = p.reason;
  if (!p.solver_status.empty()) j["solver_status"] = p.solver_status;
  if (p.cost) j["cost"] = *p.cost;
  if (p.overhead) j["overhead"] = *p.overhead;
  if (p.peak_bytes) j["peak_bytes"] = *p.peak_bytes;
  return j;
}

std::optional<double> Ratio(const StrategySearch& search, int64_t reference_batch) {
  if (reference_batch <= 0) return std::nullopt;
  return static_cast<double>(search.max_batch) / static_cast<double>(reference_batch);
}

// Why the search stopped: the verdict at max_batch + 1, and for optimal whether it is proven.
std::string StopText(const StrategySearch& s) {
  if (s.limit_reached) return "reached --max-batch";
  const std::string stopped = s.stopped_at_total_limit ? "stopped at --total-time-limit; " : "";
  if (!s.next) return stopped.empty() ? "-" : stopped;
  std::string text = stopped + fmt::format("{}: {}", s.next->batch, s.next->reason);
  if (s.strategy == "optimal") {
    text = (s.exact ? "certified; " : "NOT certified; ") + text;
    if (s.uncertified && s.uncertified->batch != s.next->batch) {
      text += fmt::format("; undecided up to {}", s.uncertified->batch);
    }
    if (!s.exact && s.smallest_infeasible) {
      text += fmt::format("; proven infeasible from {}", *s.smallest_infeasible);
    }
  }
  return text;
}

void WritePlot(const std::vector<StrategySearch>& searches, const std::string& title,
               const std::string& path) {
  std::string data =
      "# columns: index strategy max_batch best_uncertified_batch ratio_vs_checkpoint_all\n"
      "# best_uncertified_batch: the largest batch the solver could neither schedule nor rule out "
      "(NaN: none)\n";
  int64_t reference = 0;
  for (const StrategySearch& s : searches) {
    if (s.strategy == kReference) reference = s.max_batch;
  }
  for (size_t i = 0; i < searches.size(); ++i) {
    const StrategySearch& s = searches[i];
    data += fmt::format("{} {} {} {} {}\n", i, s.strategy, s.max_batch,
                        s.uncertified ? std::to_string(s.uncertified->batch) : "NaN",
                        NumberOrMissing(Ratio(s, reference), "NaN"));
  }
  const bool any_uncertified = std::any_of(searches.begin(), searches.end(),
                                           [](const StrategySearch& s) { return s.uncertified; });
  const std::string commands = fmt::format(
      "set title {}\n"
      "set ylabel 'largest batch that fits'\n"
      "set style fill solid 0.8 border -1\n"
      "set boxwidth 0.7\n"
      "set xtics rotate by -30 nomirror\n"
      "set yrange [0:*]\n"
      "set offsets 0.5, 0.5, graph 0.12, 0\n"
      "set grid ytics\n"
      "set key top left\n"
      "plot {}datafile using 1:3:xtic(2) with boxes lc rgb '#0072B2' title 'largest feasible batch', \\\n"
      "     datafile using 1:3:(sprintf('%d', $3)) with labels offset 0,0.8 notitle\n",
      GnuplotQuote(title),
      any_uncertified
          ? "datafile using 1:4 with boxes fs empty lc rgb '#D55E00' lw 2 dt 2 "
            "title 'undecided up to (solver time limit)', \\\n"
            "     datafile using 1:4:(sprintf('%d?', $4)) with labels tc rgb '#D55E00' "
            "offset 0,0.8 notitle, \\\n     "
          : "");
  RenderPlot({.image_path = path,
              .title = "remat maxbatch: " + title,
              .width_px = 900,
              .height_px = 560,
              .data = data,
              .commands = commands});
}

int64_t ParseMemory(const MaxBatchOptions& options) {
  if (!options.memory_text.empty()) {
    SizeSpec spec;
    try {
      spec = ParseSize(options.memory_text);
    } catch (const std::invalid_argument& error) {
      throw UsageError(fmt::format("--memory: {}", error.what()));
    }
    if (spec.percent) throw UsageError("--memory takes a size (16GiB, 16e9), not a percentage");
    return ResolveSize(spec, 0);
  }
  if (!options.zoo.device.empty()) return DeviceByName(options.zoo.device).memory_bytes;
  throw UsageError("give the device memory with --memory SIZE or --device NAME");
}

void RunMaxBatch(const MaxBatchOptions& options, int& exit_code) {
  if (options.zoo.batch > 0) {
    throw UsageError("maxbatch searches the batch size: leave out --batch");
  }
  if (!options.plot_path.empty()) {
    ImageFormatOf(options.plot_path);
    FindGnuplot();
  }
  const int64_t memory_bytes = ParseMemory(options);
  MaxBatchSearch search(options, memory_bytes);
  const BatchCase& one = search.Reference();
  std::vector<std::string> names = ParseStrategyList(options.strategies, *one.graph);
  const double cap_ratio = one.cost_cap / one.total_cost;

  ProgressLine progress("maxbatch", 0, ProgressWanted(options.quiet));
  // checkpoint-all is the reference of every ratio; baselines run before the solvers so that
  // the optimal search can start from the largest batch a baseline schedule already fits.
  std::vector<StrategySearch> results(names.size());
  std::optional<StrategySearch> reference;
  int64_t best_baseline = 0;
  auto position = [&](size_t i) { return fmt::format("strategy {}/{}", i + 1, names.size()); };
  for (size_t i = 0; i < names.size(); ++i) {
    if (FindBaseline(names[i]) == nullptr) continue;
    results[i] = search.Search(names[i], 0, progress, position(i));
    best_baseline = std::max(best_baseline, results[i].max_batch);
    if (names[i] == kReference) reference = results[i];
  }
  if (!reference) {
    reference = search.Search(kReference, 0, progress, "reference");
    best_baseline = std::max(best_baseline, reference->max_batch);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (FindBaseline(names[i]) != nullptr) continue;
    // The MILP starts from the cheapest fitting baseline, so optimal is feasible wherever a
    // baseline is; approx rounds an LP and has no such guarantee.
    const int64_t seed = names[i] == "optimal" ? best_baseline : 0;
    results[i] = search.Search(names[i], seed, progress, position(i));
  }
  const int64_t reference_batch = reference->max_batch;
  const std::string optimizer = OptimizerName(ToOptimizer(options.zoo));
  const std::string workspace = WorkspaceOptionName(ChosenWorkspaceModel(options.zoo));
  const std::string title = fmt::format("{}: largest batch on {} B ({}), {}", options.zoo.model,
                                        memory_bytes, FormatBytes(memory_bytes), optimizer);

  if (options.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const StrategySearch& s : results) {
      nlohmann::json probes = nlohmann::json::array();
      for (const Probe& p : s.probes) probes.push_back(ProbeJson(p));
      const auto ratio = Ratio(s, reference_batch);
      rows.push_back(
          {{"strategy", s.strategy},
           {"max_batch", s.max_batch},
           {"certified", s.strategy == "optimal" ? nlohmann::json(s.exact && !s.limit_reached)
                                                 : nlohmann::json(nullptr)},
           {"next_batch", s.next ? ProbeJson(*s.next) : nlohmann::json(nullptr)},
           {"limit_reached", s.limit_reached},
           {"stopped_at_total_limit", s.stopped_at_total_limit},
           {"ratio_vs_checkpoint_all", ratio ? nlohmann::json(*ratio) : nlohmann::json(nullptr)},
           {"at_max", s.at_max ? ProbeJson(*s.at_max) : nlohmann::json(nullptr)},
           {"best_uncertified", s.uncertified ? ProbeJson(*s.uncertified) : nlohmann::json(nullptr)},
           {"smallest_infeasible_batch", s.smallest_infeasible
                                             ? nlohmann::json(*s.smallest_infeasible)
                                             : nlohmann::json(nullptr)},
           {"search_started_above", s.seeded_from},
           {"probes", probes},
           {"time_s", s.seconds}});
    }
    const nlohmann::json doc = {
        {"schema", "remat.maxbatch/1"},
        {"model", options.zoo.model},
        {"graph_at_batch_1", GraphSummaryJson(*one.graph)},
        {"device_memory_bytes", memory_bytes},
        {"optimizer", optimizer},
        {"workspace", workspace},
        {"overhead_cap", cap_ratio},
        {"overhead_cap_rule", options.max_overhead > 0 ? "--max-overhead"
                                                        : "one extra forward pass"},
        {"max_batch_limit", options.max_batch},
        {"checkpoint_all_max_batch", reference_batch},
        {"solver", SolverSettingsJson(options.solver)},
        {"results", rows}};
    fmt::print("{}\n", doc.dump(2));
  } else {
    fmt::print("model: {}; device memory {} ({} B); optimizer {}; workspace {}\n",
               one.graph->name(), FormatBytes(memory_bytes), memory_bytes, optimizer, workspace);
    fmt::print("fixed memory at batch 1: {} (parameters, gradients, optimizer state; the input "
               "adds {} per sample)\n",
               FormatBytes(one.fixed.total_bytes()), FormatBytes(one.fixed.input_bytes));
    fmt::print("a schedule counts when its cost is at most {:.3f}x the no-remat cost ({}); "
               "time limit {:g} s per solver run\n\n",
               cap_ratio, options.max_overhead > 0 ? "--max-overhead" : "one extra forward pass",
               options.solver.time_limit_s);
    std::vector<std::vector<std::string>> table;
    for (const StrategySearch& s : results) {
      const auto ratio = Ratio(s, reference_batch);
      table.push_back(
          {s.strategy, std::to_string(s.max_batch) + (s.limit_reached ? "+" : ""),
           ratio ? fmt::format("{:.2f}x", *ratio) : "-",
           s.at_max ? FormatBytes(s.at_max->budget_bytes) : "-",
           s.at_max && s.at_max->peak_bytes ? FormatBytes(*s.at_max->peak_bytes) : "-",
           s.at_max && s.at_max->overhead ? fmt::format("{:.3f}x", *s.at_max->overhead) : "-",
           std::to_string(s.probes.size()), fmt::format("{:.1f}", s.seconds), StopText(s)});
    }
    fmt::print("{}", FormatTable({"strategy", "max batch", "vs checkpoint-all", "activation budget",
                                  "peak", "overhead", "probes", "time s", "next batch fails"},
                                 table));
  }
  if (!options.plot_path.empty()) {
    WritePlot(results, title, options.plot_path);
    if (!options.json) {
      const PlotFiles files = PlotFilesFor(options.plot_path);
      fmt::print("\nplot written to {} (data {}, script {})\n", files.image, files.data, files.script);
    }
  }
  const bool any = std::any_of(results.begin(), results.end(),
                               [](const StrategySearch& s) { return s.max_batch > 0; });
  exit_code = any ? kExitOk : kExitNoFeasibleSchedule;
}

}  // namespace

void AddMaxBatchCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<MaxBatchOptions>();
  CLI::App* command = app.add_subcommand(
      "maxbatch", "the largest batch each strategy fits on a device (paper figure 6)");
  command->add_option("--model", options->zoo.model, "zoo model (remat zoo list)")->required();
  AddZooModelOptions(*command, options->zoo);
  AddWorkspaceOption(*command, options->zoo.workspace, kZooWorkspaceDefault);
  command->add_option("--memory", options->memory_text,
                      "device memory (16GiB, 16e9); or --device NAME for a preset's capacity");
  command->add_option("--strategies,--strategy", options->strategies,
                      "strategy names, comma-separated, or 'all' (default)");
  command->add_option("--max-overhead", options->max_overhead,
                      "count a schedule only if cost <= X times the no-remat cost (default: "
                      "one extra forward pass, the paper's cap)")
      ->check(FiniteRange(1.0, 1e6));
  command->add_option("--max-batch", options->max_batch,
                      "stop the search at this batch (default 65536)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  command->add_option("--total-time-limit", options->total_time_limit_s,
                      "seconds for the whole command: probes get at most what is left, and the "
                      "search reports what it knows when it runs out (default: none)")
      ->check(FiniteRange(0.001, 1e7));
  AddSolverSettingOptions(*command, options->solver);
  command->add_flag("--json", options->json, "machine-readable output (remat.maxbatch/1)");
  command->add_option("--plot", options->plot_path,
                      "bar chart of the batches to FILE.svg or FILE.png (with FILE.dat, FILE.gp)");
  command->add_flag("--quiet", options->quiet, "no progress line on stderr");
  command->callback([options, &exit_code] { RunMaxBatch(*options, exit_code); });
}

}  // namespace remat
