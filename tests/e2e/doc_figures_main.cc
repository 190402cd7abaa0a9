// realign_doc_figures [--write] [FILE...]: runs the command of every figure marker in the files (default:
// README.md and docs/engines.md) and prints each quoted figure beside what the command prints now; --write
// puts the printed figures into the files. scripts/doc-figures.sh builds and runs it.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "e2e/doc_figures.h"
#include "testing/temp_dir.h"

int main(int argc, char** argv) {
  using namespace realign::testing;
  bool write = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--write") == 0) {
      write = true;
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "usage: %s [--write] [FILE...] (files relative to the repository root, or absolute)\n",
                   argv[0]);
      return 1;
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) files = {"README.md", "docs/engines.md"};
  const std::string root = REALIGN_SOURCE_DIR;
  int failed = 0, unfixed = 0;
  try {
    for (const std::string& file : files) {
      const std::string path = file[0] == '/' ? file : root + "/" + file;
      const std::string text = read_file(path);
      const auto checks = check_figures(
          file, text, [&](const std::string& args) { return run_realign_in(root, REALIGN_BINARY, args); });
      for (const FigureCheck& c : checks) {
        std::printf("%s\n", describe(c).c_str());
        if (c.ok) continue;
        ++failed;
        if (c.new_item.empty() || c.problem.find("not quoted") != std::string::npos) ++unfixed;
      }
      if (write) {
        const std::string now = rewrite_figures(text, checks);
        if (now != text) {
          write_file(path, now);
          std::printf("%s: rewritten with the printed figures\n", file.c_str());
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  std::printf("%d figure(s) differ from what their commands print%s\n", failed,
              write && failed ? (", " + std::to_string(failed - unfixed) + " rewritten, " +
                                 std::to_string(unfixed) + " left for a person to fix")
                                    .c_str()
                              : "");
  return failed && (!write || unfixed) ? 1 : 0;
}
