#!/usr/bin/env python3
"""One GRPO step in plain PyTorch + Hugging Face transformers: the reference that
bench/grpo_step_bench.sh compares `rollout train` with (DESIGN.md §2, §7).

  hf_grpo_step.py vocab --source DIR --out DIR [--size 151936]
  hf_grpo_step.py prompts --model DIR --count 1024 --tokens 128 --out prompts.jsonl
  hf_grpo_step.py step --model DIR --prompts prompts.jsonl [--json OUT] [shape flags]

`vocab` widens a tokenizer to Qwen2.5's vocabulary size, so that `rollout init-model`
makes a model of Qwen2.5-0.5B's full shape (embedding and LM head included).
`prompts` writes gsm8k-style text prompts (data_source openai/gsm8k) that each encode
to exactly --tokens tokens with the model's tokenizer, so neither side pads.

`step` runs verl's step order, as controller/ppo_trainer.cc does, on one GPU:
  gen           model.generate: sampling at temperature 1 (no top-k/top-p), n responses
                per prompt (num_return_sequences), EOS suppressed until --response-length
                (min_new_tokens) like rollout.ignore_eos; as many prompts per call as fit
  reward        verl's gsm8k rule (last "#### <number>" in the last 300 characters)
  old_log_prob  policy log-probs and entropy (verl computes both there), no grad
  ref           log-probs under a frozen second copy of the model
  adv           GRPO: (score - group mean) / (group std + 1e-6)
  update_actor  PPO clipped loss (dual clip 3) + low_var_kl loss, token-mean per
                micro-batch scaled by micro/mini rows (verl's aggregation), gradient
                accumulation over micro-batches, clip_grad_norm_ 1.0, torch.optim.AdamW
                once per mini-batch
The policy and the reference load with AutoModelForCausalLM in bfloat16 with SDPA
attention. Each phase is timed with the GPU synchronised at both ends. A small warm-up
step (8 prompts, 16 tokens, one mini-batch) runs first, untimed; then --steps full
steps. The first full-size generate is ~3x slower than later ones (H200, transformers
5.17), so the benchmark times two steps and reports the second.
"""
import argparse
import json
import os
import random
import re
import sys
import time

NAMES = ["Natalia", "Weng", "Betty", "Julie", "James", "Mark", "Albert", "Ken", "Alexis", "Tina"]
ITEMS = ["clips", "apples", "books", "marbles", "pencils", "cookies", "stickers", "eggs", "cards"]


def gsm8k_like_text(rng):
    """A long run of gsm8k-flavoured sentences (ASCII only, so any token prefix decodes
    to text that encodes back to the same tokens except at the cut)."""
    parts = []
    for _ in range(30):
        name, item = rng.choice(NAMES), rng.choice(ITEMS)
        a, b, c = rng.randint(2, 99), rng.randint(2, 30), rng.randint(1, 12)
        parts.append(rng.choice([
            f"{name} has {a} {item}. ",
            f"{name} buys {b} more {item} at ${c} each. ",
            f"Each box holds {b} {item}, and {name} fills {c} boxes. ",
            f"{name} gives away {c} {item} every day for {b} days. ",
            f"How many {item} does {name} have left at the end of the week? ",
        ]))
    return "".join(parts)


