# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Every GPU target of the README in one run: measured, target, met (`benchmarks/gpu_check.sh` is the command).

Stages, each a subprocess with its own time limit, each writing `<out>/<stage>.json` (a stage that fails or runs out
of time is recorded as such and the others still run):

* `bench`: the side-by-side benchmark vs transformers' openai-gpt at GPT-1 size, bf16 — fine-tuning (RTE, L3, batch
  32; random and length-grouped batches), pre-training (32 × 512), generation (32-token prompt + 256, b1 and b8,
  dynamic and static cache);
* `bench_compile`: its pre-training row compiled, 64 × 512;
* `profile`: where the steps' time goes, on the device and on the host (`benchmarks/step_profile.py`: kernels and
  operators by name, host regions, how busy the GPU is) for pre-training, fine-tuning, the optimizer and decoding;
* `pretrain`: `hf-gpt1 pretrain --bf16` at GPT-1 size on WikiText-2 with the original 40k BPE, 32 × 512, steady state;
* `glue`: `hf-gpt1 glue --task sst2 --bf16` from a GPT-1-size checkpoint, steps/s and the slowest step (the dry run:
  RTE, a smaller file);
* `fsdp`, `deepspeed_zero2`, `deepspeed_zero3`: the sharding engines on one GPU, `--bf16` (engine's mixed precision):
  train, killed and `--resume`d, `from_pretrained` (`benchmarks/engine_check.py`);
* `tests`: the test files that hold the CUDA tests, with CUDA visible;
* `generate`: decoding tokens/s at b1 and b8 (32 + 256 tokens, greedy), transformers' loop against the default
  device loop (`benchmarks/bench_decoding.py`), with and without the split-KV decode attention, and whether each
  gives transformers' tokens (greedy; seeded sampling at b8).

`--report DIR...` builds `gpu_check.json` and `gpu_check.md` from stage folders (several calls' results merge).
`--dry-run`: the same stages at toy sizes on the CPU (what CI runs: the mechanics, not the numbers), generation at
b8 only (b1 runs the same code; tests/test_benchmarks.py decodes at b1 and b2).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
NOMINAL_TFLOPS = 989.0  # dense bf16 tensor-core peak of an H100 SXM and an H200 (datasheets), MFU's denominator
# in the order they run; the sharding engines' stages are benchmarks/engine_check.py's engines
ENGINES = ("fsdp", "deepspeed_zero2", "deepspeed_zero3")
STAGES = ("bench", "profile", "pretrain", "glue", *ENGINES, "tests", "bench_compile", "generate")
GPT1 = ["--n_layer", "12", "--n_embd", "768", "--n_head", "12", "--n_positions", "512"]
TOY = ["--n_layer", "2", "--n_embd", "64", "--n_head", "4", "--n_positions", "64"]
# The profile stage's cases (benchmarks/step_profile.py): the recipes' steps compiled, with and without CUDA graphs
PROFILED = ("pretrain", "pretrain_autocast", "finetune_eager", "finetune_cudagraphs", "decode_b1")
# The dry run's: one of each kind of step (the compiled pre-training step the report reads, the classification step,
# the decode step). On the CPU the others add nothing it checks (no CUDA graphs, no bf16 autocast kernels) and each
# costs a compile (~15 s): the full tier's time.
DRY_PROFILED = ("pretrain", "finetune_eager", "decode_b1")


def stage_commands(dry: bool, work: Path, out: Path) -> dict[str, tuple[list[str], int]]:
    """Each stage's command and time limit (seconds)."""
    py = sys.executable
    dry_flag = ["--dry-run"] if dry else []
    device = ["--device", "cpu", "--matmul-n", "256"] if dry else ["--device", "cuda"]
    device += [] if dry else ["--nominal-tflops", str(NOMINAL_TFLOPS)]
    size = ["--sizes", "tiny"] if dry else ["--sizes", "gpt1"]
    bench = [py, "benchmarks/bench_vs_openai_gpt.py", *device, *size, "--dtypes", "bf16", "--gen-dtypes", "bf16"]
    common = ["--report_to", "none", "--disable_tqdm", "true", "--eval_strategy", "no", "--save_strategy", "no"]
    common += ["--logging_steps", "10", "--overwrite_output_dir"]  # the loader's workers: the recipes' default
    common += [] if dry else ["--bf16"]  # the CPU's bf16 (autocast, often without AMX) is slow: the dry run is fp32
    budget = ["--repeats", "1", "--steps", "1"] if dry else ["--repeats", "2", "--steps", "4"]
    wikitext = str(work / "corpus.txt" if dry else DATA / "text" / "wikitext-2" / "valid.txt")
    return {
        "bench": (
            [*bench, "--tasks", "finetune,pretrain,generate", *budget]
            + ["--batch-size", "4" if dry else "32", "--pretrain-batch", "2" if dry else "32"]
            + ["--new-tokens", "4" if dry else "256", "--json", str(out / "bench_raw.json")]
            + (["--gen-batches", "8"] if dry else []),  # dry: b8 alone (b1: test_benchmarks.py)
            200,
        ),
        "bench_compile": (
            [*bench, "--tasks", "pretrain", "--compile", *budget]
            + ["--compile-backend", "aot_eager" if dry else "inductor"]
            + ["--pretrain-batch", "2" if dry else "64", "--json", str(out / "bench_compile_raw.json")],
            120,
        ),
        "profile": (
            [py, "benchmarks/step_profile.py", "--work", str(work), *dry_flag]
            + ["--cases", ",".join(DRY_PROFILED if dry else PROFILED)],
            200,
        ),
        **{
            engine: ([py, "benchmarks/engine_check.py", "--engine", engine, "--work", str(work), *dry_flag], 300)
            for engine in ENGINES
        },
        "pretrain": (
            [py, "-m", "hf_gpt1", "pretrain", *(TOY if dry else GPT1), "--train_files", wikitext]
            + ["--tokenizer_name_or_path", str(work / "gpt1"), "--output_dir", str(work / "pretrain")]
            + ["--per_device_train_batch_size", "2" if dry else "32", "--max_steps", "12" if dry else "60"]
            + ["--validation_split_percentage", "5", *common],
            130,
        ),
        "glue": (
            [py, "-m", "hf_gpt1", "glue", "--task", "rte" if dry else "sst2", "--data_dir", str(DATA / "glue")]
            + ["--model_name_or_path", str(work / "gpt1"), "--output_dir", str(work / "glue")]
            # dry: batch 8 (a CPU step of 32 rows through the 40k-token head takes ~3 s: the full tier's time)
            + ["--per_device_train_batch_size", "8" if dry else "32", "--max_steps", "12" if dry else "1000"]
            + ["--do_eval", "false"]
            + ["--max_train_samples", "200" if dry else "40000", "--do_predict", "false", *common]
            + ([] if dry else ["--torch_compile", "true"]),  # compiled, as a run past COMPILE_PAYS_OFF_UPDATES is
            150,
        ),
        "generate": (
            [py, "benchmarks/bench_decoding.py", "--model", str(work / "gpt1"), *dry_flag]
            # dry: b8 alone, greedy and seeded sampling (b1 decodes by the same code: a second compile for nothing)
            + (["--batches", "8", "--new-tokens", "4", "--repeats", "1"] if dry else ["--split-kv-off"]),
            300,
        ),
        "tests": (
            [py, "-m", "pytest", "-q", "-m", "not slow", "-p", "no:cacheprovider", "tests/test_host_reads.py"]
            + (
                ["-k", "eager"]
                if dry
                else ["tests/test_modeling_gpt1.py", "tests/test_kernels.py", "tests/test_compile.py"]
            )
            + ["--junitxml", str(out / "tests.xml")],
            150,
        ),
    }


def prepare(work: Path, dry: bool) -> None:
    """A GPT-1 (random weights, the size under test) with the original BPE: what `pretrain` reads its tokenizer from
    and `glue` fine-tunes (and, for a dry run, a short corpus)."""
    from hf_gpt1 import GPT1Config, GPT1LMHeadModel, add_gpt1_special_tokens
    from hf_gpt1.tokenization_gpt1 import original_tokenizer

    bpe = DATA / "gpt1_bpe"
    tokenizer = original_tokenizer(bpe / "encoder_bpe_40000.json", bpe / "vocab_40000.bpe")
    ids = add_gpt1_special_tokens(tokenizer)
    sizes = dict(n_layer=2, n_embd=64, n_head=4, n_positions=64) if dry else {}
    config = GPT1Config(vocab_size=len(tokenizer), **{f"{k}_token_id": v for k, v in ids.items()}, **sizes)
    GPT1LMHeadModel(config).save_pretrained(work / "gpt1")
    tokenizer.save_pretrained(work / "gpt1")
    if dry:  # the first 2,000 lines of WikiText-2 valid: the toy run's corpus
        lines = (DATA / "text" / "wikitext-2" / "valid.txt").read_text(encoding="utf-8").splitlines(keepends=True)
        (work / "corpus.txt").write_text("".join(lines[:2000]), encoding="utf-8")


def run_stages(stages: list[str], dry: bool, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": path}
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_EVALUATE_OFFLINE"):
        env[var] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        prepare(work, dry)
        commands = stage_commands(dry, work, out)
        for stage in stages:
            command, limit = commands[stage]
            started = time.time()
            print(f"== {stage}: {' '.join(command)}", flush=True)
            record: dict = {"command": " ".join(command), "env": machine()}
            try:
                done = subprocess.run(command, cwd=REPO, env=env, timeout=limit, capture_output=True, text=True)
                record["returncode"] = done.returncode
                record["output_tail"] = (done.stdout + done.stderr)[-3000:]
                record["stdout_last_line"] = (done.stdout.strip().splitlines() or [""])[-1]  # a stage's whole JSON
            except subprocess.TimeoutExpired as err:
                record["returncode"] = "timeout"
                record["output_tail"] = ((err.stdout or b"").decode() + (err.stderr or b"").decode())[-3000:]
            record["seconds"] = round(time.time() - started, 1)
            record.update(collect(stage, work, out, record))
            (out / f"{stage}.json").write_text(json.dumps(record, indent=1))
            print(f"   {stage}: exit {record['returncode']} in {record['seconds']} s", flush=True)
            if record["returncode"] != 0:
                print(record["output_tail"][-1500:], flush=True)


def collect(stage: str, work: Path, out: Path, record: dict) -> dict:
    """What a finished stage measured."""
    if stage in ("bench", "bench_compile"):
        raw = out / f"{stage}_raw.json"
        return {"rows": json.loads(raw.read_text()).get("rows", [])} if raw.exists() else {}
    if stage in ("profile", "generate") or stage in ENGINES:
        try:
            return {stage: json.loads(record.pop("stdout_last_line"))}
        except (json.JSONDecodeError, KeyError):
            return {}
    if stage in ("pretrain", "glue"):
        results = work / stage / "all_results.json"
        return {"train": json.loads(results.read_text())["train"]} if results.exists() else {}
    if stage == "tests":
        import xml.etree.ElementTree as ET

        xml = out / "tests.xml"
        if not xml.exists():
            return {}
        suite = ET.parse(xml).getroot().find("testsuite")
        failed = [
            f"{case.get('classname')}::{case.get('name')}"
            for case in suite.iter("testcase")
            if case.find("failure") is not None or case.find("error") is not None
        ]
        counts = {k: int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}
        return {"tests": {**counts, "failed": failed}}
    return {}


# --------------------------------------------------------------------------------------------------------- report
def targets(stages: dict) -> list[dict]:
    """Issue 40's targets, each (what, measured, target, met); a stage that did not measure gives measured None."""
    rows = []

    def add(what: str, measured, target: str, met) -> None:
        rows.append({"what": what, "measured": measured, "target": target, "met": met})

    bench = {r["task"]: r for r in stages.get("bench", {}).get("rows", []) if r.get("dtype") == "bf16"}
    pre = bench.get("pretrain")
    if pre:
        mfu = pre["ours_mfu_nominal"] or pre["ours_mfu"]
        add("bench pre-training ×openai-gpt", round(pre["ratio"], 2), "≥ 4", pre["ratio"] >= 4)
        add("bench pre-training MFU (nominal)", round(mfu, 3), "≥ 0.45", mfu >= 0.45)
        add("bench pre-training tok/s (ours, ref)", [round(pre["ours_tok_s"]), round(pre["ref_tok_s"])], "-", None)
    compiled = {r["task"]: r for r in stages.get("bench_compile", {}).get("rows", [])}.get("pretrain")
    if compiled:
        mfu = compiled["ours_mfu_nominal"] or compiled["ours_mfu"]
        add("bench compiled pre-training ×openai-gpt", round(compiled["ratio"], 2), "≥ 4", compiled["ratio"] >= 4)
        add("bench compiled pre-training MFU (nominal)", round(mfu, 3), "≥ 0.45", mfu >= 0.45)
    if compiled and pre:
        gain = compiled["ours_tok_s"] / pre["ours_tok_s"]
        add("compiled / eager pre-training (bench, batch 64 vs 32)", round(gain, 3), "> 1", gain > 1)
    ft = bench.get("finetune")
    if ft:
        add("bench fine-tuning ×openai-gpt (random batches)", round(ft["ratio"], 2), "≥ 2", ft["ratio"] >= 2)
        grouped = ft.get("ours_grouped_tok_s")
        if grouped:
            add(
                "grouped / random fine-tuning",
                round(grouped / ft["ours_tok_s"], 3),
                "≥ 1",
                grouped >= ft["ours_tok_s"],
            )
    for b, target in (("b1", 1500), ("b8", 10000)):
        gen = bench.get(f"generate_{b}")
        if gen:
            best = max(gen["ours_tok_s"], gen.get("ours_static_tok_s", 0.0))
            add(f"generation {b} tok/s (best of dynamic/static)", round(best), f"≥ {target:,}", best >= target)
    decoding = stages.get("generate", {}).get("generate") or {}
    for b, target in (("b1", 1500), ("b8", 10000)):
        gen = decoding.get(b)
        if gen:  # the bound still open where missed: the host's replay per token, or the step's own GPU time
            device = gen["device_tok_s"]
            add(f"generate {b} tok/s, default device loop (bound if missed: one graph replay a token, or the "
                "step's GPU time; profile decode_b1)", round(device), f"≥ {target:,}", device >= target)  # fmt: skip
            add(f"generate {b} tok/s, transformers' loop (last round's default)", round(gen["transformers_tok_s"]),
                "-", None)  # fmt: skip
            if "device_sdpa_tok_s" in gen:
                add(f"generate {b} tok/s, device loop with SDPA (split-KV off)", round(gen["device_sdpa_tok_s"]),
                    "-", None)  # fmt: skip
            add(f"generate {b}: device loop gives transformers' greedy tokens", gen["device_equals_transformers"],
                "True", gen["device_equals_transformers"])  # fmt: skip
            if "sampling_equals_transformers" in gen:
                same = gen["sampling_equals_transformers"]
                add(f"generate {b}: the same seeded samples (compiled logits may round apart)", same, "True", same)
    pretrain = stages.get("pretrain", {}).get("train", {}).get("steady_state")
    if pretrain:
        flops = 6 * (85_054_464 + 40_481 * 768) + 12 * 12 * 768 * 512  # GPT-1: body + tied head, attention at 512
        mfu = pretrain["tokens_per_s"] * flops / (NOMINAL_TFLOPS * 1e12)
        add("hf-gpt1 pretrain --bf16 tok/s", round(pretrain["tokens_per_s"]), "≥ 520k (40% nominal)", mfu >= 0.40)
        add("hf-gpt1 pretrain first step s", pretrain.get("first_step_s"), "-", None)
        add("hf-gpt1 pretrain graphs after first step", pretrain.get("graphs_compiled_after_first_step"), "0",
            pretrain.get("graphs_compiled_after_first_step") in (0, None))  # fmt: skip
        bare = (stages.get("profile", {}).get("profile") or {}).get("pretrain")
        if bare:  # the same 32 × 512 step: the recipe's steady-state step against the bare compiled one
            share = bare["wall_ms"] / (1000 / pretrain["steps_per_s"])
            add("hf-gpt1 pretrain step: bare step's time / recipe's", round(share, 3), "≥ 0.9", share >= 0.9)
    glue = stages.get("glue", {}).get("train", {}).get("steady_state")
    if glue:
        add("hf-gpt1 glue sst2 --bf16 steps/s", round(glue["steps_per_s"], 1), "≥ 100", glue["steps_per_s"] >= 100)
        spread = glue.get("max_step_over_median")
        add("glue slowest step / median", spread and round(spread, 2), "≤ 2", spread is not None and spread <= 2)
        add("glue first step s (compiles, records the CUDA graphs)", glue.get("first_step_s"), "-", None)
    prof = stages.get("profile", {}).get("profile") or {}
    pre = prof.get("pretrain")
    if pre:
        share = pre["shares"]
        add("profile: compiled pre-training step, device ms", round(pre["device_ms"], 2), "-", None)
        add("profile: flash attention share of a compiled step", round(share.get("attention_flash", 0), 3), "-", None)
        add("profile: memory-efficient attention share", round(share.get("attention_efficient", 0), 3), "-", None)
        add("profile: copy/cast share", round(share.get("copy", 0), 3), "≤ 0.10", share.get("copy", 0) <= 0.10)
        autocast = prof.get("pretrain_autocast")
        if autocast:  # what accelerate's autocast around bf16 weights costs the compiled step
            add("profile: autocast's cost in the pre-training step, wall ms",
                round(autocast["wall_ms"] - pre["wall_ms"], 3), "-", None)  # fmt: skip
    for case in prof:
        if isinstance(prof[case], dict):
            busy = prof[case]["device_busy"]
            add(f"profile: {case} wall / issue / device ms", [round(prof[case][k], 3) for k in
                ("wall_ms", "issue_ms", "device_ms")], "-", None)  # fmt: skip
            add(f"profile: {case} device busy", round(busy, 3), "-", None)
    for engine in ENGINES:
        checked = stages.get(engine, {}).get(engine)
        what = f"{engine} on one GPU, --bf16: trains, kill → --resume, from_pretrained"
        if checked and "skipped" in checked:
            add(what, None, "all", None)
        elif checked:
            add(what, checked["ok"], "all", checked["ok"])
            add(f"{engine} resumed loss − uninterrupted loss (max)", checked.get("resumed_max_abs_loss_diff"), "-",
                None)  # fmt: skip
    tests = stages.get("tests", {}).get("tests")
    if tests:
        bad = tests["failures"] + tests["errors"]
        add("CUDA-visible tests failing", bad, "0", bad == 0)
    return rows


def machine() -> dict:
    """The measuring machine and versions, recorded with every stage (a run without the bench stage has them too)."""
    import torch
    import transformers

    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    return {"torch": torch.__version__, "transformers": transformers.__version__, "device": device}


def report(folders: list[Path], out: Path, commit: str | None = None) -> dict:
    stages: dict = {}
    for folder in folders:
        for stage in STAGES:
            path = folder / f"{stage}.json"
            if path.exists():
                stages[stage] = json.loads(path.read_text())
    env = {}
    for folder in folders:  # the machine that measured: the benchmark records it
        for raw in sorted(folder.glob("bench*_raw.json")):
            measured = json.loads(raw.read_text())["env"]
            device = measured["cuda"] or measured["cpu"]
            env = {"torch": measured["torch"], "transformers": measured["transformers"], "device": device}
    for stage in stages.values():  # the bench's record, else the one every stage keeps
        env = env or stage.get("env", {})
    if commit is None:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
        commit = commit.stdout.strip()
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "commit": commit,
        "env": env,
        "stages": {k: {"returncode": v.get("returncode"), "seconds": v.get("seconds")} for k, v in stages.items()},
        "targets": targets(stages),
        "profile": stages.get("profile", {}).get("profile"),
        "tests": stages.get("tests", {}).get("tests"),
    }
    lines = [
        f"# GPU check — {result['date']}, commit {result['commit']}, {env.get('device', '?')}, torch "
        f"{env.get('torch', '?')}, transformers {env.get('transformers', '?')}",
        "",
        "| what | measured | target | met |",
        "|---|---|---|---|",
    ]
    for row in result["targets"]:
        met = "-" if row["met"] is None else ("met" if row["met"] else "NOT met")
        lines.append(f"| {row['what']} | {row['measured']} | {row['target']} | {met} |")
    lines += ["", "| stage | exit | seconds |", "|---|---|---|"]
    lines += [f"| {k} | {v['returncode']} | {v['seconds']} |" for k, v in result["stages"].items()]
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_check.json").write_text(json.dumps(result, indent=1))
    (out / "gpu_check.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="toy sizes on the CPU: the mechanics, not the numbers")
    parser.add_argument("--stages", default=",".join(STAGES), help=f"comma list of {','.join(STAGES)}")
    parser.add_argument("--out", default="gpu_check_results", help="folder for the stages' JSON and the report")
    parser.add_argument("--report", nargs="*", default=None, help="only build the report from these stage folders")
    parser.add_argument("--commit", default=None, help="the commit measured (default: this checkout's HEAD)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.report is None:
        stages = [s for s in args.stages.split(",") if s]
        unknown = sorted(set(stages) - set(STAGES))
        problem = unknown and f"--stages: unknown {unknown}; the stages are {','.join(STAGES)}"
        if not (problem or args.dry_run):
            import torch

            problem = not torch.cuda.is_available() and "no CUDA GPU here: run with --dry-run for the CPU rehearsal"
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        run_stages(stages, args.dry_run, out)
    result = report([Path(f) for f in (args.report or [out])], out, args.commit)
    failed = [k for k, v in result["stages"].items() if v["returncode"] != 0]
    if failed:
        print(f"stages that did not finish cleanly: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
