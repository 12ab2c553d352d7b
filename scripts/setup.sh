#!/usr/bin/env bash
# Installs the system packages rollout-infra builds and tests with (Debian 12 /
# Ubuntu 24.04). Idempotent and quiet when everything is present.
set -euo pipefail

# libopenblas0-serial: LibTorch's CPU matrix products call the system's libblas.so.3,
# which without it is the reference BLAS (libblas3): several times slower (the default
# demo's GRPO step 2.4 -> 0.9 s on 2 cores). Installing it makes OpenBLAS that library
# (update-alternatives). Its serial build runs each product on one thread, so worker
# processes that share the cores do not oversubscribe them, and results do not depend
# on the thread count. zlib1g-dev and libzstd-dev: the Parquet reader's GZIP and ZSTD
# pages (common/parquet_codecs.h). slurm-wlm and munge: the Slurm launcher's tests run a
# private Slurm cluster on this machine (tests/support/local_slurm.h); their daemons are
# not started here.
packages=(
  g++ cmake ninja-build ccache pkg-config
  libtorch-dev libopenblas0-serial
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libyaml-cpp-dev nlohmann-json3-dev libgloo-dev
  libgtest-dev libgmock-dev
  zlib1g-dev libzstd-dev
  slurm-wlm munge
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "setup: missing packages: ${missing[*]}" >&2
  echo "setup: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
