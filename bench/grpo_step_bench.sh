#!/usr/bin/env bash
# One GRPO step at the Qwen2.5-0.5B shape on one GPU, `rollout train` against a plain
# PyTorch + HF transformers implementation of the same step (bench/hf_grpo_step.py):
# 256 prompts x n=8, prompts of exactly 128 tokens, 256-token responses (EOS ignored),
# bf16, recipes/grpo_gsm8k_qwen2.5_0.5b.yaml's algorithm and batch sizes. Prints the
# per-phase seconds of both, the ratio HF/ours per phase and per step, and the step
# ratio against the target of 5x (issue 7).
#
#   bench/grpo_step_bench.sh BUILD_DIR OUT_DIR
#
# The update's micro-batches: ours as the recipe forms them (use_dynamic_bsz, at most
# 16,384 tokens: 42 rows of 384), HF's HF_MICRO_BATCH rows (default 16, the recipe's
# ppo_micro_batch_size_per_gpu; 42 gives it the same micro-batches as ours).
#
# Environment: PRESET (the model's shape: qwen2.5-0.5b, the default, with
# recipes/grpo_gsm8k_qwen2.5_0.5b.yaml, or qwen3-0.6b with recipes/grpo_gsm8k_qwen3_0.6b.yaml);
# STEPS (rollout train steps, default 3) and HF_STEPS (HF steps after an
# untimed small warm-up, default 2) — the first full step of each is left out of the
# figures when there are several; VOCAB; HF_MICRO_BATCH; SKIP_OURS=1, SKIP_HF=1; WORK (scratch: model,
# prompts, run; default /tmp/grpo_step_bench_$PRESET_$VOCAB); OURS_OVERRIDES (more key=value
# overrides for `rollout train`, e.g. "rollout.max_num_seqs=512").
# The model is random (`rollout init-model --preset qwen2.5-0.5b`, 24 layers, hidden
# 896, 14/2 heads). Its vocabulary is the tokenizer's: VOCAB=tiny (default) uses
# tests/data/tiny-qwen2's, 514 entries, so the LM head and log-softmax are nearly free;
# VOCAB=qwen widens that tokenizer to Qwen2.5's 151,936 entries (hf_grpo_step.py vocab),
# which gives Qwen2.5-0.5B's full shape, 494M parameters. Writes ours.log, hf.log,
# hf.json, metrics.jsonl and summary.txt to OUT_DIR.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
source_dir=$(cd "$(dirname "$0")/.." && pwd)
rollout=$(cd "$1" && pwd)/cli/rollout
mkdir -p "$2"
out=$(cd "$2" && pwd)
vocab=${VOCAB:-tiny}
preset=${PRESET:-qwen2.5-0.5b}
case "$preset" in
  qwen2.5-0.5b) recipe=$source_dir/recipes/grpo_gsm8k_qwen2.5_0.5b.yaml ;;
  qwen3-0.6b) recipe=$source_dir/recipes/grpo_gsm8k_qwen3_0.6b.yaml ;;
  *) echo "PRESET must be qwen2.5-0.5b or qwen3-0.6b" >&2; exit 2 ;;
esac
work=${WORK:-/tmp/grpo_step_bench_${preset}_$vocab}
steps=${STEPS:-3}
hf_steps=${HF_STEPS:-2}
batch=256 n=8 prompt_tokens=128 response_tokens=256 mini_batch=64 micro_batch=16 log_prob_micro_batch=64
mkdir -p "$work"

tokenizer=$source_dir/tests/data/tiny-qwen2
case "$vocab" in
  tiny) ;;
  qwen)
    python3 "$source_dir/bench/hf_grpo_step.py" vocab --source "$tokenizer" --out "$work/tokenizer"
    tokenizer=$work/tokenizer ;;
  *) echo "VOCAB must be tiny or qwen" >&2; exit 2 ;;
esac
if [ ! -f "$work/model/model.safetensors" ]; then
  "$rollout" init-model --preset "$preset" --tokenizer "$tokenizer" --dtype bfloat16 --out "$work/model"
fi
prompt_count=$((batch * (steps > hf_steps ? steps : hf_steps)))
python3 "$source_dir/bench/hf_grpo_step.py" prompts --model "$work/model" --count "$prompt_count" \
  --tokens "$prompt_tokens" --out "$work/prompts.jsonl"

