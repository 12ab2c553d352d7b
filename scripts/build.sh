#!/usr/bin/env bash
# Configures and builds into $ROLLOUT_BUILD_DIR (default: build/). Used by test.sh and
# demo.sh. ccache keys on paths relative to the source root, so a fresh clone in
# another folder reuses this machine's cache.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ROLLOUT_BUILD_DIR:-$root/build}

export CCACHE_BASEDIR=$root
export CCACHE_NOHASHDIR=true
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    ${ROLLOUT_CMAKE_ARGS:-} >"$build.configure.log" 2>&1 \
    || { cat "$build.configure.log" >&2; exit 1; }
fi
cmake --build "$build" --parallel "$(nproc)"
