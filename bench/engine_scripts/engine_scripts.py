#!/usr/bin/env python3
"""bench/engine_scripts: `realign import` on the engines' own RL launch scripts, counted as docs/engines.md
counts them (issue 44's bar: at least 80% of the scripts that use only what import documents as read are
priced). The script lists are data beside this file, one per engine, taken at the commits below by the rules
docs/engines.md states (veRL: every .sh under examples/ and verl/experimental/ that runs main_ppo or a recipe,
SFT and generation left out; OpenRLHF: examples/scripts/train_*ppo*, reinforce, dapo, prorl; NeMo-RL: every
script that runs run_grpo). Each runs from its repository's root with plan.time_budget_s=0.3
plan.max_steps=2000; "priced" is exit 0 or 2 (the layout priced, fitting or not). "Out of scope" is a script
using what realign documents as not priced (NPU, vision-language, LoRA, Ulysses or ring attention, context
parallelism, another advantage estimator, fully_async's on-policy mode, NeMo-RL's Megatron generation), judged
from its path, text and
refusal. Prints the machine and settings; estimated pricing, not a timing.

usage: engine_scripts.py [--realign PATH] [--engine NAME] [--list-refused] ENGINE=REPO...
  REPO: a checkout or a bare/mirror git directory (then the commit below is extracted to a temporary folder),
  e.g. verl=/work/.mirror/volcengine+verl/repo nemo-rl=/work/.mirror/NVIDIA-NeMo+RL/repo
       openrlhf=/work/.mirror/OpenRLHF+OpenRLHF/repo
"""
import os
import platform
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COMMITS = {"verl": "b178a3c", "nemo-rl": "7ea279a", "openrlhf": "3c3be62"}


def out_of_scope(path, text, refusal):
    low, name = text.lower(), path.lower()
    if "npu" in name or "device=npu" in low or "ascend" in low:
        return "NPU"
    if "/vla/" in name or re.search(r"qwen[0-9.]*-?vl|-vl-|glm-4\.1v|minicpm-o|qwen3\.5-2b|vlm|omni|geo3k",
                                    low + name):
        return "vision-language"
    if "lora_rank" in refusal or "LoRA" in refusal:
        return "LoRA"
    if "ulysses" in refusal or "Ulysses" in refusal or "ring_attn" in refusal:
        return "Ulysses/ring attention"
    if "context_parallel" in refusal or "context parallelism" in refusal:
        return "context parallelism"
    if "adv_estimator" in refusal:
        return "another estimator"
    if "staleness_threshold: 0" in refusal:
        return "fully_async on-policy"
    if "policy.generation.backend" in refusal:
        return "Megatron generation"
    return None


def checkout(repo, commit, folder):
    """The tree at `commit`: `repo` itself when it is a work tree at that commit, else extracted."""
    head = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    if os.path.isdir(os.path.join(repo, "examples")) and head.startswith(commit):
        return repo
    archive = subprocess.Popen(["git", "-C", repo, "archive", commit], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", folder], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit("%s: no commit %s" % (repo, commit))
    return folder


def count(realign, engine, tree, list_refused):
    scripts = [l.strip() for l in open(os.path.join(HERE, engine + ".list")) if l.strip()]
    priced = in_scope = priced_in_scope = 0
    outside, refused = {}, []
    for script in scripts:
        run = subprocess.run([realign, "import", "--engine", engine, script, "plan.time_budget_s=0.3",
                              "plan.max_steps=2000", "--json"], cwd=tree, capture_output=True, text=True,
                             timeout=120)
        ok = run.returncode in (0, 2)
        refusal = "" if ok else (run.stderr or run.stdout).strip().replace("\n", " ")
        priced += ok
        why = out_of_scope(script, open(os.path.join(tree, script), errors="replace").read(), refusal)
        if why:
            outside[why] = outside.get(why, 0) + 1
            continue
        in_scope += 1
        priced_in_scope += ok
        if not ok:
            refused.append((script, refusal))
    print("%-9s %s: %d scripts, %d priced; in scope %d, priced %d (%.0f%%); out of scope %s" %
          (engine, COMMITS[engine], len(scripts), priced, in_scope, priced_in_scope,
           100.0 * priced_in_scope / max(1, in_scope), dict(sorted(outside.items())) or "none"))
    if list_refused:
        for script, refusal in refused:
            print("    %s | %s" % (script, refusal[:240]))


def main():
    args = sys.argv[1:]
    realign = os.path.join(ROOT, "build/src/apps/realign")
    if "--realign" in args:
        i = args.index("--realign")
        realign = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    list_refused = "--list-refused" in args
    args = [a for a in args if a != "--list-refused"]
    repos = dict(a.split("=", 1) for a in args)
    unknown = [e for e in repos if e not in COMMITS]
    if not repos or unknown:
        raise SystemExit(__doc__ if not repos else "unknown engine %s; one of %s" % (unknown, list(COMMITS)))
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.machine())
    print("bench/engine_scripts: machine %s, %d cores; realign %s; one import at a time" %
          (cpu, os.cpu_count(), realign))
    for engine, repo in repos.items():
        with tempfile.TemporaryDirectory() as folder:
            count(realign, engine, checkout(repo, COMMITS[engine], folder), list_refused)


if __name__ == "__main__":
    main()