if [ "${SKIP_OURS:-0}" != 1 ]; then
  rm -rf "$work/run" && mkdir -p "$work/run"
  if ! (cd "$work/run" && "$rollout" train "$recipe" "data.train_files=[$work/prompts.jsonl]" "data.val_files=[]" \
    "actor.model.path=$work/model" trainer.device=cuda "trainer.total_training_steps=$steps" \
    "data.train_batch_size=$batch" "rollout.n=$n" "data.max_prompt_length=$prompt_tokens" \
    "data.max_response_length=$response_tokens" rollout.ignore_eos=true actor.model.dtype=bfloat16 \
    rollout.dtype=bfloat16 "actor.ppo_mini_batch_size=$mini_batch" \
    "actor.ppo_micro_batch_size_per_gpu=$micro_batch" \
    "rollout.log_prob_micro_batch_size_per_gpu=$log_prob_micro_batch" \
    "ref.log_prob_micro_batch_size_per_gpu=$log_prob_micro_batch" trainer.val_before_train=false \
    trainer.test_freq=-1 trainer.save_freq=-1 trainer.resume_mode=disable \
    "trainer.logger=[console,jsonl]" trainer.experiment_name=grpo_step_bench ${OURS_OVERRIDES:-}) 2>&1 | tee "$out/ours.log"; then
    echo "rollout train failed; its output is in $out/ours.log" >&2
  fi
  metrics=$work/run/jsonl_log/rollout_gsm8k/grpo_step_bench/metrics.jsonl
  if [ -f "$metrics" ]; then cp "$metrics" "$out/metrics.jsonl"; fi
fi

if [ "${SKIP_HF:-0}" != 1 ]; then
  PYTHONUNBUFFERED=1 python3 "$source_dir/bench/hf_grpo_step.py" step --model "$work/model" \
    --prompts "$work/prompts.jsonl" --json "$out/hf.json" --steps "$hf_steps" --batch "$batch" --n "$n" \
    --response-length "$response_tokens" --mini-batch "$mini_batch" --micro-batch "${HF_MICRO_BATCH:-$micro_batch}" \
    --log-prob-micro-batch "$log_prob_micro_batch" 2>&1 | tee "$out/hf.log" || echo "the HF step failed" >&2
fi

# The figures: ours averaged over steps 2..STEPS, HF over its timed steps (after the
# first when there are several).
python3 - "$out" "$work/model" "$preset" "$batch" "$n" "$prompt_tokens" "$response_tokens" "$mini_batch" <<'EOF' | tee "$out/summary.txt"
import json, os, sys
out, model, preset = sys.argv[1], sys.argv[2], sys.argv[3]
batch, n, prompt_tokens, response_tokens, mini_batch = map(int, sys.argv[4:])
phases = ["gen", "reward", "old_log_prob", "ref", "adv", "update_actor", "step"]
def mean(rows, key):
    values = [r[key] for r in rows if key in r]
    return sum(values) / len(values) if values else float("nan")
ours = hf = None
if os.path.exists(f"{out}/metrics.jsonl"):
    rows = [json.loads(l) for l in open(f"{out}/metrics.jsonl") if l.strip()]
    rows = [r for r in rows if "timing_s/step" in r]
    steady = rows[1:] or rows
    ours = {p: mean(steady, f"timing_s/{p}") for p in phases}
    print(f"ours: {len(rows)} steps, figures from steps {steady[0]['step']}..{steady[-1]['step']}; "
          f"prompt_length/mean {mean(steady, 'prompt_length/mean'):.1f}, "
          f"response_length/mean {mean(steady, 'response_length/mean'):.1f}, "
          f"perf/throughput {mean(steady, 'perf/throughput'):.0f} tok/s; "
          "step times " + ", ".join(f"{r['timing_s/step']:.2f}" for r in rows))
if os.path.exists(f"{out}/hf.json"):
    report = json.load(open(f"{out}/hf.json"))
    steady = report["steps"][1:] or report["steps"]
    hf = {p: mean(steady, p) for p in phases}
    print(f"hf:   {len(report['steps'])} steps (torch {report['torch']}, transformers {report['transformers']}, "
          f"generate {report['gen_prompts_per_call']} prompts a call, peak {report['peak_gib']:.1f} GiB); "
          "step times " + ", ".join(f"{r['step']:.2f}" for r in report["steps"]))
