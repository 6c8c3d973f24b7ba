# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Two-process data parallelism (gloo DDP on CPU) gives the same training as one process at the same global batch.

Each recipe runs twice as a real command line: once as `python recipes/<x>.py` with a batch of 8, once as
`accelerate launch --multi_gpu --num_processes 2 ...` with 4 per process (`--multi_gpu` uses torchrun; on a machine
without an accelerator the recipes switch to `use_cpu`, i.e. gloo). Dropout is 0, the data order is seeded
(`--seed`, `--data_seed`, random sampling), and one thread per process. Then:

* the loss logged at every step, the gradient norm, and the held-out loss agree within `LOSS_ATOL` — they differ only
  by the summation order of fp32 reductions (DDP averages two half-batch gradients where one process averages one
  full batch): observed ~1e-6;
* the final weights agree within `WEIGHT_ATOL`;
* classification metrics are identical (the same predictions).

Held-out losses are compared on eval sets that split evenly into global eval batches (2 × 8). Otherwise Trainer's
DDP evaluation is slightly off: the last, uneven batch is padded with repeated rows, and although their predictions
are dropped (`gather_for_metrics`, so accuracy / F1 / correlations stay exact), the *loss* of that batch is a mean
that includes them (~1e-3 on a 40-window perplexity set).

Observed on 2 CPU cores (torch 2.13, gloo): max |loss difference| ~1e-6 over the steps, weights within ~6e-7.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from tests.utils import REPO_ROOT, shared_data

pytestmark = pytest.mark.slow  # the full tier (scripts/test.sh --all): multi-process launches

LOSS_ATOL = 1e-4  # absolute, on losses of ~1-7 nats (observed max ~1e-6)
WEIGHT_ATOL = 1e-4  # absolute, on weights of ~0.02 after lr ≤ 1e-3 updates (observed max ~6e-7)

TINY = ["--n_layer", "2", "--n_embd", "64", "--n_head", "4", "--n_positions", "64", "--vocab_size", "1000"]
COMMON = ["--report_to", "none", "--disable_tqdm", "true", "--logging_steps", "1", "--seed", "3", "--data_seed", "5"]
CONFIGS = REPO_ROOT / "recipes" / "configs" / "accelerate"
LAUNCH_CONFIG = ["-m", "accelerate.commands.launch", "--config_file", str(CONFIGS / "cpu_ddp.yaml")]
LAUNCH_2 = [
    "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
    "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", "0",
]  # fmt: skip


