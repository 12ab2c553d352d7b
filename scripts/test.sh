#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (GPU-labelled tests only
# where the build has CUDA).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ROLLOUT_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"

labels=(-LE gpu)
grep -q '^ROLLOUT_WITH_CUDA:INTERNAL=ON' "$build/CMakeCache.txt" 2>/dev/null && labels=()
cd "$build"
ctest --output-on-failure --parallel "$(nproc)" "${labels[@]}"
