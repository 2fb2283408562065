// MILP solves on CBC's full driver (CbcMain0/CbcMain1): the same presolve, cut generators and
// heuristics as the cbc program, with elapsed-time limits, a MIP start and progress events.
#include "solvers/cbc_in_process.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <OsiClpSolverInterface.hpp>

#include "solvers/clp_arrays.h"
#include "solvers/stdout_to_stderr.h"

namespace remat {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Why the event handler stopped the search, when it did (shared by CBC's clones of it).
struct StopCause {
  std::string why;
  double last_incumbent = std::numeric_limits<double>::infinity();
  double last_progress_s = 0;  // when an incumbent came or the gap last narrowed by a tenth
  double gap_at_progress = std::numeric_limits<double>::infinity();
};

// Reports progress about once a second, passes on every incumbent of the original problem
// (not of a preprocessed copy) and stops the search when the wall clock runs past the limit,
// when an incumbent or the bound meets the caller's target, or when patience runs out.
class ProgressHandler : public CbcEventHandler {
 public:
  ProgressHandler(const MipOptions& options, Clock::time_point start, int32_t columns,
                  const SolutionSink& sink, StopCause* cause)
      : options_(options), start_(start), columns_(columns), sink_(sink), cause_(cause) {}
  ProgressHandler(const ProgressHandler&) = default;
  CbcEventHandler* clone() const override { return new ProgressHandler(*this); }

  CbcAction event(CbcEvent event) override {
    const double elapsed = Since(start_);
    if ((event == solution || event == heuristicSolution) && sink_ &&
        model_->bestSolution() != nullptr && model_->getNumCols() == columns_) {
      sink_(model_->getObjValue(), model_->bestSolution(), columns_);
    }
    if (options_.progress && elapsed >= next_report_s_) {
      next_report_s_ = elapsed + 1.0;
      SolverProgress progress;
      progress.elapsed_s = elapsed;
      if (model_->bestSolution() != nullptr) progress.incumbent = model_->getObjValue();
      progress.bound = model_->getBestPossibleObjValue();
      progress.nodes = model_->getNodeCount();
      options_.progress(progress);
    }
    if (elapsed > options_.time_limit_s * 1.2 + 5) return Stop("the time limit");
    const bool has_incumbent = model_->bestSolution() != nullptr;
    const double incumbent = has_incumbent ? model_->getObjValue()
                                           : std::numeric_limits<double>::infinity();
    // Before the branch and bound starts, CBC's best possible value is not a bound (its initial
    // huge number, or the incumbent's value while root heuristics run: seen stopping the
    // absence-gap bound at its root LP): only a bound of the search, below the incumbent, may
    // stop it.
    const double raw_bound = model_->getBestPossibleObjValue();
    const bool has_bound = model_->getNodeCount() > 0 && std::isfinite(raw_bound) &&
                           std::fabs(raw_bound) < 1e100 && raw_bound < incumbent;
    const double bound = has_bound ? raw_bound : -std::numeric_limits<double>::infinity();
    if (has_incumbent && incumbent <= options_.stop_at_objective) {
      return Stop("a solution meets the lower bound known beforehand");
    }
    if (has_bound && bound >= options_.stop_at_bound) return Stop("its bound reached the target");
    if (options_.patience_s > 0) {
      const double gap = has_incumbent && has_bound
                             ? (incumbent - bound) / std::max(1.0, std::fabs(incumbent))
                             : std::numeric_limits<double>::infinity();
      if (incumbent < cause_->last_incumbent || gap < 0.9 * cause_->gap_at_progress) {
        cause_->last_incumbent = incumbent;
        cause_->gap_at_progress = gap;
        cause_->last_progress_s = elapsed;
      } else if (elapsed - cause_->last_progress_s > options_.patience_s) {
        return Stop(fmt::format("no progress in {:.0f} s", options_.patience_s));
      }
    }
    return noAction;
  }

 private:
  const MipOptions& options_;
  Clock::time_point start_;
  int32_t columns_;
  const SolutionSink& sink_;
  StopCause* cause_;
  double next_report_s_ = 1.0;

  CbcAction Stop(const std::string& why) {
    if (cause_->why.empty()) cause_->why = why;
    return stop;
  }
};

std::string Number(double value) { return std::to_string(value); }

}  // namespace

SolverOutput SolveMipWithCbcInProcess(const LinearModel& model, const std::vector<double>& start,
                                      const MipOptions& options, const SolutionSink& sink) {
  const auto begin = Clock::now();
  SolverOutput out;
  const StdoutToStderr redirect;
  try {
    const CoinArrays arrays = ToCoin(model);
    OsiClpSolverInterface solver;
    solver.loadProblem(arrays.matrix, arrays.column_lower.data(), arrays.column_upper.data(),
                       arrays.objective.data(), arrays.row_lower.data(), arrays.row_upper.data());
    const int32_t columns = model.num_columns();
    std::vector<int> priorities;
    for (int32_t c = 0; c < columns; ++c) {
      if (model.columns()[c].integer) solver.setInteger(c);
    }
    solver.messageHandler()->setLogLevel(0);
    CbcModel cbc(solver);
    cbc.messageHandler()->setLogLevel(options.verbose ? 1 : 0);
    // Column names are needed only to match the MIP start.
    if (!start.empty()) {
      std::vector<std::pair<std::string, double>> mip_start;
      mip_start.reserve(static_cast<size_t>(columns));
      for (int32_t c = 0; c < columns; ++c) {
        const std::string name = "c" + std::to_string(c);
        cbc.solver()->setColName(c, name);
        if (model.columns()[c].integer) mip_start.emplace_back(name, std::round(start[c]));
      }
      cbc.setMIPStart(mip_start);
    }
    // Branch on the highest-priority integers first (S before R).
    cbc.findIntegers(false);
    {
      std::vector<int> order;
      for (int32_t c = 0; c < columns; ++c) {
        if (model.columns()[c].integer) order.push_back(std::max(1, model.columns()[c].priority));
      }
      if (!order.empty()) cbc.passInPriorities(order.data(), false);
    }
    StopCause cause;
    ProgressHandler handler(options, begin, columns, sink, &cause);
    cbc.passInEventHandler(&handler);
    CbcSolverUsefulData data;
    CbcMain0(cbc, data);
    const std::vector<std::string> args = {
        "remat",
        "-log", options.verbose ? "1" : "0",
        "-timeMode", "elapsed",
        "-seconds", Number(options.time_limit_s),
        "-threads", std::to_string(options.threads),
        "-ratioGap", Number(options.relative_gap),
        "-randomCbcSeed", std::to_string(options.seed),
        "-randomSeed", std::to_string(options.seed),
        "-feasibilityPump", start.empty() ? "on" : "off",
        // CBC 2.10.8 crashes in CglPreProcess::postProcess when a search that started from a
        // MIP start stops at the time limit (seen on U-Net at 50%): no preprocessing then.
        "-preprocess", start.empty() ? "on" : "off",
        "-solve",
        "-quit"};
    std::vector<const char*> argv;
    for (const std::string& arg : args) argv.push_back(arg.c_str());
    CbcMain1(static_cast<int>(argv.size()), argv.data(), cbc, [](CbcModel*, int) { return 0; },
             data);
    out.seconds = Since(begin);
    out.nodes = cbc.getNodeCount();
    out.bound = cbc.getBestPossibleObjValue();
    const bool has_solution = cbc.bestSolution() != nullptr;
    if (has_solution) {
      out.values.assign(cbc.bestSolution(), cbc.bestSolution() + columns);
      out.objective = cbc.getObjValue();
    }
    if (cbc.isProvenOptimal() && has_solution) {
      out.status = SolveStatus::kOptimal;
      // CBC may stop on the gap tolerance: keep the bound it proved, not the incumbent.
    } else if (cbc.isProvenInfeasible()) {
      out.status = SolveStatus::kInfeasible;
    } else if (has_solution) {
      out.status = SolveStatus::kFeasible;
      out.message = "stopped: " + (cause.why.empty() ? std::string("the time limit") : cause.why);
    } else if (cbc.isSecondsLimitReached() || cbc.status() == 1) {
      out.status = SolveStatus::kTimeLimitNoSolution;
      out.message = cause.why.empty() || cause.why == "the time limit"
                        ? "no solution within the time limit"
                        : "stopped without a solution: " + cause.why;
    } else {
      out.status = SolveStatus::kError;
      out.message = "CBC status " + std::to_string(cbc.status()) + ", secondary " +
                    std::to_string(cbc.secondaryStatus());
    }
  } catch (const std::bad_alloc&) {
    out.status = SolveStatus::kError;
    out.message = "out of memory building or solving the MILP";
  } catch (const CoinError& error) {
    out.status = SolveStatus::kError;
    out.message = "CBC error: " + error.message();
  }
  return out;
}

}  // namespace remat
