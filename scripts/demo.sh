#!/usr/bin/env bash
# Installs what is missing, builds, and runs the default recipe (recipes/grpo_arith.yaml).
# On a machine without a usable GPU the recipe runs on the CPU. Extra arguments are
# passed to `rollout train` (recipe overrides like rollout.n=4, or flags).
#
# It writes the arithmetic dataset (data/arith) when missing and trains GRPO for
# 20 steps on the tiny Qwen2 fixture model. That model is random, so its rewards stay
# near 0: the SFT warm start that gives GRPO something to improve comes with
# recipes/grpo_arith_tiny.yaml (issue 7).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ROLLOUT_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"

device=cpu
if grep -q '^ROLLOUT_WITH_CUDA:INTERNAL=ON' "$build/CMakeCache.txt" 2>/dev/null \
   && nvidia-smi -L >/dev/null 2>&1; then
  device=cuda
fi
cd "$root"
if [[ ! -f data/arith/train.jsonl ]]; then
  "$build/cli/rollout" gen-data arithmetic --out data/arith
fi
exec "$build/cli/rollout" train recipes/grpo_arith.yaml trainer.device=$device \
  trainer.total_training_steps=20 "$@"
