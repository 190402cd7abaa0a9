// A launch script run as far as reading it needs: its commands in order with their words expanded, the
// variables its assignments set (`NAME=...`, `export`, `local`/`declare`/`readonly`, arrays `A=(...)`,
// `unset`), and the env files it sources (`source FILE`, `. FILE`) read in place. Nothing is executed:
// conditionals and loops are read straight through, each assignment in the order written. A command string
// given to a shell (`bash -c "..."`, `sh -c`, as `srun ... bash -c "pip install ... && ray job submit ..."`
// launches run one) is read as commands too, after the command that runs it, at its lines in the file.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engines/shell_words.h"

namespace realign::engines {

struct ScriptCommand {
  std::vector<std::string> words;  // expanded (shell_words.h); a construct not expanded stays as written
  int line = 0;                    // where it starts in `file` (or in the sourced file `from`)
  std::string from;                // the file it is in: the script, or a file it sourced
  std::vector<int> lines;          // the line of each of `words` (of the word it was expanded from)
};

// `env`: the variables as if exported before the script ran (import's --env). The script also sees HOME,
// USER and PWD (realign's working directory) from realign's own environment, where `env` does not set them:
// the variables such scripts read to build paths; nothing else of the user's environment is read, so the
// same script reads the same everywhere but for those.
// `observe`, when given, sees every word before it is expanded, with the variables it is expanded with and
// whether it is split (bench/shell_expanders compares expanders on exactly these).
using WordObserver = std::function<void(const std::string& word, const ShellVars& vars, bool split)>;
std::vector<ScriptCommand> script_commands(const std::string& script, const std::string& file,
                                           const std::map<std::string, std::string>& env,
                                           const WordObserver& observe = {});

}  // namespace realign::engines
