# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The host's cost of the training loop around the model, on the CPU: a proxy for what keeps a GPU waiting between
steps (issue 46, item 3). A tiny GPT-1 classifier, so the model's own work is small beside the loop's:

* `bare`: a plain PyTorch loop — DataLoader, forward, backward, gradient clipping, AdamW, zero_grad;
* `trainer`: the same model, data, collator and optimizer settings under `GPT1Trainer` (its callbacks, logging every
  10 steps, the speed meter, checkpoint bookkeeping).

Both report the median milliseconds per step (consecutive step ends) and the model's share (forward + backward +
optimizer, timed inside the bare loop); `trainer_overhead_ms` is the difference of the medians, side by side in one
process.

    python benchmarks/bench_loop_overhead.py --json benchmarks/results/loop_overhead_cpu.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

import torch
from torch.utils.data import DataLoader
from transformers import TrainerCallback

BATCH, LENGTH = 8, 16


def tiny_model():
    from hf_gpt1 import GPT1Config, GPT1ForSequenceClassification

    torch.manual_seed(0)
    config = GPT1Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=4, num_labels=2,
                        start_token_id=60, delimiter_token_id=61, extract_token_id=62, pad_token_id=63)  # fmt: skip
    return GPT1ForSequenceClassification(config)


def rows(n: int) -> list[dict]:
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 60, (n, LENGTH), generator=generator)
    ids[:, 0], ids[:, -1] = 60, 62
    return [{"input_ids": row, "labels": int(i % 2)} for i, row in enumerate(ids)]


def collate(batch: list[dict]) -> dict[str, torch.Tensor]:
    return {
        "input_ids": torch.stack([r["input_ids"] for r in batch]),
        "labels": torch.tensor([r["labels"] for r in batch]),
    }


def bare_loop(data: list[dict], steps: int) -> dict:
    model = tiny_model().train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=6.25e-5, weight_decay=0.01)
    loader = DataLoader(data, batch_size=BATCH, shuffle=True, drop_last=True, collate_fn=collate)
    ends, model_ms = [time.perf_counter()], []
    batches = iter(loader)
    for _ in range(steps):
        batch = next(batches)
        started = time.perf_counter()
        model(**batch).loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        model_ms.append((time.perf_counter() - started) * 1000)
        ends.append(time.perf_counter())
    return {"ms_per_step": _median_ms(ends), "model_ms": statistics.median(model_ms[steps // 10 :])}


class _StepEnds(TrainerCallback):
    def __init__(self):
        self.ends = []

    def on_step_end(self, args, state, control, **kwargs):
        self.ends.append(time.perf_counter())


def trainer_loop(data: list[dict], steps: int) -> dict:
    from hf_gpt1.training.arguments import GPT1TrainingArguments
    from hf_gpt1.training.trainer import GPT1Trainer

    ends = _StepEnds()
    with tempfile.TemporaryDirectory() as out:
        args = GPT1TrainingArguments(
            output_dir=out, max_steps=steps, per_device_train_batch_size=BATCH, logging_steps=10,
            report_to="none", disable_tqdm=True, eval_strategy="no", save_strategy="no", do_eval=False,
            do_predict=False, torch_compile=False, dataloader_num_workers=0,
        )  # fmt: skip
        trainer = GPT1Trainer(model=tiny_model(), args=args, train_dataset=data, data_collator=collate,
                              callbacks=[ends])  # fmt: skip
        trainer.train()
    return {"ms_per_step": _median_ms(ends.ends)}


def _median_ms(ends: list[float]) -> float:
    steps = [(b - a) * 1000 for a, b in zip(ends, ends[1:])]
    return statistics.median(steps[len(steps) // 10 :])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    data = rows(BATCH * args.steps)
    result = {
        "steps": args.steps,
        "batch": BATCH,
        "length": LENGTH,
        "threads": args.threads,
        "torch": torch.__version__,
    }
    # alternated, so both see the same machine
    runs = [(bare_loop(data, args.steps), trainer_loop(data, args.steps)) for _ in range(2)]
    result["bare"] = min((bare for bare, _ in runs), key=lambda r: r["ms_per_step"])
    result["trainer"] = min((trainer for _, trainer in runs), key=lambda r: r["ms_per_step"])
    result["trainer_overhead_ms"] = result["trainer"]["ms_per_step"] - result["bare"]["ms_per_step"]
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as file:
            json.dump(result, file, indent=1)
    return result


if __name__ == "__main__":
    main()