def bytes_to_unicode():
    """GPT-2's byte-level alphabet: byte -> the printable character tokenizer.json uses."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) + \
        list(range(ord("\u00ae"), ord("\u00ff") + 1))
    cs = bs[:]
    extra = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def widen_vocab(args):
    """Copies a byte-level BPE tokenizer with merges appended until it has --size
    entries (Qwen2.5's 151,936 by default), so a model made for it has Qwen2.5's
    embedding and LM head. The new merges join pairs, then triples, of text bytes
    (letters, digits, space, punctuation first), so text encodes to ~2-3 bytes a token."""
    import shutil

    os.makedirs(args.out, exist_ok=True)
    for name in os.listdir(args.source):
        if name in ("tokenizer_config.json", "special_tokens_map.json") or name.endswith(".jinja"):
            shutil.copy(os.path.join(args.source, name), args.out)
    with open(os.path.join(args.source, "tokenizer.json")) as f:
        tokenizer = json.load(f)
    vocab, merges = tokenizer["model"]["vocab"], tokenizer["model"]["merges"]
    as_pairs = bool(merges) and isinstance(merges[0], list)
    alphabet = bytes_to_unicode()
    text_bytes = sorted(range(256), key=lambda b: (not chr(b).isalpha(), not chr(b).isdigit(), b != 32,
                                                   not 33 <= b < 127, b))
    order = [alphabet[b] for b in text_bytes]
    added = len(tokenizer.get("added_tokens", []))
    next_id = max(vocab.values()) + 1

    def add(left, right):
        nonlocal next_id
        if next_id >= args.size or left + right in vocab:
            return
        vocab[left + right] = next_id
        merges.append([left, right] if as_pairs else f"{left} {right}")
        next_id += 1

    for a in order:
        for b in order:
            add(a, b)
    pairs = [a + b for a in order for b in order]
    for ab in pairs:
        for c in order:
            add(ab, c)
    if next_id != args.size:
        sys.exit(f"could only reach {next_id} entries")
    with open(os.path.join(args.out, "tokenizer.json"), "w") as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    print(f"wrote a tokenizer of {next_id} entries ({added} added tokens) to {args.out}")


def make_prompts(args):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.path.join(args.model, "tokenizer.json"))
    rng = random.Random(args.seed)
    rows = []
    while len(rows) < args.count:
        ids = tokenizer.encode(gsm8k_like_text(rng), add_special_tokens=False).ids
        if len(ids) < args.tokens:
            continue
        text = tokenizer.decode(ids[:args.tokens])
        if len(tokenizer.encode(text, add_special_tokens=False).ids) != args.tokens:
            continue  # the cut split a merge; try another text
        rows.append({"prompt": text, "data_source": "openai/gsm8k", "ground_truth": str(rng.randint(1, 999))})
    with open(args.out, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(f"wrote {len(rows)} prompts of {args.tokens} tokens to {args.out}")


GSM8K_STRICT = re.compile(r"#### (\-?[0-9\.\,]+)")


def gsm8k_score(response, ground_truth):
    matches = GSM8K_STRICT.findall(response[-300:])
    if not matches:
        return 0.0
    return 1.0 if matches[-1].replace(",", "").replace("$", "") == ground_truth else 0.0


class Phases:
    """Wall time per phase, the GPU synchronised at both ends."""

    def __init__(self, torch):
        self.torch = torch
        self.seconds = {}

    def run(self, name, fn):
        self.torch.cuda.synchronize()
        start = time.perf_counter()
        result = fn()
        self.torch.cuda.synchronize()
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
        return result


class Step:
    def __init__(self, args):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.args = args
        load = dict(dtype=torch.bfloat16, attn_implementation="sdpa")
        self.model = AutoModelForCausalLM.from_pretrained(args.model, **load).cuda()
        self.ref = AutoModelForCausalLM.from_pretrained(args.model, **load).cuda().eval()
        self.ref.requires_grad_(False)
        self.tokenizer = AutoTokenizer.from_pretrained(args.model)
        self.tokenizer.padding_side = "left"
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8,
                                           weight_decay=0.01)
        self.gen_prompts = args.gen_prompts  # shrinks on OOM: "as large as fits"
        self.eos = self.tokenizer.eos_token_id

    def generate(self, prompts, new_tokens):
        torch = self.torch
        sequences = []
        i = 0
        self.model.eval()
        while i < len(prompts):
            chunk = prompts[i:i + self.gen_prompts]
            enc = self.tokenizer(chunk, return_tensors="pt", padding=True).to("cuda")
            try:
                with torch.no_grad():
                    out = self.model.generate(**enc, do_sample=True, temperature=1.0, top_k=0, top_p=1.0,
                                              max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                              num_return_sequences=self.args.n,
                                              pad_token_id=self.tokenizer.pad_token_id)
            except torch.cuda.OutOfMemoryError:
                if self.gen_prompts == 1:
                    raise
                self.gen_prompts //= 2
                torch.cuda.empty_cache()
                print(f"generate: out of memory, {self.gen_prompts} prompts a call from now on", file=sys.stderr)
                continue
            sequences.append(out)
            i += len(chunk)
        return torch.cat(sequences)

    def log_probs(self, model, sequences, prompt_len, micro, entropy=False):
        """[B, R] float32 log-probs of the response tokens (and [B, R] entropies)."""
        torch = self.torch
        lps, ents = [], []
        with torch.no_grad():
            for seq in sequences.split(micro):
                logits = model(input_ids=seq).logits[:, prompt_len - 1:-1].float()
                logp = logits.log_softmax(-1)
                lps.append(logp.gather(-1, seq[:, prompt_len:, None]).squeeze(-1))
                if entropy:
                    ents.append(-(logp.exp() * logp).sum(-1))
        return torch.cat(lps), (torch.cat(ents) if entropy else None)

    def update(self, sequences, prompt_len, mask, old, ref, adv, mini_rows, micro_rows):
        torch = self.torch
        a = self.args
        self.model.train()
        stats = []
        for m0 in range(0, sequences.shape[0], mini_rows):
            self.optimizer.zero_grad(set_to_none=True)
            for u0 in range(m0, min(m0 + mini_rows, sequences.shape[0]), micro_rows):
                rows = slice(u0, min(u0 + micro_rows, m0 + mini_rows))
                seq, m = sequences[rows], mask[rows]
                logits = self.model(input_ids=seq).logits[:, prompt_len - 1:-1].float()
                logp = logits.log_softmax(-1).gather(-1, seq[:, prompt_len:, None]).squeeze(-1)
                ratio = torch.exp(logp - old[rows])
                A = adv[rows]
                pg = torch.maximum(-A * ratio, -A * ratio.clamp(1 - a.clip_ratio, 1 + a.clip_ratio))
                pg = torch.where(A < 0, torch.minimum(pg, -A * a.clip_ratio_c), pg)
                kl = ref[rows] - logp  # low_var_kl (k3), clamped like verl
                low_var_kl = (torch.exp(kl) - kl - 1).clamp(-10, 10)
                per_token = pg + a.kl_coef * low_var_kl
                loss = (per_token * m).sum() / m.sum().clamp(min=1) * (seq.shape[0] / mini_rows)
                loss.backward()
            stats.append(torch.nn.utils.clip_grad_norm_(self.model.parameters(), a.grad_clip))
            self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return torch.stack(stats).float().mean().item()

    def run(self, prompts, truths, new_tokens, mini_prompts):
        """One GRPO step; returns {phase: seconds} with "step" the sum."""
        torch = self.torch
        a = self.args
        phases = Phases(torch)
        sequences = phases.run("gen", lambda: self.generate(prompts, new_tokens))
        prompt_len = sequences.shape[1] - new_tokens

        def reward():
            texts = self.tokenizer.batch_decode(sequences[:, prompt_len:], skip_special_tokens=True)
            scores = [gsm8k_score(t, truths[i // a.n]) for i, t in enumerate(texts)]
            return torch.tensor(scores, device="cuda")

        scores = phases.run("reward", reward)
        response = sequences[:, prompt_len:]
        is_eos = (response == self.eos).int()
        mask = ((is_eos.cumsum(1) - is_eos) == 0).float()  # up to and including the first EOS
        old, _ = phases.run("old_log_prob",
                            lambda: self.log_probs(self.model, sequences, prompt_len, a.log_prob_micro_batch,
                                                   entropy=True))
        ref, _ = phases.run("ref", lambda: self.log_probs(self.ref, sequences, prompt_len, a.log_prob_micro_batch))

        def advantages():
            groups = scores.view(-1, a.n)
            normed = (groups - groups.mean(1, keepdim=True)) / (groups.std(1, keepdim=True) + 1e-6)
            return normed.reshape(-1, 1) * mask

        adv = phases.run("adv", advantages)
        phases.run("update_actor", lambda: self.update(sequences, prompt_len, mask, old, ref, adv,
                                                       mini_prompts * a.n, a.micro_batch))
        result = dict(phases.seconds)
        result["step"] = sum(phases.seconds.values())
        result["tokens"] = float(sequences.numel())
        result["prompt_len"] = prompt_len
        result["response_tokens"] = mask.sum().item()
        return result


def run_step(args):
    import torch
    import transformers

    rows = [json.loads(line) for line in open(args.prompts) if line.strip()]
    need = args.batch * args.steps
    if len(rows) < need:
        sys.exit(f"{args.prompts} has {len(rows)} prompts; {args.steps} steps of {args.batch} need {need}")
    step = Step(args)
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {torch.cuda.get_device_name()}, "
          f"model {args.model}, {sum(p.numel() for p in step.model.parameters()) / 1e6:.1f}M parameters, "
          f"{args.batch} prompts x n={args.n}, {args.response_length} new tokens, mini-batch {args.mini_batch} "
          f"prompts, micro-batch {args.micro_batch}, log-prob micro-batch {args.log_prob_micro_batch}", flush=True)
    lengths = {len(step.tokenizer(r["prompt"]).input_ids) for r in rows[:need]}
    print(f"prompt lengths (tokens): {sorted(lengths)}", flush=True)

    warm = step.run([r["prompt"] for r in rows[:8]], [r["ground_truth"] for r in rows[:8]], 16, 8)
    print(f"warm-up (8 prompts, 16 tokens): {warm['step']:.2f} s", flush=True)
    torch.cuda.reset_peak_memory_stats()
    steps = []
    for s in range(args.steps):
        batch = rows[s * args.batch:(s + 1) * args.batch]
        result = step.run([r["prompt"] for r in batch], [r["ground_truth"] for r in batch], args.response_length,
                          args.mini_batch)
        steps.append(result)
        print(f"step {s + 1}: " + ", ".join(f"{k} {v:.3f}" for k, v in result.items()) +
              f" | {result['tokens'] / result['step']:.0f} tok/s, generate {step.gen_prompts} prompts a call",
              flush=True)
    peak = torch.cuda.max_memory_allocated() / 2**30
    print(f"peak GPU memory {peak:.1f} GiB", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"steps": steps, "gen_prompts_per_call": step.gen_prompts, "peak_gib": peak,
                       "torch": torch.__version__, "transformers": transformers.__version__}, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prompts", help="write prompts of an exact token length")
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--count", type=int, default=1024)
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--seed", type=int, default=1)
    v = sub.add_parser("vocab", help="widen a byte-level BPE tokenizer to a vocabulary size")
    v.add_argument("--source", required=True, help="directory with tokenizer.json")
    v.add_argument("--out", required=True)
    v.add_argument("--size", type=int, default=151936)
    s = sub.add_parser("step", help="time GRPO steps")
    s.add_argument("--model", required=True)
    s.add_argument("--prompts", required=True)
    s.add_argument("--json", help="write the per-step phase times here")
    s.add_argument("--steps", type=int, default=1)
    s.add_argument("--batch", type=int, default=256, help="prompts a step (data.train_batch_size)")
    s.add_argument("--n", type=int, default=8, help="responses a prompt (rollout.n)")
    s.add_argument("--response-length", type=int, default=256)
    s.add_argument("--mini-batch", type=int, default=64, help="prompts (actor.ppo_mini_batch_size)")
    s.add_argument("--micro-batch", type=int, default=16, help="rows (actor.ppo_micro_batch_size_per_gpu)")
    s.add_argument("--log-prob-micro-batch", type=int, default=64, help="rows (log_prob_micro_batch_size_per_gpu)")
    s.add_argument("--gen-prompts", type=int, default=256, help="prompts a generate call at most (halved on OOM)")
    s.add_argument("--lr", type=float, default=1e-6)
    s.add_argument("--clip-ratio", type=float, default=0.2)
    s.add_argument("--clip-ratio-c", type=float, default=3.0)
    s.add_argument("--kl-coef", type=float, default=0.001)
    s.add_argument("--grad-clip", type=float, default=1.0)
    args = parser.parse_args()
    if args.command == "prompts":
        make_prompts(args)
    elif args.command == "vocab":
        widen_vocab(args)
    else:
        run_step(args)


if __name__ == "__main__":
    main()
