#!/usr/bin/env bash
# realign on a lent GPU machine (issue 45), in one command that fits 8 minutes of a 16-core H100/H200 machine,
# build included: builds only `realign` and `bench_model` against the Python torch's libtorch (the .debs of
# scripts/gpu-prepare.sh unpacked into a prefix for the rest), then measures and writes to OUT_DIR:
#   bench_model.json   train step of a ~1.5B LLaMA (bf16, seq 2048, AdamW with fp32 masters) against the bf16
#                      GEMM peak measured in the same run (MFU); decode tokens/s at batch 1, 64, 256 against the
#                      bandwidth bound of the step (weights + KV cache read once, at the measured copy rate)
#   profile.json       `realign profile --device cuda --spec DEVICE`: the measured hardware profile, its
#                      efficiencies fractions of DEVICE's peaks (h200 or h100-sxm, as below)
#   summary.json/.md   the above, per call (generate, inference, train) of a small RL workload on the GPU its
#                      estimate with the shipped H100 profile and with the measured one beside the measurement,
#                      and the main job (examples/addition_ppo.yaml) on one GPU: held-out accuracy, seconds per
#                      RL iteration measured and estimated
#   log.txt            every step's command, exit status, seconds and output tail
# It prints what it skipped and why, and exits non-zero when the build fails (or nothing was measured).
# --dry-run: here, without a GPU: checks the carried .debs unpack, prints the configure and build commands and
# every measurement it would run, and what it would skip on this machine and why; builds and runs nothing.
# --only STEP[,STEP...]: after the build, only these measurements (bench_model, profile, rl_small,
# rl_small_measured_profile, main_job): a short rerun of what changed, when the lent minutes are few.
# usage: bash scripts/gpu-check.sh [--dry-run] [--only STEPS] OUT_DIR
set -uo pipefail
dry=0
out=""
only=""
usage="usage: $0 [--dry-run] [--only STEP[,STEP...]] OUT_DIR"
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1 ;;
    --only) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; only=",$2,"; shift ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) out="$1" ;;
  esac
  shift
done
[ -n "$out" ] || { echo "$usage" >&2; exit 2; }
steps="bench_model profile rl_small rl_small_measured_profile main_job"
for step in ${only//,/ }; do
  [[ " $steps " == *" $step "* ]] || { echo "--only: no step '$step' (the steps: ${steps// /, })" >&2; exit 2; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
t_start=$(date +%s)
budget_s=${REALIGN_GPU_BUDGET_S:-470}  # of the device tool's 10-minute command limit, leaving time to copy back
jobs=$(nproc)
prefix=/tmp/realign-gpu-deps  # the carried .debs unpacked here, never over /
build=$root/build-gpu          # ignored by .gitignore's /build*/
log=$out/log.txt
: >"$log"
skipped=()

say() { echo "gpu-check: $*" | tee -a "$log"; }
skip() { skipped+=("$1: $2"); say "SKIP $1: $2"; }
left() { echo $((budget_s - ($(date +%s) - t_start))); }

# run NAME TIMEOUT_S CMD...: runs a step under a time limit (the smaller of its own and the budget left),
# logging its command, status, seconds and output tail; records the status in $out/steps.tsv.
run() {
  local name=$1 limit=$2
  shift 2
  local rest
  rest=$(left)
  case "$name" in
    configure | build) ;;
    *) if [ -n "$only" ] && [[ "$only" != *",$name,"* ]]; then
         skip "$name" "not among --only ${only:1:-1}"
         printf '%s\tskipped\t0\n' "$name" >>"$out/steps.tsv"
         return 1
       fi ;;
  esac
  if [ "$dry" = 1 ]; then
    say "would run [$name, at most ${limit} s]: $*"
    return 0
  fi
  if [ "$rest" -lt 20 ]; then
    skip "$name" "the ${budget_s} s budget is spent ($(($(date +%s) - t_start)) s used)"
    printf '%s\tskipped\t0\n' "$name" >>"$out/steps.tsv"
    return 1
  fi
  [ "$limit" -le "$rest" ] || limit=$rest
  say "run [$name, at most ${limit} s]: $*"
  local t0 rc
  t0=$(date +%s)
  timeout --kill-after=5 "$limit" "$@" >"$out/.step.log" 2>&1
  rc=$?
  local secs=$(($(date +%s) - t0))
  { echo "--- $name: exit $rc after ${secs} s; output tail:"; tail -n 60 "$out/.step.log"; } >>"$log"
  [ "$rc" = 0 ] || say "$name failed (exit $rc after ${secs} s; its output is in log.txt)"
  printf '%s\t%s\t%s\n' "$name" "$rc" "$secs" >>"$out/steps.tsv"
  cp "$out/.step.log" "$out/.step-$name.log"
  return "$rc"
}

: >"$out/steps.tsv"
say "machine: $(nproc) cores, $(uname -m); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

# The machine: a GPU and the Python torch with its libtorch.
gpu=0
torch_prefix=""
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpu=1
  say "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"
fi
# The built-in device (and so the shipped profile) the estimates use: the lent machine's own where realign
# has one (an H200's or an H100's), else the H100's.
device=h100-sxm
if [ "$gpu" = 1 ] && nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200; then
  device=h200
fi
if python3 -c 'import torch' >/dev/null 2>&1; then
  torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  say "python torch $(python3 -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)'): $torch_prefix"
  [ -d "$torch_prefix/../../include/gloo" ] && say "the wheel carries gloo headers" ||
    say "the wheel carries no gloo headers: comm builds without Gloo (one rank per job; core/torch_compat.h)"