def run(script: str, args: list[str], processes: int, launcher: list[str] | None = None) -> dict:
    """Runs `recipes/<script>` in 1 or 2 processes with a global batch of 8; returns its all_results.json (and keeps
    its console output in `<output_dir>.log`)."""
    batch = ["--per_device_train_batch_size", str(8 // processes), "--per_device_eval_batch_size", "8"]
    launcher = launcher if launcher is not None else (LAUNCH_2 if processes == 2 else [])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env.pop("LOCAL_RANK", None), env.pop("WORLD_SIZE", None)
    cmd = [sys.executable, *launcher, f"recipes/{script}", *args, *batch, *COMMON]
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    if processes == 2:
        assert "process group is initialized, but parallel_mode" not in proc.stderr  # i.e. real DDP, not 2 × 1
        assert "destroy_process_group() was not called" not in proc.stderr
    out = Path(args[args.index("--output_dir") + 1])
    out.with_suffix(".log").write_text(proc.stdout + proc.stderr)  # the console, read by the tests of logging
    return json.loads((out / "all_results.json").read_text())


def losses(results: dict, key: str = "loss") -> dict[int, float]:
    return {entry["step"]: entry[key] for entry in results["log_history"] if key in entry}


def compare(one: dict, two: dict, steps: int) -> float:
    """Asserts the per-step loss curves (and grad norms) agree; returns the largest loss difference."""
    curve_1, curve_2 = losses(one), losses(two)
    assert sorted(curve_1) == sorted(curve_2) == list(range(1, steps + 1))
    diff = max(abs(curve_1[s] - curve_2[s]) for s in curve_1)
    assert diff <= LOSS_ATOL, (curve_1, curve_2)
    norms_1, norms_2 = losses(one, "grad_norm"), losses(two, "grad_norm")
    assert all(norms_2[s] == pytest.approx(norms_1[s], rel=1e-3, abs=LOSS_ATOL) for s in norms_1)
    assert one["train"]["train_loss"] == pytest.approx(two["train"]["train_loss"], abs=LOSS_ATOL)
    return diff


def compare_weights(folder_1: Path, folder_2: Path) -> float:
    """Asserts the saved models agree; returns the largest weight difference."""
    a, b = load_file(folder_1 / "model.safetensors"), load_file(folder_2 / "model.safetensors")
    assert a.keys() == b.keys()
    for name in a:
        torch.testing.assert_close(b[name], a[name], rtol=0, atol=WEIGHT_ATOL, msg=name)
    return max((a[name] - b[name]).abs().max().item() for name in a)


@pytest.mark.parametrize("name", ["cpu_ddp", "ddp", "multi_node", "fsdp", "deepspeed_zero2", "deepspeed_zero3"])
def test_accelerate_configs_are_valid(name):
    """Each config passes `accelerate launch`'s own validation (without launching anything)."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser

    args = launch_command_parser().parse_args(["--config_file", str(CONFIGS / f"{name}.yaml"), "recipes/glue.py"])
    args, _, _ = _validate_launch_command(args)
    kind = {"fsdp": "use_fsdp", "deepspeed_zero2": "use_deepspeed", "deepspeed_zero3": "use_deepspeed"}
    assert getattr(args, kind.get(name, "multi_gpu"))
    assert args.num_processes == {"cpu_ddp": 2, "multi_node": 16}.get(name, 8)
    if name == "multi_node":
        assert args.num_machines == 2 and args.main_process_ip


@pytest.fixture(scope="module")
def wikitext(tmp_path_factory) -> list[str]:
    lines = shared_data("text", "wikitext-2", "valid.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    folder = tmp_path_factory.mktemp("wikitext")
    (folder / "train.txt").write_text("".join(lines[:300]), encoding="utf-8")
    (folder / "valid.txt").write_text("".join(lines[3000:3060]), encoding="utf-8")
    return ["--train_files", str(folder / "train.txt"), "--validation_files", str(folder / "valid.txt")]


PRETRAIN_STEPS = 8


def pretrain_args(wikitext: list[str], out: Path) -> list[str]:
    return [
        *wikitext, *TINY, "--dropout", "0", "--max_steps", str(PRETRAIN_STEPS), "--warmup_steps", "2",
        "--learning_rate", "1e-3", "--eval_steps", "4", "--save_steps", "4", "--output_dir", str(out),
        "--max_eval_windows", "32",  # a multiple of the global eval batch (2 × 8): see the module docstring
    ]  # fmt: skip


@pytest.fixture(scope="module")
def pretrain_two_processes(tmp_path_factory, wikitext) -> tuple[Path, dict]:
    """From scratch in 2 processes: rank 0 trains the BPE and broadcasts it, both train the model."""
    out = tmp_path_factory.mktemp("pt2") / "run"
    return out, run("pretrain.py", pretrain_args(wikitext, out), processes=2)


@pytest.fixture(scope="module")
def pretrain_one_process(tmp_path_factory, wikitext, pretrain_two_processes) -> tuple[Path, dict, list[str]]:
    """One process with the 2-process run's BPE (BPE training is not reproducible across processes); its arguments."""
    out_2, _ = pretrain_two_processes
    out_1 = tmp_path_factory.mktemp("pt1") / "run"
    args = [*pretrain_args(wikitext, out_1), "--tokenizer_name_or_path", str(out_2)]
    return out_1, run("pretrain.py", args, processes=1), args


def test_pretrain_two_processes_match_one(pretrain_two_processes, pretrain_one_process):
    out_2, two = pretrain_two_processes
    # Had rank 1 used a BPE of its own, half of every 2-process batch would be tokenized differently and the curves
    # would differ.
    out_1, one, _ = pretrain_one_process
    assert (out_1 / "tokenizer.json").read_text() == (out_2 / "tokenizer.json").read_text()
    diff = compare(one, two, PRETRAIN_STEPS)
    evals_1, evals_2 = losses(one, "eval_loss"), losses(two, "eval_loss")
    assert sorted(evals_1) == sorted(evals_2) == [4, 8]
    assert all(abs(evals_1[s] - evals_2[s]) <= LOSS_ATOL for s in evals_1), (evals_1, evals_2)
    assert two["validation"]["eval_perplexity"] == pytest.approx(one["validation"]["eval_perplexity"], rel=1e-4)
    weights = compare_weights(out_1, out_2)
    print(f"pretrain: max |loss_1 - loss_2| over {PRETRAIN_STEPS} steps {diff:.2e}, max |weight diff| {weights:.2e}")


def test_two_processes_log_once(pretrain_two_processes):
    # What a run says before and after training comes from the main process only, and DDP has nothing to warn about.
    out, _ = pretrain_two_processes
    console = out.with_suffix(".log").read_text()
    assert console.count("pretrain: 2 processes on cpu") == 1 and console.count("  warm-up: ") == 1
    assert console.count("== pretrain: done in") == 1
    assert "find_unused_parameters=True" not in console
    assert "warning" not in console.lower().replace("warm-up", ""), console[-3000:]


@pytest.mark.slow
def test_glue_two_processes_match_one(pretrain_two_processes, tmp_path):
    """RTE (96 real train rows, 12 steps) from the tiny pre-trained model: same curve, weights and dev accuracy.

    The 2-process run is launched with `recipes/configs/accelerate/cpu_ddp.yaml`. Sampling is `random`:
    `group_by_length` (the fine-tuning default) forms its length groups per process batch, so a different per-process
    batch size gives a different (equally valid) order.
    """
    model, _ = pretrain_two_processes
    glue = tmp_path / "glue" / "RTE"
    glue.mkdir(parents=True)
    for name, n in (("train", 97), ("dev", 65), ("test", 9)):
        lines = shared_data("glue", "RTE", f"{name}.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
        (glue / f"{name}.tsv").write_text("".join(lines[:n]), encoding="utf-8")

    def args(out: Path) -> list[str]:
        return [
            "--task", "rte", "--data_dir", str(glue.parent), "--model_name_or_path", str(model),
            "--output_dir", str(out), "--max_seq_length", "64", "--num_train_epochs", "1", "--learning_rate", "1e-3",
            "--clf_pdrop", "0", "--train_sampling_strategy", "random", "--save_strategy", "no",
        ]  # fmt: skip

    one = run("glue.py", args(tmp_path / "one"), processes=1)
    two = run(
        "glue.py", args(tmp_path / "two"), processes=2, launcher=LAUNCH_CONFIG
    )  # recipes/configs/accelerate/cpu_ddp.yaml
    diff = compare(one, two, 12)
    for key in ("clf_loss", "lm_loss"):
        # L2 and L1 as logged: rank means averaged over ranks, rounded to 4 decimals
        assert all(abs(a - b) <= 2e-4 for a, b in zip(losses(one, key).values(), losses(two, key).values()))
    assert two["validation"]["eval_validation_accuracy"] == one["validation"]["eval_validation_accuracy"]
    assert two["validation"]["eval_validation_loss"] == pytest.approx(
        one["validation"]["eval_validation_loss"], abs=LOSS_ATOL
    )
    assert (tmp_path / "one" / "RTE.tsv").read_text() == (tmp_path / "two" / "RTE.tsv").read_text()
    weights = compare_weights(tmp_path / "one", tmp_path / "two")
    accuracy = one["validation"]["eval_validation_accuracy"]
    print(f"glue/rte: max |loss_1 - loss_2| over 12 steps {diff:.2e}, max |weight diff| {weights:.2e}, acc {accuracy}")


def _launch(
    launcher: list[str], args: list[str], script: tuple[str, ...] = ("recipes/glue.py",)
) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    for name in ("LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT", "MASTER_ADDR", "ACCELERATE_USE_FSDP"):
        env.pop(name, None)
    cmd = [sys.executable, "-m", "accelerate.commands.launch", *launcher, *script, *args]
    return subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_the_fsdp_config_runs_on_cpu_as_ddp_and_says_so(tiny_lm, glue_slice, tmp_path):
    """The shipped fsdp.yaml (rank-0 loading of a pre-trained model included) on 2 CPU processes: accelerate trains it
    as DDP there, and loading follows (no meta tensors left on rank 1)."""
    from tests.utils import glue_args

    launcher = ["--config_file", str(CONFIGS / "fsdp.yaml"), "--num_processes", "2", "--mixed_precision", "no"]
    batch = ["--per_device_train_batch_size", "32", "--max_train_samples", "64"]
    args = glue_args("rte", tiny_lm, glue_slice, tmp_path / "out", *batch)
    proc = _launch([*launcher, "--main_process_port", "0"], args)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "glue rte: 2 processes on cpu" in proc.stdout
    # the per-device batch is per process: a launch says when the global batch is not the paper's 32
    assert (
        "note: the paper fine-tunes at a batch of 32; this run's global batch is 64 (32 per device × 2 processes × 1 "
        "accumulation): --per_device_train_batch_size 16 gives it." in proc.stdout
    )
    assert "note: FSDP shards over accelerators; on the CPU accelerate trains these 2 processes as DDP" in proc.stdout
    assert (tmp_path / "out" / "all_results.json").is_file()


def test_a_launch_that_starts_fewer_processes_than_asked_says_so(tiny_lm, glue_slice, tmp_path):
    """Launched as the installed package's module (`accelerate launch -m hf_gpt1 glue`), from any folder."""
    from tests.utils import glue_args

    launcher = ["--cpu", "--num_processes", "2", "--mixed_precision", "no", "--main_process_port", "29517"]
    args = glue_args("rte", tiny_lm, glue_slice, tmp_path / "out", "--max_train_samples", "16", "--do_predict", "0")
    proc = _launch(launcher, args, script=("-m", "hf_gpt1", "glue"))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "glue rte: 1 process on cpu" in proc.stdout
    assert "note: accelerate launch was asked for several processes and started one" in proc.stdout


def test_argument_problems_of_a_launch_are_said_once(tmp_path):
    """Every process of `accelerate launch` parses the same arguments: the main one reports their problems."""
    launcher = ["--config_file", str(CONFIGS / "cpu_ddp.yaml"), "--main_process_port", "0"]  # 2 processes
    proc = _launch(launcher, ["--task", "rte", "--output_dir", str(tmp_path / "out"), "--learning_rat", "1"])
    assert proc.returncode != 0
    assert proc.stderr.count("error: Unknown argument(s) in the command line: --learning_rat") == 1, proc.stderr


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _packed(cache: Path) -> dict[str, dict]:
    """The packed corpora of one machine's datasets cache: {cache key: its `done` record}."""
    root = cache / "hf_gpt1" / "packed"
    return {p.name: json.loads((p / "done").read_text()) for p in root.iterdir() if (p / "done").is_file()}


def test_two_machines_match_one_machine_of_two_processes(wikitext, tmp_path):
    """2 machines × 1 process on the loopback (`--num_machines 2 --machine_rank R --main_process_ip 127.0.0.1`), each
    with a datasets cache of its own and one shared output folder, from scratch: the BPE is trained once (machine 0)
    and reaches machine 1, machine 1 packs the corpus only after machine 0 has (where caches are shared it then finds
    machine 0's copy), and the losses are those of 1 machine × 2 processes with that tokenizer, step by step."""
    out, port = tmp_path / "run", _free_port()
    launcher = [
        "-m", "accelerate.commands.launch", "--multi_gpu", "--num_machines", "2", "--num_processes", "2",
        "--main_process_ip", "127.0.0.1", "--main_process_port", str(port), "--mixed_precision", "no",
        "--dynamo_backend", "no",
    ]  # fmt: skip
    batch = ["--per_device_train_batch_size", "4", "--per_device_eval_batch_size", "8"]
    machines = []
    for rank in (0, 1):
        env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
        for name in ("LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT", "MASTER_ADDR", "ACCELERATE_USE_FSDP"):
            env.pop(name, None)
        env["HF_HOME"] = str(tmp_path / f"machine{rank}")
        env["HF_DATASETS_CACHE"] = str(tmp_path / f"machine{rank}" / "datasets")
        cmd = [sys.executable, *launcher, "--machine_rank", str(rank), "recipes/pretrain.py",
               *pretrain_args(wikitext, out), *batch, *COMMON]  # fmt: skip
        log = open(tmp_path / f"machine{rank}.log", "w")  # closed below
        machines.append((subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT), log))
    for proc, log in machines:
        try:
            proc.wait(timeout=300)
        finally:
            proc.kill(), log.close()
    consoles = [(tmp_path / f"machine{rank}.log").read_text() for rank in (0, 1)]
    assert [proc.returncode for proc, _ in machines] == [0, 0], consoles[0][-3000:] + consoles[1][-3000:]
    assert "pretrain: 2 processes on cpu" in consoles[0] and "pretrain:" not in consoles[1]  # machine 0 speaks
    two_machines = json.loads((out / "all_results.json").read_text())

    # the tokenizer was trained once: both machines packed with the same one (the cache key holds its content)
    caches = [_packed(tmp_path / f"machine{rank}" / "datasets") for rank in (0, 1)]
    assert sorted(caches[0]) == sorted(caches[1]) and len(caches[0]) == 2  # training and held-out windows
    for key in caches[0]:  # machine 1 began packing after machine 0 had finished (it waited)
        assert caches[1][key]["packed"]["started"] >= caches[0][key]["packed"]["finished"], (caches, key)

    out_1 = tmp_path / "one_machine"
    one_machine = run(
        "pretrain.py", [*pretrain_args(wikitext, out_1), "--tokenizer_name_or_path", str(out)], processes=2
    )
    diff = compare(one_machine, two_machines, PRETRAIN_STEPS)
    assert losses(one_machine, "eval_loss") == pytest.approx(losses(two_machines, "eval_loss"), abs=LOSS_ATOL)
    weights = compare_weights(out_1, out)
    print(f"2 machines × 1 vs 1 × 2: max |loss diff| over {PRETRAIN_STEPS} steps {diff:.2e}, weights {weights:.2e}")


def _stopped_at_4(out: Path, tmp_path: Path) -> Path:
    """A copy of a finished 8-update run as it stood at checkpoint-4 (a run stopped there)."""
    import shutil

    copy = tmp_path / "stopped"
    shutil.copytree(out, copy)
    shutil.rmtree(copy / f"checkpoint-{PRETRAIN_STEPS}")
    return copy


def _compare_after(resumed: dict, unbroken: dict, step: int) -> None:
    """The losses logged after `step` (this session's) agree with the unbroken run's, step by step."""
    after, expected = ({s: v for s, v in losses(r).items() if s > step} for r in (resumed, unbroken))
    assert sorted(after) == list(range(step + 1, PRETRAIN_STEPS + 1))
    assert all(abs(after[s] - expected[s]) <= LOSS_ATOL for s in after), (after, expected)


def test_a_two_process_checkpoint_resumes_exactly_on_one_process(pretrain_two_processes, wikitext, tmp_path):
    """Checkpointed by 2 processes × 4, resumed by 1 × 8 (the same global batch): the same windows in each update."""
    out_2, two = pretrain_two_processes
    stopped = _stopped_at_4(out_2, tmp_path)
    resumed = run("pretrain.py", [*pretrain_args(wikitext, stopped), "--resume"], processes=1)
    console = stopped.with_suffix(".log").read_text()
    assert (
        "note: checkpoint-4 was trained with 2 processes × 4 per device × 1 accumulation = a global batch of 8; this "
        "launch has 1 process × 8 per device × 1 accumulation, the same global batch: the data position is exact"
        in console
    ), console[-3000:]
    assert "note: the checkpoint holds the random states of 2 process(es): dropout draws other masks" in console
    _compare_after(resumed, two, 4)


def test_a_one_process_checkpoint_resumes_exactly_on_two_processes(pretrain_one_process, tmp_path):
    out_1, one, args = pretrain_one_process
    stopped = _stopped_at_4(out_1, tmp_path)
    args = [*args[: args.index("--output_dir") + 1], str(stopped), *args[args.index("--output_dir") + 2 :]]
    resumed = run("pretrain.py", [*args, "--resume"], processes=2)
    console = stopped.with_suffix(".log").read_text()
    assert "this launch has 2 processes × 4 per device × 1 accumulation, the same global batch" in console
    _compare_after(resumed, one, 4)


def test_a_two_process_checkpoint_resumed_at_another_global_batch_is_refused(
    pretrain_two_processes, wikitext, tmp_path
):
    """1 process × 4 where 2 × 4 trained: refused, naming the flags that give 1 process the global batch of 8."""
    out_2, _ = pretrain_two_processes
    stopped = _stopped_at_4(out_2, tmp_path)
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in stopped.rglob("*")}
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env.pop("LOCAL_RANK", None), env.pop("WORLD_SIZE", None)
    args = [*pretrain_args(wikitext, stopped), "--resume", "--per_device_train_batch_size", "4", *COMMON]
    proc = subprocess.run(
        [sys.executable, "recipes/pretrain.py", *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert errors[0].startswith(
        "error: --resume: checkpoint-4 was trained with 2 processes × 4 per device × 1 accumulation = a global batch "
        "of 8; this launch has 1 process × 4 per device × 1 accumulation = 4"
    ), errors
    assert errors[0].endswith(
        "Pass --per_device_train_batch_size 4 --gradient_accumulation_steps 2 to resume with the global batch of 8."
    ), errors
    assert {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in stopped.rglob("*")} == before


@pytest.mark.skipif(
    importlib.util.find_spec("deepspeed") is None,
    reason="deepspeed is not installed (pip install deepspeed): the ZeRO runs on the CPU need it",
)
@pytest.mark.parametrize("stage", [2, 3])
def test_deepspeed_on_the_cpu_trains_resumes_and_leaves_a_loadable_model(
    stage, pretrain_two_processes, wikitext, tmp_path
):
    """The shipped deepspeed_zero{2,3}.yaml on 2 CPU processes (DeepSpeed's CPU accelerator, gloo): a real ZeRO run
    (each rank's shard in the checkpoint: optimizer state; under ZeRO-3 the parameters too) with DDP's losses and
    weights, a resume from its checkpoint-4 that continues with the same losses, and a final model that
    `from_pretrained` loads (under ZeRO-3 gathered from the shards). The model has the original single embedding
    table, so L1 reads both tables outside their modules: ZeRO-3 gathers them only because the Trainer registers them
    (`GPT1Trainer._gather_the_tables_under_zero3`)."""
    from hf_gpt1 import GPT1LMHeadModel

    out_2, two = pretrain_two_processes
    launcher = [
        "-m", "accelerate.commands.launch", "--config_file", str(CONFIGS / f"deepspeed_zero{stage}.yaml"),
        "--num_processes", "2", "--mixed_precision", "no", "--main_process_port", str(_free_port()),
    ]  # fmt: skip
    out = tmp_path / f"zero{stage}"
    args = [*pretrain_args(wikitext, out), "--tokenizer_name_or_path", str(out_2)]
    zero = run("pretrain.py", args, processes=2, launcher=launcher)
    shards = {p.name for p in (out / "checkpoint-4" / "global_step4").iterdir()}
    assert {f"zero_pp_rank_{rank}_mp_rank_00_optim_states.pt" for rank in (0, 1)} <= shards
    if stage == 3:
        assert {f"zero_pp_rank_{rank}_mp_rank_00_model_states.pt" for rank in (0, 1)} <= shards
    assert GPT1LMHeadModel.from_pretrained(out).config.original_embedding_table
    compare(zero, two, PRETRAIN_STEPS)  # the tokenizer is the DDP run's: the same windows in every update
    compare_weights(out_2, out)

    stopped = _stopped_at_4(out, tmp_path)
    args = [*args[: args.index("--output_dir") + 1], str(stopped), *args[args.index("--output_dir") + 2 :]]
    launcher[-1] = str(_free_port())
    resumed = run("pretrain.py", [*args, "--resume"], processes=2, launcher=launcher)
    _compare_after(resumed, zero, 4)
    compare_weights(out, stopped)
    GPT1LMHeadModel.from_pretrained(stopped)
