// `realign report RUN_DIR`: draws a training run's curves and timeline to SVG.
#include <cstdio>

#include "apps/commands.h"
#include "train/report.h"

namespace realign::apps {

void add_report_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("report", "Draw a run's training curves and timeline (SVG) from its run directory");
  struct Args {
    std::string run_dir, out;
  };
  auto args = std::make_shared<Args>();
  sub->add_option("run_dir", args->run_dir,
                  "The directory `realign train` wrote (metrics.jsonl, timeline.json)")
      ->required();
  sub->add_option("--out", args->out, "Where to write the SVGs (default: the run directory)");
  on_run(sub, [args] {
    for (const std::string& path : train::write_report(args->run_dir, args->out))
      std::printf("%s\n", path.c_str());
    return 0;
  });
}

}  // namespace realign::apps