tokens = batch * n * (prompt_tokens + response_tokens)
generated = batch * n * response_tokens
config = json.load(open(f"{model}/config.json"))
# Bounds on one H200 at rates measured there (4.3 TB/s HBM copies, 790 TFLOP/s bf16
# matmuls): a decode step takes at least the longer of reading the weights and every
# sequence's KV (and writing the logits) and its FLOPs; prefill (each prompt once) and
# the forward / forward+backward passes take at least their FLOPs.
hidden, layers, vocab = config["hidden_size"], config["num_hidden_layers"], config["vocab_size"]
head_dim = config.get("head_dim") or hidden // config["num_attention_heads"]
q, kv = config["num_attention_heads"] * head_dim, config["num_key_value_heads"] * head_dim
body = layers * (2 * hidden * q + 2 * hidden * kv + 3 * hidden * config["intermediate_size"])
params = body + hidden * vocab
length = prompt_tokens + response_tokens
def flops(tokens, context, lm_head=True):
    """A forward pass over `tokens` tokens that see `context` each on average; lm_head:
    the LM head runs on them too."""
    return tokens * (2 * (params if lm_head else body) + 4 * layers * q * context)
# The scoring passes (old_log_prob, ref; the update's forward, and its backward at twice
# that) at their least work: each prompt once per group, without the LM head, and each
# response after it, as ours packs them (workers/response_scores.h) ...
forward_flops = (flops(batch * prompt_tokens, prompt_tokens / 2, lm_head=False) +
                 flops(batch * n * response_tokens, prompt_tokens + response_tokens / 2))
# ... and as a padded batch has them, every row's prompt with the LM head on every token
# (HF's step does this work).
padded_forward_flops = flops(batch * n * length, length / 2)
gen_seconds = flops(batch * prompt_tokens, prompt_tokens / 2) / 790e12
for s in range(response_tokens):
    seqs, context = batch * n, prompt_tokens + s
    step_bytes = 2 * params + seqs * (context * layers * 2 * kv * 2 + vocab * 2)
    gen_seconds += max(step_bytes / 4.3e12, flops(seqs, context) / 790e12)
# The old-log-prob pass needs only the mini-batches after the first: with one epoch the
# first is trained before any optimizer step, so the update's own forward gives its old
# log-probs (controller/ppo_worker_calls.h, OnPolicyRowsPerRank).
scored_share = (batch - mini_batch) / batch
bound = {"gen": gen_seconds, "reward": 0, "old_log_prob": scored_share * forward_flops / 790e12,
         "ref": forward_flops / 790e12, "adv": 0, "update_actor": 3 * forward_flops / 790e12}
padded_bound_step = gen_seconds + 5 * padded_forward_flops / 790e12
bound["step"] = sum(bound.values())
print(f"\nGRPO step: {batch} prompts x n={n}, {prompt_tokens} + {response_tokens} tokens, bf16, one GPU, "
      f"{preset} shape with vocabulary {vocab} ({params / 1e6:.0f}M parameters in matmuls)")
print(f"{'phase':<14}{'ours s':>10}{'HF s':>10}{'HF/ours':>10}{'bound s':>10}{'bound/ours':>12}{'bound/HF':>10}")
def fraction(bound_s, seconds):  # of the bound reached; "-" where there is none
    return f"{bound_s / seconds:.2f}" if bound_s and seconds == seconds and seconds > 0 else "-"
for p in phases:
    o = ours[p] if ours else float("nan")
    r = hf[p] if hf else float("nan")
    ratio = r / o if ours and hf and o > 0 else float("nan")
    print(f"{p:<14}{o:>10.3f}{r:>10.3f}{ratio:>10.2f}{bound[p]:>10.3f}{fraction(bound[p], o):>12}"
          f"{fraction(bound[p], r):>10}")
print(f"{'(padded)':<14}{'':>30}{padded_bound_step:>10.3f}  the step's bound with every row's prompt "
      "scored and the LM head on every token, as a padded batch has them")
for name, t in (("ours", ours), ("HF", hf)):
    if t:
        print(f"{name}: {tokens / t['step']:,.0f} tok/s a step (prompt + response), "
              f"generation {generated / t['gen']:,.0f} tok/s")
if ours and hf:
    ratio = hf["step"] / ours["step"]
    print(f"step ratio HF/ours {ratio:.2f}x; target 5x: {ratio / 5:.2f} of the target "
          f"({'met' if ratio >= 5 else 'NOT met'}); 5x needs a step of {hf['step'] / 5:.2f} s, "
          f"the bound is {bound['step']:.2f} s (HF/bound {hf['step'] / bound['step']:.1f}x): a step "
          f"of 5x runs at {bound['step'] / (hf['step'] / 5):.2f} of the bound")
EOF
