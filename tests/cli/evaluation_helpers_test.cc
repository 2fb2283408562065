// The pieces behind the evaluation verbs: plot file names, byte units, gnuplot quoting and the
// progress line's text (budget grids: tests/planning/budget_sweep_test.cc).
#include <gtest/gtest.h>

#include "cli/gnuplot.h"
#include "cli/output.h"
#include "cli/progress.h"

namespace remat {
namespace {

TEST(PlotFilesTest, DataAndScriptReplaceTheExtension) {
  const PlotFiles files = PlotFilesFor("out/dir/sweep.svg");
  EXPECT_EQ(files.image, "out/dir/sweep.svg");
  EXPECT_EQ(files.data, "out/dir/sweep.dat");
  EXPECT_EQ(files.script, "out/dir/sweep.gp");
  EXPECT_EQ(ImageFormatOf("a.PNG"), ImageFormat::kPng);
  EXPECT_EQ(ImageFormatOf("a.svg"), ImageFormat::kSvg);
  EXPECT_ANY_THROW(ImageFormatOf("a.pdf"));
  EXPECT_ANY_THROW(ImageFormatOf("svg"));
}

TEST(ByteUnitTest, LargestBinaryUnitAtOrBelowTheValue) {
  EXPECT_EQ(ByteUnitFor(10).name, "B");
  EXPECT_EQ(ByteUnitFor(1023).name, "B");
  EXPECT_EQ(ByteUnitFor(1024).name, "KiB");
  EXPECT_EQ(ByteUnitFor(16'000'000'000).name, "GiB");  // 14.9 GiB
  EXPECT_DOUBLE_EQ(ByteUnitFor(16'000'000'000).bytes, 1073741824.0);
}

TEST(GnuplotQuoteTest, DoublesSingleQuotesAndDropsNewlines) {
  EXPECT_EQ(GnuplotQuote("it's"), "'it''s'");
  EXPECT_EQ(GnuplotQuote("a\nb"), "'a b'");
}

TEST(ProgressTest, DurationsReadNaturally) {
  EXPECT_EQ(FormatDuration(0.42), "0.4 s");
  EXPECT_EQ(FormatDuration(59.94), "59.9 s");
  EXPECT_EQ(FormatDuration(245), "4m 05s");
  EXPECT_EQ(FormatDuration(7380), "2h 03m");
  EXPECT_EQ(FormatDuration(-1), "?");
}

TEST(ProgressTest, LineShowsWorkCountsElapsedAndEta) {
  // 3 of 12 items in 30 s: 10 s each, 9 left, so 90 s to go.
  EXPECT_EQ(FormatProgressLine("sweep", "optimal at 10 B", 3, 12, 30.0),
            "[sweep] 3/12  optimal at 10 B  elapsed 30.0 s  ETA 1m 30s");
  // Before the first item finishes there is no estimate.
  EXPECT_EQ(FormatProgressLine("sweep", "", 0, 12, 1.0), "[sweep] 0/12  elapsed 1.0 s  ETA ?");
  // A search does not know its total: no ETA.
  EXPECT_EQ(FormatProgressLine("maxbatch", "optimal at batch 64", 7, 0, 5.0),
            "[maxbatch] 7 done  optimal at batch 64  elapsed 5.0 s");
}

// Human output stays within 120 columns (issue 24): long sentences wrap at spaces.
TEST(WrapTextTest, BreaksAtSpacesWithinTheWidthAndIndentsTheRest) {
  EXPECT_EQ(WrapText("a b c", 80, "", "  "), "a b c\n");
  EXPECT_EQ(WrapText("aaa bbb ccc", 7, "", "  "), "aaa bbb\n  ccc\n");
  EXPECT_EQ(WrapText("one two", 6, "- ", "  "), "- one\n  two\n");
  // A word longer than the width gets a line of its own rather than being cut.
  EXPECT_EQ(WrapText("x averyveryverylongword y", 8, "", ""), "x\naveryveryverylongword\ny\n");
  std::string sentence;
  for (int i = 0; i < 100; ++i) sentence += "word" + std::to_string(i) + " ";
  const std::string wrapped = WrapText(sentence, kTextWidth, "  ", "    ");
  size_t start = 0;
  while (start < wrapped.size()) {
    const size_t end = wrapped.find('\n', start);
    EXPECT_LE(end - start, kTextWidth);
    start = end + 1;
  }
}

// A table wider than the screen (a sweep's summary over every strategy) is split into tables
// that each repeat the key columns.
TEST(FormatTableWithinTest, SplitsWideTablesRepeatingTheKeyColumns) {
  const std::vector<std::string> header = {"key", "aaaa", "bbbb", "cccc"};
  const std::vector<std::vector<std::string>> rows = {{"k1", "1", "2", "3"}};
  EXPECT_EQ(FormatTableWithin(header, rows, 80, 1), FormatTable(header, rows));
  // "key  aaaa  bbbb" is 15 columns: the third value column goes to a second table.
  EXPECT_EQ(FormatTableWithin(header, rows, 15, 1),
            FormatTable({"key", "aaaa", "bbbb"}, {{"k1", "1", "2"}}) + "\n" +
                FormatTable({"key", "cccc"}, {{"k1", "3"}}));
  // A column wider than the width still gets a table of its own.
  EXPECT_EQ(FormatTableWithin(header, rows, 4, 1),
            FormatTable({"key", "aaaa"}, {{"k1", "1"}}) + "\n" +
                FormatTable({"key", "bbbb"}, {{"k1", "2"}}) + "\n" +
                FormatTable({"key", "cccc"}, {{"k1", "3"}}));
}

}  // namespace
}  // namespace remat
