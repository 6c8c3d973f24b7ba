# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""benchmarks/gpu_check.sh: its CPU rehearsal runs every stage, and its report reads the committed H200 results.

The dry run checks the mechanics (each stage runs, is collected and reported), not the numbers: CPUs are not GPUs.
"""

import importlib.util
import json
import subprocess

import pytest

from tests.utils import REPO_ROOT, shared_data

SCRIPT = REPO_ROOT / "benchmarks" / "gpu_check.sh"
RESULTS = REPO_ROOT / "benchmarks" / "results"


def gpu_check():
    spec = importlib.util.spec_from_file_location("gpu_check", REPO_ROOT / "benchmarks" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # the full tier (scripts/test.sh --all): the GPU check's dry run
def test_the_dry_run_runs_every_stage_and_reports_each_target(tmp_path):
    shared_data("gpt1_bpe", "encoder_bpe_40000.json")  # the stages read the original BPE, WikiText-2 and SST-2
    done = subprocess.run(
        ["bash", str(SCRIPT), "--dry-run", "--out", str(tmp_path)], capture_output=True, text=True, timeout=480
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((tmp_path / "gpu_check.json").read_text())
    assert {k: v["returncode"] for k, v in result["stages"].items()} == {k: 0 for k in gpu_check().STAGES}
    measured = {row["what"] for row in result["targets"] if row["measured"] is not None}
    for what in (
        "bench pre-training ×openai-gpt",
        "bench compiled pre-training ×openai-gpt",
        "grouped / random fine-tuning",
        "generation b8 tok/s (best of dynamic/static)",
        "hf-gpt1 pretrain --bf16 tok/s",
        "hf-gpt1 glue sst2 --bf16 steps/s",
        "profile: copy/cast share",
        "CUDA-visible tests failing",
        "generate b8: device loop gives transformers' greedy tokens",
    ):
        assert what in measured, what
    assert "| what | measured | target | met |" in (tmp_path / "gpu_check.md").read_text()
    profiled = {case for case, row in result["profile"].items() if isinstance(row, dict)}
    assert profiled == set(gpu_check().DRY_PROFILED)  # each measured (the GPU's cases: the test below)


def test_every_profiled_case_is_wired_and_the_dry_run_builds_each_kind_of_step(tmp_path):
    """The GPU run profiles PROFILED, the dry run DRY_PROFILED: every name is a case of benchmarks/step_profile.py (a
    misspelt one would end the GPU's profile stage), and the dry run builds each kind of step the GPU's cases build
    (pre-training, fine-tuning, decoding), so a broken step builder fails on the CPU first."""
    check = gpu_check()
    spec = importlib.util.spec_from_file_location("step_profile", REPO_ROOT / "benchmarks" / "step_profile.py")
    step_profile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(step_profile)
    for dry, cases in ((False, check.PROFILED), (True, check.DRY_PROFILED)):
        command = check.stage_commands(dry, tmp_path, tmp_path)["profile"][0]
        assert command[command.index("--cases") + 1].split(",") == list(cases)
        assert set(cases) <= set(step_profile.CASES), set(cases) - set(step_profile.CASES)
    kinds = {case.split("_")[0] for case in check.PROFILED}
    assert {case.split("_")[0] for case in check.DRY_PROFILED} == kinds == {"pretrain", "finetune", "decode"}


def test_the_dry_run_decodes_at_b8_alone_and_fine_tunes_at_batch_8(tmp_path):
    """The dry run's sizes (the full tier's time): decoding at b8 alone, the batch the report's generation targets and
    the sampling check read (b1 decodes by the same code, and tests/test_benchmarks.py decodes at b1), fine-tuning at
    batch 8 (a CPU step of 32 rows through the 40k-token head costs ~3 s). The GPU measures b1 and b8, batch 32."""
    check = gpu_check()
    dry, gpu = check.stage_commands(True, tmp_path, tmp_path), check.stage_commands(False, tmp_path, tmp_path)

    def value(stage: dict, name: str, flag: str) -> str | None:
        command = stage[name][0]
        return command[command.index(flag) + 1] if flag in command else None

    assert value(dry, "generate", "--batches") == "8" and value(gpu, "generate", "--batches") is None  # 1,8
    assert value(dry, "bench", "--gen-batches") == "8" and value(gpu, "bench", "--gen-batches") is None  # 1,8
    assert value(dry, "glue", "--per_device_train_batch_size") == "8"
    assert value(gpu, "glue", "--per_device_train_batch_size") == "32"


def test_no_gpu_without_dry_run_is_one_line(capsys):
    assert gpu_check().main([]) == 2
    assert "no CUDA GPU here: run with --dry-run" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "device", "ratio"),
    [
        ("gpu_check_h200", "NVIDIA H200", "bench compiled pre-training ×openai-gpt"),
        ("gpu_check_h100", "NVIDIA H100 80GB HBM3", "bench pre-training ×openai-gpt"),
    ],
)
def test_the_committed_gpu_results_say_what_the_readme_says(name, device, ratio):
    """The README's GPU tables are the committed reports' numbers."""
    result = json.loads((RESULTS / f"{name}.json").read_text())
    rows = {row["what"]: row["measured"] for row in result["targets"]}
    readme = (REPO_ROOT / "README.md").read_text()
    assert result["env"]["device"] == device
    assert f"{rows[ratio]:.2f}×" in readme
    assert f"{rows['hf-gpt1 glue sst2 --bf16 steps/s']}" in readme
