#!/usr/bin/env python3
"""Checks that HF transformers and peft load what rollout-infra writes, with the same
outputs. Run on a machine with transformers, peft and torch (the GPU host), from the
repository root after building:

    python3 tests/hf/check_hf_parity.py BUILD_DIR

1. export_for_hf writes the tiny fixture model (saved by CausalLM::Save), a LoRA
   adapter in PEFT format (with exclude_modules), a value model and its form as HF
   writes a reward model (Qwen2ForSequenceClassification, read back by our loader), a Llama with Llama 3 RoPE scaling, a Qwen3
   (per-head q/k norms) with its value model, and our float32 outputs for each. transformers (AutoModelForCausalLM,
   AutoModelForTokenClassification, AutoModelForSequenceClassification) and peft (PeftModel) load them; outputs must agree
   within 1e-4.
2. `rollout train` runs two GRPO steps on cuda:0 with that reward model scoring the
   responses (reward_model.enable, each chat re-rendered with its response in the
   reward model's template: reward_model.model.input_tokenizer); transformers' chat
   template and AutoModelForSequenceClassification recompute the dumped scores of the
   first step (all but responses holding special tokens, which the dump's text skips).
3. A LoRA adapter that peft writes (random A and B on q_proj, v_proj and down_proj of the
   fixture; PEFT's full adapter_config.json) is applied by `rollout score --adapter` (what
   actor.model.lora_adapter_path loads): per-token log-probs agree with PeftModel's
   within 1e-4.
4. `rollout init-model --preset qwen2.5-0.5b` and `--preset qwen3-0.6b` (full width
   and depth, the fixture's vocabulary) are scored by `rollout score` on cuda:0 in bfloat16 and by transformers
   in bfloat16; per-token log-probs must agree within bf16 tolerance.
Prints one line per check and exits non-zero on any failure.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import torch
from transformers import AutoModelForCausalLM

FIXTURE = "tests/data/tiny-qwen2"


def check(name, ok, detail):
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
    return ok


def export_checks(build, tmp):
    subprocess.run([f"{build}/tests/export_for_hf", tmp], check=True)
    expect = json.load(open(f"{tmp}/expect.json"))
    ids = torch.tensor([expect["ids"]])
    model = AutoModelForCausalLM.from_pretrained(f"{tmp}/model", dtype=torch.float32)
    with torch.no_grad():
        base = model(ids).logits[0]
    base_err = (base - torch.tensor(expect["base_logits"])).abs().max().item()
    ok = check("transformers loads our saved model", base_err < 1e-4, f"max |logit diff| {base_err:.2e}")
    from peft import PeftModel
    lora = PeftModel.from_pretrained(model, f"{tmp}/adapter")
    with torch.no_grad():
        adapted = lora(ids).logits[0]
    lora_err = (adapted - torch.tensor(expect["lora_logits"])).abs().max().item()
    ok &= check("peft loads our LoRA adapter", lora_err < 1e-4, f"max |logit diff| {lora_err:.2e}")
    # The adapter's exclude_modules leaves layer 1's attention without adapters, as ours.
    adapted_modules = sorted(name for name, module in lora.named_modules() if hasattr(module, "lora_A")
                             and name.endswith(("q_proj", "v_proj", "down_proj")))
    ok &= check("peft applies our adapter's exclude_modules",
                not any(".layers.1.self_attn." in name for name in adapted_modules) and len(adapted_modules) == 4,
                f"adapted: {adapted_modules}")
    from transformers import AutoModelForTokenClassification
    value = AutoModelForTokenClassification.from_pretrained(f"{tmp}/value", dtype=torch.float32)
    with torch.no_grad():
        values = value(ids).logits[0, :, 0]
    value_err = (values - torch.tensor(expect["values"])).abs().max().item()
    ok &= check("transformers loads our value model (token classification)", value_err < 1e-4,
                f"max |value diff| {value_err:.2e}")
    from transformers import AutoModelForSequenceClassification
    reward, info = AutoModelForSequenceClassification.from_pretrained(f"{tmp}/reward", dtype=torch.float32,
                                                                      output_loading_info=True)
    with torch.no_grad():
        reward_score = reward(ids).logits[0, 0].item()
    reward_err = abs(reward_score - expect["reward_score"])
    ok &= check("our value model loads a reward model (sequence classification) as transformers does",
                reward_err < 1e-4 and not any(info.values()),
                f"|score diff| {reward_err:.2e}, loading info {info}")
    llama = AutoModelForCausalLM.from_pretrained(f"{tmp}/llama", dtype=torch.float32)
    with torch.no_grad():
        llama_logits = llama(ids).logits[0]
    llama_err = (llama_logits - torch.tensor(expect["llama_logits"])).abs().max().item()
    ok &= check("transformers loads our Llama (Llama 3 RoPE scaling, untied head)",
                llama_err < 1e-4, f"max |logit diff| {llama_err:.2e}")
    qwen3 = AutoModelForCausalLM.from_pretrained(f"{tmp}/qwen3", dtype=torch.float32)
    with torch.no_grad():
        qwen3_logits = qwen3(ids).logits[0]
    qwen3_err = (qwen3_logits - torch.tensor(expect["qwen3_logits"])).abs().max().item()
    ok &= check(f"transformers loads our Qwen3 as {type(qwen3).__name__}", qwen3_err < 1e-4,
                f"max |logit diff| {qwen3_err:.2e}")
    qwen3_value = AutoModelForTokenClassification.from_pretrained(f"{tmp}/qwen3_value",
                                                                  dtype=torch.float32)
    with torch.no_grad():
        qwen3_values = qwen3_value(ids).logits[0, :, 0]
    qwen3_value_err = (qwen3_values - torch.tensor(expect["qwen3_values"])).abs().max().item()
    ok &= check(f"transformers loads our Qwen3 value model as {type(qwen3_value).__name__}",
                qwen3_value_err < 1e-4, f"max |value diff| {qwen3_value_err:.2e}")
    return ok


def reward_model_train_check(build, tmp):
    """GRPO scored by the exported reward model (export_checks' {tmp}/reward) on cuda:0."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    work = f"{tmp}/rm_train"
    os.makedirs(f"{work}/data")
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        shutil.copy(f"{FIXTURE}/{name}", f"{tmp}/reward/{name}")
    chats = [[{"role": "user", "content": f"What is {i} + {i + 2}?"}] for i in range(10)]
    for split, rows in (("train", chats[:8]), ("val", chats[8:])):
        with open(f"{work}/data/{split}.jsonl", "w") as f:
            for chat in rows:
                f.write(json.dumps({"prompt": chat, "ground_truth": "4", "data_source": "sums"}) + "\n")
    root = os.getcwd()
    subprocess.run([f"{os.path.abspath(build)}/cli/rollout", "train", f"{root}/recipes/grpo_arith.yaml",
                    "data.train_files=[data/train.jsonl]", "data.val_files=[data/val.jsonl]",
                    f"actor.model.path={root}/{FIXTURE}", "trainer.device=cuda", "trainer.total_training_steps=2",
                    "data.train_batch_size=4", "data.shuffle=false", "actor.ppo_mini_batch_size=4",
                    "actor.ppo_micro_batch_size_per_gpu=4", "rollout.n=2", "data.max_response_length=8",
                    "trainer.rollout_data_dir=dumps", "reward_model.enable=true", f"reward_model.model.path={tmp}/reward",
                    "reward_model.model.dtype=float32", f"reward_model.model.input_tokenizer={root}/{FIXTURE}"],
                   cwd=work, check=True, stdout=subprocess.DEVNULL)
    tokenizer = AutoTokenizer.from_pretrained(FIXTURE)
    reward = AutoModelForSequenceClassification.from_pretrained(f"{tmp}/reward", dtype=torch.float32)
    lines = [json.loads(line) for line in open(f"{work}/dumps/1.jsonl")]
    diffs = []
    with torch.no_grad():
        for row, line in enumerate(lines):
            chat = chats[row // 2] + [{"role": "assistant", "content": line["output"]}]
            text = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=False)
            ids = torch.tensor([tokenizer(text, add_special_tokens=False)["input_ids"]])
            diffs.append(abs(reward(ids).logits[0, 0].item() - line["score"]))
    matched = sum(diff < 1e-4 for diff in diffs)
    return check("reward model scores of a GRPO run on cuda:0 match transformers on the re-rendered chats",
                 len(lines) == 8 and matched >= 6,
                 f"{matched} of {len(lines)} within 1e-4; |score diff| by row {[f'{d:.1e}' for d in diffs]}")


def peft_written_adapter_check(build, tmp):
    from peft import LoraConfig, get_peft_model
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(FIXTURE, dtype=torch.float32)
    config = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"],
                        init_lora_weights=False, task_type="CAUSAL_LM")
    peft_model = get_peft_model(model, config)
    adapter = f"{tmp}/peft_written"
    peft_model.save_pretrained(adapter)
    ids = [1, 17, 42, 99, 7, 300, 5]
    with torch.no_grad():
        logp = peft_model(torch.tensor([ids])).logits[0].float().log_softmax(-1)
    want = logp[:-1].gather(-1, torch.tensor(ids[1:])[:, None])[:, 0]
    with open(f"{tmp}/peft_ids.jsonl", "w") as f:
        f.write(json.dumps({"ids": ids}) + "\n")
    run = subprocess.run([f"{build}/cli/rollout", "score", "--model", FIXTURE, "--adapter", adapter,
                          "--input", f"{tmp}/peft_ids.jsonl"], capture_output=True, text=True)
    if run.returncode != 0:
        return check("rollout score --adapter reads the adapter peft writes", False, run.stderr.strip())
    got = torch.tensor(json.loads(run.stdout)["log_probs"])
    err = (got - want).abs().max().item()
    return check("rollout score --adapter reads the adapter peft writes", err < 1e-4,
                 f"max |log-prob diff| {err:.2e}")


