// The bar chart of `remat maxbatch`.
#include "cli/maxbatch_plot.h"

#include <algorithm>

#include <fmt/format.h>

#include "cli/planning_options.h"

namespace remat {
namespace {

// A label runs up the bar's slot; longer reasons are cut where the plot would cut them.
constexpr size_t kMaxReasonChars = 70;

}  // namespace

std::string ZeroBarReason(const StrategySearch& search) {
  if (!search.next) {
    return search.stopped_at_total_limit ? "not tried: --total-time-limit spent"
                                         : "no batch was tried";
  }
  // The first clause says what failed; what follows (proofs, solver details) is in the table.
  std::string reason = search.next->reason.substr(0, search.next->reason.find(';'));
  if (reason.empty()) reason = "no schedule";
  std::string text = fmt::format("batch {}: {}", search.next->batch, reason);
  if (text.size() > kMaxReasonChars) text = text.substr(0, kMaxReasonChars - 3) + "...";
  return text;
}

PlotSpec MaxBatchPlot(const MaxBatchReport& report, const std::string& title,
                      const std::string& image_path) {
  const std::vector<StrategySearch>& searches = report.results;
  std::string data =
      "# columns: index strategy max_batch best_uncertified_batch ratio_vs_checkpoint_all\n"
      "# best_uncertified_batch: the largest batch the solver could neither schedule nor rule out "
      "(NaN: none)\n";
  std::string zero_labels;  // the reason beside each empty bar, rising from the axis
  int64_t tallest = 0;
  for (size_t i = 0; i < searches.size(); ++i) {
    const StrategySearch& s = searches[i];
    data += fmt::format("{} {} {} {} {}\n", i, s.strategy, s.max_batch,
                        s.uncertified ? std::to_string(s.uncertified->batch) : "NaN",
                        NumberOrMissing(report.Ratio(s), "NaN"));
    tallest = std::max({tallest, s.max_batch, s.uncertified ? s.uncertified->batch : 0});
    if (s.max_batch == 0) {
      zero_labels += fmt::format(
          "set label {} {} at first {}, first 0 rotate by 90 left offset 0.3, 2 tc rgb '#B22222' "
          "front\n",
          i + 1, GnuplotQuote(ZeroBarReason(s)), i);
    }
  }
  const bool any_uncertified = std::any_of(searches.begin(), searches.end(),
                                           [](const StrategySearch& s) { return s.uncertified; });
  const std::string commands = fmt::format(
      "set title {}\n"
      "set ylabel 'largest batch that fits'\n"
      "set style fill solid 0.8 border -1\n"
      "set boxwidth 0.7\n"
      "set xtics rotate by -30 nomirror\n"
      // Without a bar above 0 gnuplot has no height to scale to.
      "{}"
      "set offsets 0.5, 0.5, graph 0.12, 0\n"
      "set grid ytics\n"
      "set key top left\n"
      "{}"
      "plot {}datafile using 1:3:xtic(2) with boxes lc rgb '#0072B2' title 'largest feasible batch', \\\n"
      "     datafile using 1:3:(sprintf('%d', $3)) with labels offset 0,0.8 notitle\n",
      GnuplotQuote(title), tallest > 0 ? "set yrange [0:*]\n" : "set yrange [0:1]\nset ytics 1\n",
      zero_labels,
      any_uncertified
          ? "datafile using 1:4 with boxes fs empty lc rgb '#D55E00' lw 2 dt 2 "
            "title 'undecided up to (solver time limit)', \\\n"
            "     datafile using 1:4:(sprintf('%d?', $4)) with labels tc rgb '#D55E00' "
            "offset 0,0.8 notitle, \\\n     "
          : "");
  return {.image_path = image_path,
          .title = "remat maxbatch: " + title,
          .width_px = 900,
          .height_px = 560,
          .data = data,
          .commands = commands};
}

}  // namespace remat
