#!/usr/bin/env bash
# Installs what is missing, builds, and runs the default recipe
# (recipes/grpo_arith_tiny.yaml) on the CPU: an SFT warm start of a randomly
# initialised tiny model on addition, then GRPO; at the end it prints the validation
# accuracy after the warm start and after GRPO side by side. Extra arguments are passed
# to `rollout train` (recipe overrides like trainer.total_training_steps=20, or flags).
#
# It writes the addition dataset (data/arith_add) and the model (outputs/tiny_init, from
# `rollout init-model`) when they are missing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ROLLOUT_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"

cd "$root"
rollout="$build/cli/rollout"
if [[ ! -f data/arith_add/train.jsonl ]]; then
  "$rollout" gen-data arithmetic --operators + --out data/arith_add
fi
if [[ ! -f outputs/tiny_init/model.safetensors ]]; then
  "$rollout" init-model --preset tiny --tokenizer tests/data/tiny-qwen2 --out outputs/tiny_init
fi
exec "$rollout" train recipes/grpo_arith_tiny.yaml "$@"