def gpu_score_check(build, tmp, preset):
    model_dir = f"{tmp}/{preset}"
    subprocess.run([f"{build}/cli/rollout", "init-model", "--out", model_dir, "--tokenizer",
                    FIXTURE, "--preset", preset, "--seed", "2"], check=True)
    gen = torch.Generator().manual_seed(0)
    seqs = [torch.randint(0, 514, (n,), generator=gen).tolist() for n in (40, 128, 7)]
    with open(f"{tmp}/in.jsonl", "w") as f:
        for s in seqs:
            f.write(json.dumps({"ids": s}) + "\n")
    subprocess.run([f"{build}/cli/rollout", "score", "--model", model_dir, "--input",
                    f"{tmp}/in.jsonl", "--output", f"{tmp}/out.jsonl", "--device", "cuda:0",
                    "--dtype", "bfloat16"], check=True)
    ours = [json.loads(line)["log_probs"] for line in open(f"{tmp}/out.jsonl")]
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16).cuda()
    worst = 0.0
    with torch.no_grad():
        for s, lp in zip(seqs, ours):
            ids = torch.tensor([s]).cuda()
            logp = model(ids).logits[0].float().log_softmax(-1)
            ref = logp[:-1].gather(-1, ids[0, 1:, None])[:, 0].cpu()
            worst = max(worst, (ref - torch.tensor(lp)).abs().max().item())
    return check(f"bf16 CUDA log-probs match transformers ({preset} shape)", worst < 5e-2,
                 f"max |log-prob diff| {worst:.3e}")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    with tempfile.TemporaryDirectory() as tmp:
        ok = export_checks(build, tmp)
        ok &= peft_written_adapter_check(build, tmp)
        if torch.cuda.is_available():
            ok &= reward_model_train_check(build, tmp)
            for preset in ("qwen2.5-0.5b", "qwen3-0.6b"):
                ok &= gpu_score_check(build, tmp, preset)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
