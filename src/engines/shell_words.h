// A launch script's commands as bash reads them, without running any: the script split into commands of words
// (quoting, `\` continuations, comments, here-documents skipped, `;` `&&` `||` `|` `&` and newlines between
// commands, redirections dropped), and each word expanded as bash expands it: parameters with their operators
// (`${A:-"${HOME}/x"}`, `:=`, `:+`, `#`/`%` trims, lengths, arrays `${A[@]}`), arithmetic `$((N * 1024))`
// (bare names too), `~`, and the command substitutions that only compute a path or a string (`$(pwd)`,
// `$(dirname X)`, `$(basename X)`, `$(realpath X)`, `$(cd X && pwd)`, `$(echo X)`, `$(echo X | sed
// 's#A#B#')` with a literal A). Anything else (another command's output, `$RANDOM`, a
// variable never set) is not guessed: it stays in the word as written and is reported, so a reader that needs
// the value names the construct. Words are not matched against files (`*.parquet` stays as written).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace realign::engines {

// One command of a script: its words as written (quotes kept) and the line it starts on (1-based), and each
// word's (a command continued over lines with `\` has words on several).
struct ShellCommand {
  std::vector<std::string> words;
  int line = 0;
  std::vector<int> lines;  // the line each word starts on
};

// The script's commands in order.
std::vector<ShellCommand> split_commands(const std::string& script);

// A script's variables as bash holds them: scalars and indexed arrays (`FILES=(a b)`). `script` is `$0`,
// `source` `${BASH_SOURCE[0]}` (the file being read: the script or an env file it sources; the script when
// empty); the script runs without arguments (`$@` is empty, `$#` 0).
struct ShellVars {
  std::map<std::string, std::string> scalars;
  std::map<std::string, std::vector<std::string>> arrays;
  std::string script, source;
};

// A word expanded: its fields (an unquoted expansion splits on whitespace; `"$@"` of no arguments gives
// none), and the first construct left as written ("" when none was): "${NNODES}", "$(nproc)".
struct ExpandedWord {
  std::vector<std::string> fields;
  std::string unexpanded;
};

// `split`: field splitting as for a command's argument; off for the value of an assignment (one field, `~`
// after `=` or `:` expanded as bash does there). `${A:=x}` assigns, so `vars` may change.
ExpandedWord expand_word(const std::string& word, ShellVars& vars, bool split = true);

// Evaluates bash arithmetic (`$((...))`'s inside) over integers: + - * / % ** unary + - ! ~, comparisons,
// && || and parentheses; a bare name reads the variable. Empty when an operand is not an integer or a name
// is unset (`why` says which), or on division by zero.
bool eval_arithmetic(const std::string& expr, const ShellVars& vars, long long& value, std::string& why);

}  // namespace realign::engines
