// bench/shell_expanders: realign's word expansion (engines/shell_words.h) against glibc's wordexp(3) on the
// words of real launch scripts, both judged by bash itself. Every word the script reader expands that holds
// an expansion (`$` or a leading `~`) is expanded three ways with the same variables: realign's, wordexp with
// WRDE_NOCMD | WRDE_UNDEF (and with WRDE_NOCMD alone), and `bash -u -f -c` (no command runs: words with a
// command substitution other than realign's path-only ones are left out of bash's side). An expander
// agrees where it gives bash's words, or refuses where bash fails (an unset variable under -u); it misses
// where it refuses what bash expands; it is wrong where it gives other words (a silent misread).
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/host.h"
#include "core/read_file.h"
#include "engines/script_commands.h"

extern char** environ;

namespace {

using realign::engines::ShellVars;

struct Outcome {
  bool ok = false;
  std::vector<std::string> fields;
};

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// bash's words for `word` with `vars` declared: -u refuses unset names, -f matches no files; $0 the script.
Outcome bash(const std::string& word, const ShellVars& vars, bool split) {
  std::string program = "set -u -f; ";
  for (const auto& [name, value] : vars.scalars) program += name + "=" + quoted(value) + "; ";
  for (const auto& [name, values] : vars.arrays) {
    program += name + "=(";
    for (const std::string& v : values) program += quoted(v) + " ";
    program += "); ";
  }
  // A loop prints each word (printf with none would print one empty word).
  program += split ? "for w in " + word + "; do printf '%s\\0' \"$w\"; done"
                   : "x=" + word + "; printf '%s\\0' \"$x\"";
  int out[2];
  if (pipe(out) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    std::freopen("/dev/null", "w", stderr);
    char* env[] = {nullptr};
    execle("/bin/bash", "bash", "--norc", "--noprofile", "-c", program.c_str(), vars.script.c_str(), nullptr,
           env);
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  Outcome o;
  o.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  for (size_t start = 0, end; (end = text.find('\0', start)) != std::string::npos; start = end + 1)
    o.fields.push_back(text.substr(start, end - start));
  return o;
}

// wordexp with the script's variables as the only environment (arrays cannot be given to it).
Outcome glibc(const std::string& word, const ShellVars& vars, int flags) {
  std::vector<std::string> storage;
  for (const auto& [name, value] : vars.scalars) storage.push_back(name + "=" + value);
  std::vector<char*> env;
  for (std::string& s : storage) env.push_back(s.data());
  env.push_back(nullptr);
  char** saved = environ;
  environ = env.data();
  wordexp_t w;
  const int rc = wordexp(word.c_str(), &w, flags);
  environ = saved;
  Outcome o;
  o.ok = rc == 0;
  if (rc == 0) {
    for (size_t k = 0; k < w.we_wordc; ++k) o.fields.push_back(w.we_wordv[k]);
    wordfree(&w);
  }
  return o;
}

struct Tally {
  int agree = 0, miss = 0, wrong = 0;
  void add(const Outcome& got, const Outcome& truth) {
    if (got.ok == truth.ok && (!got.ok || got.fields == truth.fields))
      ++agree;
    else if (!got.ok)
      ++miss;
    else
      ++wrong;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_shell_expanders SCRIPT...\n");
    return 1;
  }
  std::printf(
      "bench/shell_expanders: machine %s; %d scripts; truth: /bin/bash -u -f -c with the same "
      "variables\n",
      realign::cpu_model_name().c_str(), argc - 1);
  Tally realign_tally, strict, lax;
  int words = 0, skipped = 0;
  // A few words of each kind of disagreement, to see why.
  std::map<std::string, std::vector<std::string>> examples;
  auto example = [&](const std::string& kind, const std::string& word) {
    std::vector<std::string>& seen = examples[kind];
    if (seen.size() < 4 && std::find(seen.begin(), seen.end(), word) == seen.end()) seen.push_back(word);
  };
  for (int a = 1; a < argc; ++a) {
    realign::engines::script_commands(
        realign::read_file(argv[a]), argv[a], {},
        [&](const std::string& word, const ShellVars& vars, bool split) {
          if (word.find('$') == std::string::npos && word[0] != '~') return;
          ShellVars copy = vars;
          const auto mine = realign::engines::expand_word(word, copy, split);
          // A command realign does not evaluate would run in bash: not compared; nor ${BASH_SOURCE}, which
          // `bash -c` leaves empty.
          if ((!mine.unexpanded.empty() && (mine.unexpanded.find("$(") == 0 || mine.unexpanded[0] == '`')) ||
              word.find("BASH_SOURCE") != std::string::npos) {
            ++skipped;
            return;
          }
          const Outcome truth = bash(word, vars, split);
          ++words;
          realign_tally.add({mine.unexpanded.empty(), mine.fields}, truth);
          // An assignment's value is one word to wordexp, as the reader's `split` off would make it.
          Outcome s = glibc(word, vars, WRDE_NOCMD | WRDE_UNDEF), l = glibc(word, vars, WRDE_NOCMD);
          for (Outcome* o : {&s, &l})
            if (!split && o->ok && o->fields.size() != 1) {
              std::string joined;
              for (size_t k = 0; k < o->fields.size(); ++k) joined += (k ? " " : "") + o->fields[k];
              o->fields = {joined};
            }
          strict.add(s, truth);
          lax.add(l, truth);
          const bool mine_ok = mine.unexpanded.empty();
          if (mine_ok && !(truth.ok && mine.fields == truth.fields)) example("realign wrong", word);
          if (!mine_ok && truth.ok) example("realign refuses", word);
          if (s.ok && !(truth.ok && s.fields == truth.fields)) example("wordexp (UNDEF) wrong", word);
          if (!s.ok && truth.ok) example("wordexp (UNDEF) refuses", word);
          if (l.ok && !(truth.ok && l.fields == truth.fields)) example("wordexp wrong", word);
        });
  }
  std::printf(
      "%d words with an expansion compared (%d left out: a command substitution bash would run, or "
      "${BASH_SOURCE})\n\n",
      words, skipped);
  std::printf("%-36s %7s %7s %7s\n", "expander", "agree", "refuse", "wrong");
  auto row = [](const char* name, const Tally& t) {
    std::printf("%-36s %7d %7d %7d\n", name, t.agree, t.miss, t.wrong);
  };
  row("realign (shell_words)", realign_tally);
  row("wordexp WRDE_NOCMD | WRDE_UNDEF", strict);
  row("wordexp WRDE_NOCMD", lax);
  for (const auto& [kind, words] : examples)
    for (const std::string& word : words) std::printf("%s: %s\n", kind.c_str(), word.c_str());
  return 0;
}
