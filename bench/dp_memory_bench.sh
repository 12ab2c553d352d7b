#!/usr/bin/env bash
# Peak memory of each data-parallel worker in a short GRPO run of `rollout train`:
# what sharding the optimizer state over the workers (ZeRO-1,
# workers/optimizer_shards.h) and averaging the gradients in buckets
# (workers/gradient_sync.h) save. Prints each worker's peak and, for comparison, the
# model's size and its optimizer state (float32 master weights of a bfloat16 model and
# two float32 moments) whole and split over the workers.
#
#   bench/dp_memory_bench.sh BUILD_DIR OUT_DIR
#
# Environment: DEVICE (cpu, the default: peak resident memory, VmHWM, of each worker
# process; cuda: each worker's largest GPU memory nvidia-smi shows, polled);
# WORKERS (trainer.n_gpus_per_node, default 2); PRESET (`rollout init-model --preset`,
# default qwen2.5-0.5b: with the tiny test tokenizer, 358M parameters); STEPS (default
# 2); WORK (scratch: model, data, run; default /tmp/dp_memory_bench). The model is
# random, float32 on the CPU and bfloat16 on GPUs. Writes train.log, metrics.jsonl and
# summary.txt to OUT_DIR; on GPUs the summary also gives the actor's
# perf/max_memory_allocated_gb and perf/max_memory_reserved_gb.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
source_dir=$(cd "$(dirname "$0")/.." && pwd)
rollout=$(cd "$1" && pwd)/cli/rollout
mkdir -p "$2"
out=$(cd "$2" && pwd)
device=${DEVICE:-cpu}
workers=${WORKERS:-2}
preset=${PRESET:-qwen2.5-0.5b}
steps=${STEPS:-2}
work=${WORK:-/tmp/dp_memory_bench}
case "$device" in
  cpu) dtype=float32 ;;
  cuda) dtype=bfloat16 ;;
  *) echo "DEVICE must be cpu or cuda" >&2; exit 2 ;;
esac
mkdir -p "$work"
if [ ! -f "$work/model_${preset}_$dtype/model.safetensors" ]; then
  "$rollout" init-model --preset "$preset" --tokenizer "$source_dir/tests/data/tiny-qwen2" --dtype "$dtype" \
    --out "$work/model_${preset}_$dtype"
fi
if [ ! -f "$work/data/train.jsonl" ]; then
  "$rollout" gen-data arithmetic --out "$work/data" --train 64 --val 8
fi

# Polls every worker process's peak, keeping each one's largest reading, until the
# run ends; one "PID KIB" line per worker in $out/peaks.txt.
poll() {
  declare -A peak=()
  while kill -0 "$1" 2>/dev/null; do
    if [ "$device" = cpu ]; then
      for pid in $(pgrep -f "$rollout worker" || true); do
        kib=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        if [ -n "$kib" ] && [ "$kib" -gt "${peak[$pid]:-0}" ]; then peak[$pid]=$kib; fi
      done
    else
      while IFS=', ' read -r pid mib; do
        if [ -n "$mib" ] && [ $((mib * 1024)) -gt "${peak[$pid]:-0}" ]; then peak[$pid]=$((mib * 1024)); fi
      done < <(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null || true)
    fi
    : > "$out/peaks.txt"
    for pid in "${!peak[@]}"; do echo "$pid ${peak[$pid]}" >> "$out/peaks.txt"; done
    sleep 0.2
  done
}

rm -rf "$work/run" && mkdir -p "$work/run"
(cd "$work/run" && exec "$rollout" train "$source_dir/recipes/grpo_arith.yaml" \
  "data.train_files=[$work/data/train.jsonl]" "data.val_files=[]" "actor.model.path=$work/model_${preset}_$dtype" \
  "trainer.device=$device" "trainer.n_gpus_per_node=$workers" "trainer.total_training_steps=$steps" \
  "data.train_batch_size=$((2 * workers))" "actor.ppo_mini_batch_size=$((2 * workers))" \
  actor.ppo_micro_batch_size_per_gpu=2 rollout.n=2 data.max_response_length=16 rollout.cpu_kv_cache_gib=0.25 \
  trainer.val_before_train=false trainer.test_freq=-1 trainer.save_freq=-1 trainer.resume_mode=disable \
  "trainer.logger=[console,jsonl]" trainer.project_name=dp_memory_bench trainer.experiment_name=run \
  > "$out/train.log" 2>&1) &
run=$!
poll "$run" &
poller=$!
status=0
wait "$run" || status=$?
wait "$poller" || true
if [ "$status" != 0 ]; then
  echo "rollout train failed (exit $status); its output is in $out/train.log" >&2
  exit 1
fi

cp "$work/run/jsonl_log/dp_memory_bench/run/metrics.jsonl" "$out/metrics.jsonl"
python3 - "$out" "$work/model_${preset}_$dtype" "$workers" "$device" <<'EOF' | tee "$out/summary.txt"
import json, sys
out, model, workers, device = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
config = json.load(open(f"{model}/config.json"))
hidden, layers, vocab = config["hidden_size"], config["num_hidden_layers"], config["vocab_size"]
head_dim = config.get("head_dim") or hidden // config["num_attention_heads"]
q, kv = config["num_attention_heads"] * head_dim, config["num_key_value_heads"] * head_dim
params = layers * (2 * hidden * q + 2 * hidden * kv + 3 * hidden * config["intermediate_size"]) + hidden * vocab
# float32 on the CPU: two moments; bfloat16 on GPUs: two moments and a master.
state = params * (8 if device == "cpu" else 12)
gib = 1024 ** 3
peaks = sorted(int(line.split()[1]) * 1024 for line in open(f"{out}/peaks.txt") if line.strip())
print(f"{workers} workers on {device}, ~{params / 1e6:.0f}M parameters ({params * (4 if device == 'cpu' else 2) / gib:.2f} GiB "
      f"of weights); optimizer state {state / gib:.2f} GiB whole, {state / workers / gib:.2f} GiB a worker sharded")
print("peak a worker: " + ", ".join(f"{p / gib:.2f} GiB" for p in peaks))
# The actor's update metrics, averaged over the workers: on GPUs the caching
# allocator's peak (what the tensors took, without the CUDA context nvidia-smi counts).
steps = [json.loads(line) for line in open(f"{out}/metrics.jsonl") if line.strip()]
for name in ("perf/max_memory_allocated_gb", "perf/max_memory_reserved_gb"):
    values = [step[name] for step in steps if name in step]
    if values:
        print(f"{name} by step (mean over the workers): " + ", ".join(f"{v:.2f}" for v in values))
EOF
