#!/usr/bin/env bash
# Installs what is missing, builds, and runs the default recipe (recipes/grpo_arith.yaml).
# On a machine without a usable GPU the recipe runs on the CPU. Extra arguments are
# passed to `rollout train` (recipe overrides like rollout.n=4, or flags).
#
# Until the GRPO training loop lands (issue 7) this is a dry run: it resolves and
# saves the recipe, starts every worker, runs the pre-flight check and stops.
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
exec "$build/cli/rollout" train recipes/grpo_arith.yaml trainer.device=$device --dry-run "$@"