else
  say "python3 has no torch here: the build would need the Python torch's libtorch"
fi

# The carried Debian packages, unpacked into the prefix.
debs=("$root"/.gpu-deps/*.deb)
if [ ! -e "${debs[0]}" ]; then
  say "no .gpu-deps/*.deb: run scripts/gpu-prepare.sh here first and carry .gpu-deps"
  exit 1
fi
rm -rf "$prefix"
mkdir -p "$prefix"
for f in "${debs[@]}"; do
  if command -v dpkg-deb >/dev/null; then
    dpkg-deb -x "$f" "$prefix" || { say "cannot unpack $f"; exit 1; }
  else  # a .deb is an ar archive holding data.tar.*
    (d=$(mktemp -d) && cd "$d" && ar x "$f" && tar -xf data.tar.* -C "$prefix" && rm -rf "$d") ||
      { say "cannot unpack $f"; exit 1; }
  fi
done
say "unpacked ${#debs[@]} .debs into $prefix"
arch_lib=$prefix/usr/lib/x86_64-linux-gnu
# pkg-config sees only the prefix's .pc files, their paths rewritten into the prefix.
if command -v pkg-config >/dev/null; then pkgconfig=$(command -v pkg-config); else pkgconfig=$prefix/usr/bin/pkgconf; fi
export PKG_CONFIG="$pkgconfig"
export PKG_CONFIG_LIBDIR="$arch_lib/pkgconfig:$prefix/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$prefix"
export LD_LIBRARY_PATH="$arch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # the carried pkgconf's own library
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}               # Hopper: H100, H200

configure=(cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREALIGN_WERROR=OFF
  "-DCMAKE_PREFIX_PATH=${torch_prefix:-TORCH_CMAKE_PREFIX};$prefix/usr"
  "-DCMAKE_CXX_FLAGS=-isystem $prefix/usr/include")
build_cmd=(ninja -C "$build" -j"$jobs" -k 0 realign bench_model)  # -k 0: every compile error in one run
if [ "$dry" = 1 ]; then
  say "would configure: ${configure[*]}"
  say "would build (only these targets, -j$jobs): ${build_cmd[*]}"
elif [ -z "$torch_prefix" ]; then
  say "no Python torch: nothing to build against"
  exit 1
else
  run configure 120 "${configure[@]}" || { say "configure failed: see log.txt"; python3 scripts/gpu-summary.py "$out" "$build" || true; exit 1; }
  run build 420 "${build_cmd[@]}" || { say "build failed: see log.txt"; python3 scripts/gpu-summary.py "$out" "$build" || true; exit 1; }
fi
realign=$build/src/apps/realign
bench=$build/bench/model/bench_model

if [ "$gpu" = 0 ] && [ "$dry" = 0 ]; then
  skip measurements "no GPU here (nvidia-smi sees none)"
  python3 scripts/gpu-summary.py "$out" "$build"
  exit 1
fi
[ "$gpu" = 1 ] || say "no GPU on this machine: the dry run lists the measurements a lent machine runs"

# 1. The ~1.5B LLaMA's train step (MFU) and decode at batch 1, 64, 256.
run bench_model 150 "$bench" --device cuda --dtype bf16 --preset 1.5b --batch 4 --seq 2048 --steps 3 --optimizer 1 \
  --decode-batch 1,64,256 --prompt 128 --new 64 --json "$out/bench_model.json"
# 2. realign profile on the GPU (one GPU: no link to measure), against this GPU's own spec (its peaks).
run profile 90 "$realign" profile --device cuda --spec "$device" --quick --no-links --out "$out/profile.json"
# 3. A small RL workload on one GPU: per call, estimate (shipped H100 profile, then the measured one) and
#    measurement. The main job's PPO with a ~100M actor, RL steps only.
small=(examples/addition_ppo.yaml cluster.devices_per_node=1 cluster.device=$device models.actor=llama-small
  batch.prompts=128 train.steps=8 train.sft_stage.steps=0 train.eval_prompts=1 train.eval_every=0
  train.checkpoint_every=0)
rm -rf "$build/runs"
run rl_small 90 "$realign" train "${small[@]}" --out "$build/runs/rl_small" --no-progress
if [ "$dry" = 1 ] || [ -s "$out/profile.json" ]; then
  # simulate --json prints the plan's estimate with its timeline; the first argument is where it goes.
  run rl_small_measured_profile 30 sh -c 'to=$1; shift; "$@" >"$to"' sh \
    "$build/runs/rl_small/simulated_measured_profile.json" "$realign" simulate "${small[@]}" \
    "profile=$out/profile.json" --plan "$build/runs/rl_small/plan.json" --json
else
  skip rl_small_measured_profile "no measured profile (the profile step failed)"
fi
# 4. The main job on one GPU.
run main_job 150 "$realign" train examples/addition_ppo.yaml cluster.devices_per_node=1 cluster.device="$device" \
  --out "$build/runs/main_job" --no-progress

if [ "$dry" = 1 ]; then
  say "would write summary.json and summary.md (scripts/gpu-summary.py) and log.txt to $out"
  [ "$gpu" = 1 ] || skip "every measurement (on this machine)" "no GPU here; a lent H100/H200 runs them"
  rm -f "$out/steps.tsv"
  exit 0
fi
python3 scripts/gpu-summary.py "$out" "$build"
rc=$?
rm -f "$out"/.step*.log
say "done in $(($(date +%s) - t_start)) s; skipped: ${#skipped[@]}"
for s in "${skipped[@]}"; do say "  skipped $s"; done
exit $rc
