// The figures README.md and docs/*.md quote from a command's deterministic output, each under a marker naming
// the command, checked against what the command prints now (and rewritten by `realign_doc_figures --write`).
//
// A marker is an HTML comment (hidden where the Markdown is rendered) starting a line, one or several lines:
//   <!-- figure: ARGS | ITEM | ITEM ... -->
// ARGS are the arguments of `realign`, run from the repository's root (no shell quoting: words split at
// spaces). The block a marker covers is the text after it up to the next blank line (a paragraph, a table,
// the rest of a paragraph when the marker stands inside it). Each ITEM is one of
//   printed text                 printed as written, and quoted as written in the block;
//   label [value] more text      printed as written without the brackets; the block quotes each [value]
//                                (an empty [] quotes nothing: the text is checked as printed only);
//   $.a.b = 12.5                 the command prints JSON (--json) whose field a.b, rounded to the decimals
//                                written, is 12.5; the block quotes 12.5.
// Whitespace runs (line breaks included) compare as one space.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace realign::testing {

struct FigureMarker {
  int line = 0;      // 1-based line of the marker's start in its file
  std::string args;  // the command's arguments
  std::vector<std::string> items;
  size_t begin = 0, end = 0;              // the marker's bytes in the file
  size_t block_begin = 0, block_end = 0;  // the block it covers
};

// One item's check: ok, or what the block or the output has instead.
struct FigureCheck {
  std::string file;
  int line = 0;
  std::string args;
  std::string item;
  bool ok = false;
  std::string problem;  // what is wrong: "printed: ..." or "not quoted in the text after the marker"
  std::vector<std::pair<std::string, std::string>> rewrites;  // old value -> printed value, where known
  std::string new_item;                                       // the item with the printed values, where known
};

// Every marker of a Markdown text, in order; throws std::runtime_error on a marker it cannot read.
std::vector<FigureMarker> find_figure_markers(const std::string& text);

// Runs `realign ARGS` (from the repository's root) and returns what it printed, stdout and stderr together.
using FigureCommand = std::function<std::string(const std::string& args)>;

// Checks every item of every marker in text (named file in the results). Each distinct ARGS runs once.
std::vector<FigureCheck> check_figures(const std::string& file, const std::string& text,
                                       const FigureCommand& run);

// text with each failed item's old values replaced by the printed ones, in the marker and in its block
// (items whose printed value could not be found are left as they are).
std::string rewrite_figures(const std::string& text, const std::vector<FigureCheck>& checks);

// One line per check: "FILE:LINE: realign ARGS: ITEM: ok" or the problem.
std::string describe(const FigureCheck& check);

// `cd ROOT && BINARY ARGS 2>&1`, its output.
std::string run_realign_in(const std::string& root, const std::string& binary, const std::string& args);

}  // namespace realign::testing
