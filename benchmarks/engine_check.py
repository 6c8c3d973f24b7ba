# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""A sharding engine on one GPU: gpu_check's `fsdp`, `deepspeed_zero2` and `deepspeed_zero3` stages. `accelerate
launch` with the engine's config in `recipes/configs/accelerate/` and one process, for the pretrain recipe (and, under
FSDP, the glue recipe) with `--bf16`: the engine owns mixed precision (fp32 weights, bf16 compute), the run keeps
Trainer's own optimizer (`hf_gpt1.training.launch.precision_engine`):

1. pretrain A: 12 updates, a sharded checkpoint every 3;
2. pretrain B: the same run, killed (SIGKILL to its process group) once checkpoint-3 is complete, then `--resume`:
   its losses after the checkpoint against A's (the same seed and data);
3. the final models load with `from_pretrained`; under FSDP the glue run trains SST-2 for 6 updates.

Prints one JSON line. `--dry-run` (no CUDA: the engines shard over GPUs) prints the commands and skips them, saying
so.

    python benchmarks/engine_check.py --engine fsdp|deepspeed_zero2|deepspeed_zero3 --work DIR [--dry-run]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
CONFIGS = REPO / "recipes" / "configs" / "accelerate"
ENGINES = ("fsdp", "deepspeed_zero2", "deepspeed_zero3")  # their accelerate configs' names
COMMON = ["--report_to", "none", "--disable_tqdm", "true", "--logging_steps", "1", "--bf16", "--seed", "0"]


def launch(engine: str, recipe: str) -> list[str]:
    config = CONFIGS / f"{engine}.yaml"
    return [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(config), "--num_processes", "1",
            str(REPO / "recipes" / recipe)]  # fmt: skip


def commands(engine: str, work: Path) -> dict[str, list[str]]:
    corpus = str(DATA / "text" / "wikitext-2" / "valid.txt")
    pretrain = [*launch(engine, "pretrain.py"), "--train_files", corpus]
    pretrain += ["--tokenizer_name_or_path", str(work / "gpt1"), "--per_device_train_batch_size", "8", "--max_steps",
                 "12", "--save_steps", "3", "--eval_strategy", "no", "--validation_split_percentage", "5",
                 "--torch_compile", "false", *COMMON]  # fmt: skip
    runs = {
        "pretrain_a": [*pretrain, "--output_dir", str(work / f"{engine}_a")],
        "pretrain_b": [*pretrain, "--output_dir", str(work / f"{engine}_b")],
        "pretrain_b_resume": [*pretrain, "--output_dir", str(work / f"{engine}_b"), "--resume"],
    }
    if engine == "fsdp":
        runs["glue"] = [*launch(engine, "glue.py"), "--task", "sst2", "--data_dir", str(DATA / "glue"),
                        "--model_name_or_path", str(work / "gpt1"), "--max_steps", "6", "--max_train_samples", "512",
                        "--do_eval", "false", "--do_predict", "false", "--save_strategy", "no", "--output_dir",
                        str(work / f"{engine}_glue"), *COMMON]  # fmt: skip
    return runs


def run(command: list[str], limit: float, kill_when: Path | None = None) -> dict:
    """Runs `command` in its own process group; with `kill_when`, SIGKILLs the group once that file exists."""
    started = time.time()
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)  # fmt: skip
    killed = False
    if kill_when is not None:
        while process.poll() is None and time.time() - started < limit and not kill_when.exists():
            time.sleep(0.2)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            killed = True
    try:
        output, _ = process.communicate(timeout=max(limit - (time.time() - started), 1))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
    # the launcher's own traceback ends the output: the run's one-line error comes before it
    errors = [line for line in output.splitlines() if line.startswith("error:") or "Error:" in line][:8]
    resumed = [line for line in output.splitlines() if line.startswith("Resuming from")]  # the run's start line
    return {"returncode": process.returncode, "killed": killed, "seconds": round(time.time() - started, 1),
            "errors": errors, "resumed_from": resumed[:1], "output_tail": output[-2500:]}  # fmt: skip


def losses(output_dir: Path) -> dict[int, float]:
    """step → training loss, from the newest checkpoint's trainer_state.json."""
    checkpoints = sorted(output_dir.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    if not checkpoints:
        return {}
    state = json.loads((checkpoints[-1] / "trainer_state.json").read_text())
    return {entry["step"]: entry["loss"] for entry in state["log_history"] if "loss" in entry}


def loads(folder: Path, head: str) -> str | None:
    """None if `from_pretrained` loads `folder`, else the error."""
    import transformers

    import hf_gpt1  # noqa: F401  (registers the GPT-1 classes with the Auto classes)

    try:
        getattr(transformers, head).from_pretrained(folder)
    except Exception as err:  # the stage reports any failure to load
        return f"{type(err).__name__}: {err}"[:500]
    return None


def check(engine: str, work: Path) -> dict:
    steps = commands(engine, work)
    result: dict = {"engine": engine, "runs": {}}
    result["runs"]["pretrain_a"] = run(steps["pretrain_a"], 240)
    if result["runs"]["pretrain_a"]["returncode"] != 0:  # the same launch again would fail alike: stop here
        result["ok"] = False
        return result
    marker = work / f"{engine}_b" / "checkpoint-3" / "checkpoint_complete.json"
    result["runs"]["pretrain_b"] = run(steps["pretrain_b"], 240, kill_when=marker)
    result["runs"]["pretrain_b_resume"] = run(steps["pretrain_b_resume"], 240)
    if "glue" in steps:
        result["runs"]["glue"] = run(steps["glue"], 240)
    a, b = losses(work / f"{engine}_a"), losses(work / f"{engine}_b")
    after = [step for step in sorted(a) if step > 3 and step in b]
    result["losses_a"], result["losses_b"] = a, b
    result["resumed_max_abs_loss_diff"] = max((abs(a[s] - b[s]) for s in after), default=None)
    checkpoint = work / f"{engine}_b" / "checkpoint-3"
    result["sharded_checkpoint_files"] = sorted(str(p.relative_to(checkpoint)) for p in checkpoint.rglob("*"))[:40]
    result["load_errors"] = {"pretrain": loads(work / f"{engine}_b", "AutoModelForCausalLM")}
    if "glue" in steps:
        result["load_errors"]["glue"] = loads(work / f"{engine}_glue", "AutoModelForSequenceClassification")
    result["ok"] = (
        all(r["returncode"] == 0 for k, r in result["runs"].items() if k != "pretrain_b")
        and result["runs"]["pretrain_b"]["killed"]
        and bool(after)
        and sorted(a) == sorted(b)  # the resumed run ends where the uninterrupted one did
        and not any(result["load_errors"].values())
    )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=ENGINES, required=True)
    parser.add_argument("--work", required=True, help="folder holding gpt1/ (gpu_check prepares it)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands; the engines need CUDA")
    args = parser.parse_args(argv)
    work = Path(args.work)
    if args.dry_run:
        shown = {name: " ".join(command) for name, command in commands(args.engine, work).items()}
        skipped = f"{args.engine} shards over CUDA GPUs: the dry run shows the commands only"
        print(json.dumps({"skipped": skipped, **shown}))
        return 0
    result = check(args.engine, work)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
