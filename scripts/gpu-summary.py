#!/usr/bin/env python3
"""The figures of scripts/gpu-check.sh as summary.json and summary.md in OUT_DIR, from what its steps left:
OUT_DIR/steps.tsv, bench_model.json, profile.json, log.txt, and under BUILD_DIR/runs the small RL workload's
and the main job's run directories. Missing pieces are reported as not measured, with the step's status.
Standard library only (it runs on the lent machine's python3 and here with /usr/bin/python3).
usage: gpu-summary.py OUT_DIR BUILD_DIR
"""
import json
import os
import re
import statistics
import sys

# Issue 45's bars: MFU of the 1.5B train step, decode at batch 64 against its bound, per-call estimate error
# with the measured profile.
MFU_BAR, DECODE64_BAR, CALL_ERROR_BAR = 0.40, 0.50, 0.25


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_lines(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except OSError:
        return []


def call_seconds(timeline):
    """Seconds of each call in the timeline's first iteration (a call's events summed)."""
    calls = [e for e in timeline.get("events", []) if e.get("kind") == "call"]
    if not calls:
        return {}, 0.0
    first = min(e["iteration"] for e in calls)
    events = [e for e in timeline["events"] if e.get("iteration") == first]
    out = {}
    for e in events:
        if e.get("kind") == "call":
            out[e["name"]] = out.get(e["name"], 0.0) + e["end_s"] - e["start_s"]
    span = max(e["end_s"] for e in events) - min(e["start_s"] for e in events)
    return out, span


def measured_calls(run_dir):
    """Median seconds of each call and of the step over the RL steps, the first (warm-up) left out."""
    records = [json.loads(line) for line in read_lines(os.path.join(run_dir, "metrics.jsonl")) if line.strip()]
    rl = [r for r in records if r.get("stage") == "rl" and "time/step_s" in r][1:]
    calls = {}
    for r in rl:
        for k, v in r.items():
            m = re.fullmatch(r"time/(.+)_s", k)
            if m and m.group(1) != "step":
                calls.setdefault(m.group(1), []).append(v)
    steps = [r["time/step_s"] for r in rl]
    return ({k: statistics.median(v) for k, v in calls.items()}, statistics.median(steps) if steps else None,
            len(steps))


def rel_error(estimate, measured):
    return None if estimate is None or not measured else (estimate - measured) / measured


def rl_comparison(run_dir):
    if not os.path.isdir(run_dir):
        return None
    measured, step_s, n = measured_calls(run_dir)
    shipped = load_json(os.path.join(run_dir, "timeline_estimated.json"))
    sim = load_json(os.path.join(run_dir, "simulated_measured_profile.json"))
    est_shipped, span_shipped = call_seconds(shipped) if shipped else ({}, None)
    est_measured, span_measured = call_seconds(sim["timeline"]) if sim and "timeline" in sim else ({}, None)
    calls = []
    for name in sorted(set(measured) | set(est_shipped)):
        m, s, p = measured.get(name), est_shipped.get(name), est_measured.get(name)
        calls.append({"call": name, "measured_s": m, "estimated_shipped_profile_s": s,
                      "estimated_measured_profile_s": p, "error_shipped_profile": rel_error(s, m),
                      "error_measured_profile": rel_error(p, m)})
    return {"run_dir": run_dir, "rl_steps_measured": n, "calls": calls,
            "iteration": {"measured_s": step_s, "estimated_shipped_profile_s": span_shipped,
                          "estimated_measured_profile_s": span_measured}}


def accuracy(log_lines, label):
    for line in log_lines:
        m = re.match(r"held-out accuracy %s:\s*([0-9.]+)" % re.escape(label), line)
        if m:
            return float(m.group(1))
    return None


def fmt(x, spec="%.3f"):
    return "-" if x is None else spec % x


def pct(x):
    return "-" if x is None else "%+.0f%%" % (100 * x)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gpu-summary.py OUT_DIR BUILD_DIR")
    out, build = sys.argv[1], sys.argv[2]
    steps = [dict(zip(("step", "status", "seconds"), line.split("\t"))) for line in
             read_lines(os.path.join(out, "steps.tsv")) if line]
    machine = [line[len("gpu-check: "):] for line in read_lines(os.path.join(out, "log.txt"))
               if re.match(r"gpu-check: (machine|gpu|python torch|the wheel)", line)]
    bench = load_json(os.path.join(out, "bench_model.json"))
    summary = {"machine": machine, "steps": steps, "bench_model": bench,
               "profile_measured": os.path.exists(os.path.join(out, "profile.json")),
               "rl_small": rl_comparison(os.path.join(build, "runs", "rl_small"))}
    main_dir = os.path.join(build, "runs", "main_job")
    main_log = read_lines(os.path.join(out, ".step-main_job.log"))
    main_job = None
    if os.path.isdir(main_dir):
        cmp = rl_comparison(main_dir)
        main_job = {"accuracy_before_rl": accuracy(main_log, "before RL"), "accuracy_after": accuracy(main_log, "after"),
                    "seconds_per_rl_iteration_measured": cmp["iteration"]["measured_s"],
                    "seconds_per_rl_iteration_estimated": cmp["iteration"]["estimated_shipped_profile_s"]}
    summary["main_job"] = main_job

    bars = {}
    if bench:
        bars["train_mfu_at_least_40pct"] = bench["train"]["mfu_of_measured_gemm_peak"] >= MFU_BAR
        d64 = [d for d in bench["decode"] if d["batch"] == 64]
        if d64:
            bars["decode_b64_at_least_50pct_of_bound"] = d64[0]["share_of_bound"] >= DECODE64_BAR
    rl = summary["rl_small"]
    if rl and rl["calls"]:
        errs = [c["error_measured_profile"] for c in rl["calls"]]
        if all(e is not None for e in errs):
            bars["calls_within_25pct_with_measured_profile"] = all(abs(e) <= CALL_ERROR_BAR for e in errs)
    summary["issue45_bars"] = bars
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")

    md = ["# realign on a GPU (scripts/gpu-check.sh)", ""]
    md += ["- " + m for m in machine] + [""]
    md += ["| step | status | seconds |", "| --- | --- | --- |"]
    md += ["| %s | %s | %s |" % (s["step"], "ok" if s["status"] == "0" else s["status"], s["seconds"]) for s in steps]
    md.append("")
    if bench:
        t = bench["train"]
        md.append("**Train step** (%.2fB LLaMA, %s, B=%d, T=%d%s): %.3f s, %.1f TFLOP/s = %.0f%% of the measured "
                  "%s GEMM peak (%.1f TFLOP/s)" % (bench["params"] / 1e9, bench["dtype"], t["batch"], t["seq"],
                                                   ", AdamW" if t["optimizer"] else "", t["step_s"],
                                                   t["achieved_flops"] / 1e12, 100 * t["mfu_of_measured_gemm_peak"],
                                                   bench["dtype"], bench["gemm_peak_flops"] / 1e12))
        md += ["", "decode steps: " + ("replayed CUDA graphs" if bench.get("decode_cuda_graph") else
                                   "launched (%s)" % bench.get("decode_no_graph_because", "no CUDA graph")),
               "", "| decode batch | tokens/s | ms per step | bandwidth bound tokens/s | share | steps 1-2, s | generate(), s |",
               "| --- | --- | --- | --- | --- | --- | --- |"]
        opt = lambda d, k: "%.3f" % d[k] if k in d else "-"
        md += ["| %d | %.0f | %.2f | %.0f | %.0f%% | %s | %s |" % (
                   d["batch"], d["tokens_per_s"], 1000 * d["step_s"], d["bandwidth_bound_tokens_per_s"],
                   100 * d["share_of_bound"], opt(d, "first_steps_s"), opt(d, "generate_call_s"))
               for d in bench["decode"]]
        check = bench.get("decode_check")
        if check:
            md += ["", "decode check (batch %d, %d tokens, %s): tokens %s with the same fixed shapes launched "
                   "eagerly (log-probs within %.2e), %s with the growing shapes (within %.2e)" % (
                       check["batch"], check["new_tokens"],
                       "through the graph" if check["through_graph"] else "no graph",
                       "equal" if check["tokens_equal_fixed_shapes"] else "DIFFERENT",
                       check["max_logprob_diff_fixed_shapes"],
                       "equal" if check["tokens_equal_growing_shapes"] else "different",
                       check["max_logprob_diff_growing_shapes"])]
        md.append("")
        md.append("copy bandwidth (read + written): %.0f GB/s" % (bench["copy_bandwidth"] / 1e9))
        md.append("")
    else:
        md += ["bench_model: not measured (see the steps above and log.txt)", ""]
    if rl:
        md += ["**Small RL workload per call** (%d RL steps measured; seconds)" % rl["rl_steps_measured"], "",
               "| call | measured | shipped profile (H100, or H200 on an H200) | error | measured profile | error |",
               "| --- | --- | --- | --- | --- | --- |"]
        md += ["| %s | %s | %s | %s | %s | %s |" % (c["call"], fmt(c["measured_s"]), fmt(c["estimated_shipped_profile_s"]),
                                                  pct(c["error_shipped_profile"]), fmt(c["estimated_measured_profile_s"]),
                                                  pct(c["error_measured_profile"])) for c in rl["calls"]]
        it = rl["iteration"]
        md += ["| iteration | %s | %s | | %s | |" % (fmt(it["measured_s"]), fmt(it["estimated_shipped_profile_s"]),
                                                   fmt(it["estimated_measured_profile_s"])), ""]
    else:
        md += ["small RL workload: not measured", ""]
    if main_job:
        md.append("**Main job** (examples/addition_ppo.yaml on one GPU): held-out accuracy %s before RL, %s after; "
                  "%s s per RL iteration measured, %s s estimated" % (
                      fmt(main_job["accuracy_before_rl"]), fmt(main_job["accuracy_after"]),
                      fmt(main_job["seconds_per_rl_iteration_measured"]),
                      fmt(main_job["seconds_per_rl_iteration_estimated"])))
    else:
        md.append("main job: not measured")
    md += ["", "Issue 45's bars: " + (", ".join("%s: %s" % (k, "met" if v else "NOT met") for k, v in bars.items())
                                      or "none measured")]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    measured_any = bench is not None or rl is not None or main_job is not None
    return 0 if measured_any else 1


if __name__ == "__main__":
    sys.exit(main())
