// README.md's and docs/engines.md's deterministic figures (estimates, plans, layouts, search steps) are what
// the commands their markers name print today (e2e/doc_figures.h says how a marker reads).
#include "e2e/doc_figures.h"

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace realign::testing {
namespace {

std::string run(const std::string& args) { return run_realign_in(REALIGN_SOURCE_DIR, REALIGN_BINARY, args); }

void expect_figures_printed(const std::string& file, size_t at_least) {
  const std::string text = read_file(std::string(REALIGN_SOURCE_DIR) + "/" + file);
  const auto checks = check_figures(file, text, run);
  EXPECT_GE(checks.size(), at_least) << file << ": figure markers lost";
  for (const FigureCheck& c : checks)
    EXPECT_TRUE(c.ok) << describe(c) << "\n(scripts/doc-figures.sh --write puts the printed figures in)";
}

TEST(DocFigures, ReadmeQuotesWhatItsCommandsPrint) { expect_figures_printed("README.md", 10); }

TEST(DocFigures, EnginesDocQuotesWhatItsCommandsPrint) { expect_figures_printed("docs/engines.md", 5); }

// The checker itself, against a fixed output: a figure changed in the text or in the output is named with the
// marker's line, what the text quotes and what the command prints, and --write's rewrite puts the printed one
// in.
const std::string kOutput =
    "plan: searched in 664 ms (200000 steps, the best plan found at step 88340)\n"
    "iteration time: 52.41 s (fits in memory)\n"
    "{\"iteration_time_s\": 238.5377, \"generation\": {\"generation_s\": 200.685}}\n";

std::string fixed(const std::string&) { return kOutput; }

TEST(DocFigures, AFigureTheCommandNoLongerPrintsIsNamed) {
  const std::string text =
      "Intro.\n\n<!-- figure: plan x.yaml | iteration time: [52.40] s -->\nThe step takes 52.40 "
      "s.\n\nMore.\n";
  const auto checks = check_figures("doc.md", text, fixed);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(checks[0].ok);
  EXPECT_EQ(describe(checks[0]),
            "doc.md:3: realign plan x.yaml: 'iteration time: [52.40] s': expected 'iteration time: 52.40 s', "
            "printed 'iteration time: 52.41 s (fits in memory)'");
  EXPECT_EQ(rewrite_figures(text, checks),
            "Intro.\n\n<!-- figure: plan x.yaml | iteration time: [52.41] s -->\nThe step takes 52.41 "
            "s.\n\nMore.\n");
}

TEST(DocFigures, AFigureTheTextNoLongerQuotesIsNamed) {
  // The marker's figure is printed, but the paragraph after it says another (the paragraph wraps its words).
  const std::string text =
      "<!-- figure: plan x.yaml | iteration time: [52.41] s |\n  the best plan found at step [88340] -->\n"
      "The step takes\n52.14 s, found at step 88340.\n\nThe next paragraph quotes 52.41 s.\n";
  const auto checks = check_figures("doc.md", text, fixed);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_FALSE(checks[0].ok);
  EXPECT_EQ(checks[0].problem, "'52.41' is not quoted in the text after the marker");
  EXPECT_TRUE(checks[1].ok) << describe(checks[1]);
}

TEST(DocFigures, JsonFieldsCompareAtTheDecimalsWritten) {
  const std::string text =
      "<!-- figure: plan q.yaml --json | $.iteration_time_s = 238.5 | $.generation.generation_s = 200.6 -->\n"
      "| own plan | 238.5 |\n| generation | 200.6 |\n";
  const auto checks = check_figures("doc.md", text, fixed);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_TRUE(checks[0].ok) << describe(checks[0]);
  EXPECT_FALSE(checks[1].ok);
  EXPECT_EQ(checks[1].problem, "expected generation.generation_s = 200.6, printed 200.7 (200.685)");
  EXPECT_EQ(
      rewrite_figures(text, checks),
      "<!-- figure: plan q.yaml --json | $.iteration_time_s = 238.5 | $.generation.generation_s = 200.7 -->\n"
      "| own plan | 238.5 |\n| generation | 200.7 |\n");
}

TEST(DocFigures, StackedMarkersShareTheBlockAfterThemAndEmptyBracketsQuoteNothing) {
  // Markers stacked before a table each cover the table; no marker's text counts as a quote of another's.
  const std::string text =
      "<!-- figure: plan x.yaml | iteration time: [52.41] s -->\n"
      "<!-- figure: plan y.yaml | 200000 steps, the best plan[] | 88340 -->\n"
      "| a | 52.41 |\n| b | 88340 |\n";
  const auto checks = check_figures("doc.md", text, fixed);
  ASSERT_EQ(checks.size(), 3u);
  for (const FigureCheck& c : checks) EXPECT_TRUE(c.ok) << describe(c);
  const std::string unquoted =
      "<!-- figure: plan x.yaml | iteration time: [52.41] s -->\n<!-- figure: plan y.yaml | 88340 -->\n| a "
      "|\n";
  const auto failed = check_figures("doc.md", unquoted, fixed);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_FALSE(failed[0].ok);
  EXPECT_FALSE(failed[1].ok);
}

TEST(DocFigures, EachCommandRunsOnce) {
  int runs = 0;
  const std::string text =
      "<!-- figure: plan x.yaml | iteration time: [52.41] s -->\n52.41\n\n"
      "<!-- figure: plan x.yaml | 200000 steps -->\n200000 steps\n";
  const auto checks = check_figures("doc.md", text, [&](const std::string&) {
    ++runs;
    return kOutput;
  });
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(checks[0].ok && checks[1].ok);
}

TEST(DocFigures, AMarkerQuotedInASentenceIsNone) {
  EXPECT_TRUE(find_figure_markers("Each figure sits under a `<!-- figure: ... -->` marker.\n").empty());
  EXPECT_EQ(find_figure_markers("text\n  <!-- figure: plan x.yaml | 1 -->\n1\n").size(), 1u);
}

}  // namespace
}  // namespace realign::testing
