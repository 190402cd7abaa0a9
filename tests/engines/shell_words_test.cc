// Bash's word expansion as launch scripts use it, checked against what bash gives for the same words (each
// expected value below is bash 5.2's output for the word with the variables shown), and what is left as
// written instead of guessed.
#include "engines/shell_words.h"

#include <gtest/gtest.h>

#include "engines/script_commands.h"

namespace realign {
namespace {

using engines::expand_word;
using engines::ShellVars;
using engines::split_commands;

std::vector<std::string> expand(const std::string& word, ShellVars vars = {}) {
  const auto e = expand_word(word, vars);
  EXPECT_EQ(e.unexpanded, "") << word;
  return e.fields;
}

ShellVars some_vars() {
  ShellVars v;
  v.scalars = {{"HOME", "/home/u"},
               {"max_prompt_length", "2048"},
               {"max_response_length", "$((1024 * 8))"},
               {"N", "4"},
               {"EXTRA", "a.b=1 c.d=2"},
               {"EMPTY", ""},
               {"MODEL", "/m/Qwen2.5-7B"}};
  v.arrays = {{"FILES", {"x.parquet", "y z.parquet"}}};
  v.script = "examples/run.sh";
  return v;
}

TEST(ShellWords, ExpandsArithmeticNestedDefaultsAndOperatorsAsBash) {
  const ShellVars v = some_vars();
  EXPECT_EQ(expand("$((1024 * 8))", v), std::vector<std::string>{"8192"});
  EXPECT_EQ(expand("$((max_prompt_length + 2 * N))", v), std::vector<std::string>{"2056"});
  EXPECT_EQ(expand("$(( (N + 1) / 2 ))", v), std::vector<std::string>{"2"});
  EXPECT_EQ(expand("${UNSET:-\"${HOME}/x\"}", v), std::vector<std::string>{"/home/u/x"});
  EXPECT_EQ(expand("\"${UNSET:-\"${HOME}/x y\"}\"", v), std::vector<std::string>{"/home/u/x y"});
  EXPECT_EQ(expand("${EMPTY:-d}${EMPTY-e}", v), std::vector<std::string>{"d"});
  EXPECT_EQ(expand("${N:+set}${UNSET:+no}", v), std::vector<std::string>{"set"});
  EXPECT_EQ(expand("${MODEL##*/}", v), std::vector<std::string>{"Qwen2.5-7B"});
  EXPECT_EQ(expand("${MODEL%/*}", v), std::vector<std::string>{"/m"});
  EXPECT_EQ(expand("${#MODEL}", v), std::vector<std::string>{"13"});
  EXPECT_EQ(expand("~/ckpt", v), std::vector<std::string>{"/home/u/ckpt"});
  EXPECT_EQ(expand("'${N}'\\$N", v), std::vector<std::string>{"${N}$N"});
  // Field splitting: unquoted expansions split, quoted ones do not; "$@" of no arguments is no word.
  EXPECT_EQ(expand("$EXTRA", v), (std::vector<std::string>{"a.b=1", "c.d=2"}));
  EXPECT_EQ(expand("\"$EXTRA\"", v), std::vector<std::string>{"a.b=1 c.d=2"});
  EXPECT_EQ(expand("\"$@\"", v), std::vector<std::string>{});
  EXPECT_EQ(expand("\"\"", v), std::vector<std::string>{""});
  EXPECT_EQ(expand("\"${FILES[@]}\"", v), (std::vector<std::string>{"x.parquet", "y z.parquet"}));
  EXPECT_EQ(expand("${FILES[1]}", v), (std::vector<std::string>{"y", "z.parquet"}));
  EXPECT_EQ(expand("${#FILES[@]}", v), std::vector<std::string>{"2"});
  // The substitutions that compute a path run no command.
  EXPECT_EQ(expand("$(dirname -- \"${BASH_SOURCE[0]}\")", v), std::vector<std::string>{"examples"});
  EXPECT_EQ(expand("$(basename $0 .sh)", v), std::vector<std::string>{"run"});
  EXPECT_EQ(expand("$(cd /a/b/../c && pwd)", v), std::vector<std::string>{"/a/c"});
  // `:=` assigns, as bash does.
  ShellVars w = some_vars();
  EXPECT_EQ(expand_word("${TP:=2}", w).fields, std::vector<std::string>{"2"});
  EXPECT_EQ(w.scalars.at("TP"), "2");
}

TEST(ShellWords, LeavesWhatItCannotKnowAsWrittenAndSaysWhich) {
  ShellVars v = some_vars();
  auto e = expand_word("trainer.nnodes=${NNODES}", v);
  EXPECT_EQ(e.fields, std::vector<std::string>{"trainer.nnodes=${NNODES}"});
  EXPECT_EQ(e.unexpanded, "${NNODES}");
  e = expand_word("x=$(nproc)", v);
  EXPECT_EQ(e.unexpanded, "$(nproc)");
  // Bash reads an unset name in arithmetic as 0; realign does not price a value the user never gave.
  e = expand_word("$((NNODES * 8))", v);
  EXPECT_EQ(e.unexpanded, "$((NNODES * 8))");
  e = expand_word("$RANDOM", v);
  EXPECT_EQ(e.unexpanded, "$RANDOM");
}

TEST(ShellWords, SplitsCommandsWithContinuationsHeredocsAndRedirections) {
  const auto commands = split_commands(
      "A=1; B=2 && echo ok\n"
      "cat <<EOF > out.yaml\n"
      "trainer.nnodes=99\n"
      "EOF\n"
      "python3 -m m \\\n"
      "  x.y=\"a b\" 2>&1 | tee log  # a comment\n"
      "FILES=(one\n  two)\n");
  ASSERT_EQ(commands.size(), 7u);
  EXPECT_EQ(commands[0].words, std::vector<std::string>{"A=1"});
  EXPECT_EQ(commands[2].words, (std::vector<std::string>{"echo", "ok"}));
  EXPECT_EQ(commands[3].words, std::vector<std::string>{"cat"});  // the here-document is no command
  EXPECT_EQ(commands[4].words, (std::vector<std::string>{"python3", "-m", "m", "x.y=\"a b\""}));
  EXPECT_EQ(commands[4].line, 5);
  EXPECT_EQ(commands[5].words, (std::vector<std::string>{"tee", "log"}));
  EXPECT_EQ(commands[6].words, std::vector<std::string>{"FILES=(one\n  two)"});
  EXPECT_EQ(commands[6].line, 7);
}

TEST(ShellWords, ScriptsAssignExportSourceAndArrays) {
  const std::string script =
      "export TP=${TP:-4}\n"
      "declare -a OPTS=(\n  a.b=1  # first\n  c.d=$((TP * 2))\n)\n"
      "OPTS+=(e.f=3)\n"
      "X=1 python3 -m tool ${OPTS[@]} x=$X\n";
  const auto commands = engines::script_commands(script, "run.sh", {{"HOME", "/h"}});
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(commands[0].words,
            (std::vector<std::string>{"python3", "-m", "tool", "a.b=1", "c.d=8", "e.f=3", "x=$X"}));
  EXPECT_EQ(commands[0].line, 7);
}

}  // namespace
}  // namespace realign
