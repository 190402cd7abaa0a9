#!/usr/bin/env python3
"""bench/async_calibration: realign's estimates of the published synchronous and asynchronous RL runs it is
calibrated on (data/published/async_calibration.json, NeMo-RL v0.6's Qwen3-30B-A3B GRPO on 32 and 192 H100),
beside the published step times, as `realign import --engine nemo-rl` prices each run's launch line
(data/published/nemo_rl_v06_qwen3_30b_a3b/). `--fit` scans NeMo-RL's own two coefficients on the H100
(profiles/h100-sxm.json: engine_pass_efficiency.nemo-rl, its Megatron passes, and engine_decode_efficiency.nemo-rl,
its vLLM decoding's share of the GEMV-measured rate) over a grid for the least rms log error over the three runs
and prints the best: that is how the shipped values were made. The 1-step-off run is bound by its training
side and the colocated run mostly by generation, so the two are told apart. Estimated, not measured; prints
the machine and settings.

usage: async_calibration.py [--fit] [--realign PATH]
"""
import json
import math
import os
import platform
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PUBLISHED = os.path.join(ROOT, "data/published/async_calibration.json")
LAUNCH_LINES = os.path.join(ROOT, "data/published/nemo_rl_v06_qwen3_30b_a3b")
PROFILE = os.path.join(ROOT, "profiles/h100-sxm.json")
RUNS = [("colocated_sync_32gpu", "colocated_32.sh"), ("async_1off_32gpu", "async_1off_16_16.sh"),
        ("async_8off_192gpu", "async_8off_64_128.sh")]


def published_runs():
    data = json.load(open(PUBLISHED))
    entry = next(e for e in data["entries"] if e["id"] == "nemo_rl_v06_h100_qwen3_30b_a3b")
    configs = {c["name"]: c for c in entry["configs"]}
    return [(name, script, configs[name]) for name, script in RUNS]


def launch_overrides(script):
    """The realign overrides the launch line's header names (`realign import FILE --engine nemo-rl
    batch.gen_len=...`: the published average less the assumed prompt), so the table prices what the README's
    figures do."""
    for line in open(os.path.join(LAUNCH_LINES, script)):
        if line.startswith("#") and "--engine nemo-rl" in line:
            return line.split("--engine nemo-rl", 1)[1].split()
    raise SystemExit("%s: no '# realign import FILE --engine nemo-rl OVERRIDES' line" % script)


def estimate(realign, script, profile):
    out = subprocess.run([realign, "import", os.path.join(LAUNCH_LINES, script), "--engine", "nemo-rl",
                          "--json", "profile=" + profile, "plan.time_budget_s=0.2"] +
                         launch_overrides(script), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["as_engine_runs_it"]["iteration_time_s"]


def estimates(realign, runs, profile):
    return [estimate(realign, script, profile) for _, script, _ in runs]


def rms_log_error(est, runs):
    return math.sqrt(sum(math.log(e / c["step_s"]) ** 2 for e, (_, _, c) in zip(est, runs)) / len(runs))


def with_efficiencies(passes, decode, folder):
    profile = json.load(open(PROFILE))
    for key, value in (("engine_pass_efficiency", passes), ("engine_decode_efficiency", decode)):
        profile.setdefault(key, {})["nemo-rl"] = {
            "value": value, "source": "bench/async_calibration --fit (a point of its scan)"}
    path = os.path.join(folder, "h100-sxm-%.4f-%.4f.json" % (passes, decode))
    json.dump(profile, open(path, "w"))
    return path


def main():
    args = sys.argv[1:]
    realign = os.path.join(ROOT, "build/src/apps/realign")
    if "--realign" in args:
        realign = args[args.index("--realign") + 1]
    runs = published_runs()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.machine())
    print("bench/async_calibration: machine %s, %d cores; realign %s; single-threaded search" %
          (cpu, os.cpu_count(), realign))
    print("settings: realign import FILE --engine nemo-rl with the overrides each launch line's header names "
          "(%s), plan.time_budget_s=0.2 (the script's own plan is priced; the search only proposes another); "
          "estimated, not measured\n" % " ".join(launch_overrides(runs[0][1])))
    if "--fit" in args:
        with tempfile.TemporaryDirectory() as folder:
            best = None
            for i in range(0, 9):
                passes = 0.22 + 0.01 * i
                for k in range(0, 9):
                    decode = 0.50 + 0.05 * k
                    err = rms_log_error(estimates(realign, runs, with_efficiencies(passes, decode, folder)), runs)
                    print("  nemo-rl pass efficiency %.2f, decode efficiency %.2f: rms log error %.4f" %
                          (passes, decode, err))
                    if best is None or err < best[2]:
                        best = (passes, decode, err)
        print("\nbest: pass efficiency %.2f, decode efficiency %.2f (rms log error %.4f)\n" % best)
    est = estimates(realign, runs, PROFILE)
    print("%-22s %10s %12s %8s" % ("run", "published", "estimated", "error"))
    for e, (name, _, c) in zip(est, runs):
        print("%-22s %9.1fs %11.1fs %+7.1f%%" % (name, c["step_s"], e, 100 * (e / c["step_s"] - 1)))
    pub = runs[0][2]["step_s"] / runs[1][2]["step_s"]
    print("\nasynchronous (1-step off, 16 + 16 GPUs) over synchronous (32 GPUs): published %.2fx, "
          "estimated %.2fx (%+.1f%%)" % (pub, est[0] / est[1], 100 * (est[0] / est[1] / pub - 1)))
    print("rms log error over the three: %.4f" % rms_log_error(est, runs))


if __name__ == "__main__":
    main()
