#!/usr/bin/env python3
"""Checks that HF transformers (and peft) load what `rollout ckpt export` writes, with
the same outputs as our model code. Run on a machine with torch, transformers and
peft, after exporting:

    rollout ckpt export CKPT --hf /tmp/exported                # full or LoRA merged
    rollout ckpt export CKPT --hf /tmp/adapter --adapter       # LoRA runs only
    python3 bench/check_hf_export.py --rollout build/cli/rollout --model /tmp/exported \
        [--adapter /tmp/adapter]

On a host without the rollout build, score on ours first and bring the output along:
`rollout score --model /tmp/exported --input in.jsonl --output ours.jsonl` there, then
`--ours ours.jsonl` here (and `--base DIR` when the adapter's base model lives elsewhere).

Our side: `rollout score` on the exported directory (float32, CPU) gives per-token
log-probs of random sequences. transformers' AutoModelForCausalLM on the same
directory must give the same log-probs; with --adapter, peft's PeftModel (the base
named by adapter_config.json's base_model_name_or_path plus the adapter) must give
those of the merged export. Prints the max |log-prob diff| per check and exits
non-zero when one exceeds --tolerance.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch
from transformers import AutoModelForCausalLM


def random_sequences(model_dir, count=4, length=48):
    vocab = json.load(open(os.path.join(model_dir, "config.json")))["vocab_size"]
    gen = torch.Generator().manual_seed(0)
    return [torch.randint(0, vocab, (length,), generator=gen).tolist() for _ in range(count)]


def our_log_probs(rollout, model_dir, seqs, tmp):
    inputs, outputs = os.path.join(tmp, "in.jsonl"), os.path.join(tmp, "out.jsonl")
    with open(inputs, "w") as f:
        for s in seqs:
            f.write(json.dumps({"ids": s}) + "\n")
    subprocess.run([rollout, "score", "--model", model_dir, "--input", inputs, "--output", outputs,
                    "--device", "cpu", "--dtype", "float32"], check=True)
    return [torch.tensor(json.loads(line)["log_probs"]) for line in open(outputs)]


def hf_log_probs(model, seqs):
    result = []
    with torch.no_grad():
        for s in seqs:
            ids = torch.tensor([s])
            logp = model(ids).logits[0].float().log_softmax(-1)
            result.append(logp[:-1].gather(-1, ids[0, 1:, None])[:, 0])
    return result


def max_diff(a, b):
    return max((x - y).abs().max().item() for x, y in zip(a, b))


def check(name, diff, tolerance):
    ok = diff <= tolerance
    print(f"{'PASS' if ok else 'FAIL'} {name}: max |log-prob diff| {diff:.2e} (tolerance {tolerance:g})")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollout", default="build/cli/rollout", help="the rollout binary")
    parser.add_argument("--model", required=True, help="an exported HF directory (full or merged)")
    parser.add_argument("--adapter", help="the --adapter export of the same LoRA checkpoint")
    parser.add_argument("--ours", help="`rollout score` output for --model, made elsewhere")
    parser.add_argument("--base", help="the adapter's base model (default: its adapter_config.json's)")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()

    if args.ours:
        lines = [json.loads(line) for line in open(args.ours)]
        seqs, ours = [l["ids"] for l in lines], [torch.tensor(l["log_probs"]) for l in lines]
    else:
        seqs = random_sequences(args.model)
        with tempfile.TemporaryDirectory() as tmp:
            ours = our_log_probs(args.rollout, args.model, seqs, tmp)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    ok = check(f"transformers loads {args.model}", max_diff(hf_log_probs(model, seqs), ours),
               args.tolerance)
    if args.adapter:
        from peft import PeftModel
        base_path = args.base or json.load(open(os.path.join(args.adapter, "adapter_config.json")))[
            "base_model_name_or_path"]
        base = AutoModelForCausalLM.from_pretrained(base_path, dtype=torch.float32)
        adapted = PeftModel.from_pretrained(base, args.adapter)
        ok &= check(f"peft's base + {args.adapter} equals the merged export",
                    max_diff(hf_log_probs(adapted, seqs), ours), args.tolerance)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
