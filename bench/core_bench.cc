// Speed of the core pipeline (R from S, plan, simulate) and of the baselines. The baseline
// for ratios is BM_ScanSchedule: one pass over the R and S bits, the least work any consumer
// of a schedule must do. Run: build/bench/remat_bench (see docs/BENCHMARKS.md).
#include <benchmark/benchmark.h>

#include "core/plan.h"
#include "core/recompute.h"
#include "core/simulator.h"
#include "core/training_graph.h"
#include "strategies/checkpoint_all.h"
#include "strategies/checkpoints.h"
#include "strategies/chen.h"
#include "strategies/griewank.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

constexpr int64_t kNoLimit = int64_t{1} << 60;

Graph BenchGraph(int64_t layers) {
  return testing::RandomTrainingGraph(42, static_cast<int32_t>(layers));
}

Schedule SqrtSchedule(const Graph& g) {
  return ChenSqrtN(g, kNoLimit, CandidateSet::kLinearized).schedule;
}

void BM_ScanSchedule(benchmark::State& state) {
  const Graph g = BenchGraph(state.range(0));
  const Schedule s = SqrtSchedule(g);
  // One visit of every run of R and S: the least work any user of a schedule does.
  for (auto _ : state) {
    int64_t ones = 0;
    for (int32_t c = 0; c < s.stages(); ++c) {
      for (const StageMatrix* m : {&s.R, &s.S}) {
        for (const StageRun& run : m->Runs(c)) ones += run.last - run.first + 1;
      }
    }
    benchmark::DoNotOptimize(ones);
  }
}

void BM_ScheduleFromCheckpoints(benchmark::State& state) {
  const Graph g = BenchGraph(state.range(0));
  const StageMatrix S = SqrtSchedule(g).S;
  for (auto _ : state) benchmark::DoNotOptimize(ScheduleFromCheckpoints(g, S));
}

void BM_BuildPlan(benchmark::State& state) {
  const Graph g = BenchGraph(state.range(0));
  const Schedule s = SqrtSchedule(g);
  for (auto _ : state) benchmark::DoNotOptimize(BuildPlan(g, s));
}

void BM_Simulate(benchmark::State& state) {
  const Graph g = BenchGraph(state.range(0));
  const Plan plan = BuildPlan(g, SqrtSchedule(g));
  for (auto _ : state) benchmark::DoNotOptimize(Simulate(g, plan));
}

void BM_CheckSchedule(benchmark::State& state) {
  const Graph g = BenchGraph(state.range(0));
  const Schedule s = SqrtSchedule(g);
  for (auto _ : state) benchmark::DoNotOptimize(CheckSchedule(g, s));
}

void BM_ChenGreedy(benchmark::State& state) {
  const Graph g = BenchGraph(state.range(0));
  const int64_t budget = CheckpointAll(g, kNoLimit).peak_bytes / 2;
  for (auto _ : state) benchmark::DoNotOptimize(ChenGreedy(g, budget, CandidateSet::kLinearized));
}

void BM_GriewankSweep(benchmark::State& state) {
  const Graph g = BenchGraph(state.range(0));
  const int64_t budget = CheckpointAll(g, kNoLimit).peak_bytes / 2;
  for (auto _ : state) benchmark::DoNotOptimize(Griewank(g, budget));
}

BENCHMARK(BM_ScanSchedule)->Arg(100)->Arg(500)->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScheduleFromCheckpoints)->Arg(100)->Arg(500)->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildPlan)->Arg(100)->Arg(500)->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Simulate)->Arg(100)->Arg(500)->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CheckSchedule)->Arg(100)->Arg(500)->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChenGreedy)->Arg(100)->Arg(500)->Arg(2000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GriewankSweep)->Arg(100)->Arg(500)->Arg(2000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace remat

BENCHMARK_MAIN();
