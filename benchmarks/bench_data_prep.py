# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Pre-training data preparation at corpus scale: this checkout against an earlier commit, side by side in one run.

    python benchmarks/bench_data_prep.py --sizes 16,64 --baseline 1754e6a --baseline-sizes 16,64 \
        --recipe-sizes 16,256 --baseline-recipe-sizes 16,256 --json benchmarks/results/data_prep.json

Corpora: WikiText-2's real lines (../shared/data), shuffled and repeated to N MB, one document per line. Each
measurement runs in a fresh process with an empty datasets cache and reports:
* tokenize + pack with the original GPT-1 BPE (40,478 symbols, given, so BPE training is not in it): wall time, MB of
  text per second and per second per core (per worker process), bytes per token on disk, peak RSS of the process and
  of its largest worker;
* the recipe itself (`recipes/pretrain.py`, its defaults, a BPE trained on the corpus, a tiny model, 1 step): wall
  time and peak RSS (`--recipe-sizes`, `--baseline-recipe-sizes`).
The baseline is checked out with `git worktree` and run with this environment's Python.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WIKITEXT = REPO.parent / "shared" / "data" / "text" / "wikitext-2"
BPE = REPO.parent / "shared" / "data" / "gpt1_bpe"

# What each side runs to tokenize and pack the corpus's training windows with a given tokenizer, as its recipe does.
PREPARE = {
    "new": """
from hf_gpt1.data.packing import TextCorpus, pack_corpus
corpus = TextCorpus([CORPUS], validation_split_percentage=5.0)
windows = pack_corpus(corpus.train, tokenizer, WINDOW, num_workers=WORKERS)
""",
    "baseline": """
from hf_gpt1.data.files import load_corpus
from hf_gpt1.data.packing import pack_windows
train, _ = load_corpus([CORPUS], validation_split_percentage=5.0)
windows = pack_windows(train, tokenizer, WINDOW)
""",
}
CHILD = """
import json, resource, sys, time
from pathlib import Path
import datasets
from hf_gpt1.tokenization_gpt1 import original_tokenizer
tokenizer = original_tokenizer({bpe!r} + "/encoder_bpe_40000.json", {bpe!r} + "/vocab_40000.bpe")
tokenizer.backend_tokenizer.post_processor = None
CORPUS, WINDOW, WORKERS = {corpus!r}, 512, {workers}
started = time.perf_counter()
{prepare}
seconds = time.perf_counter() - started
cache = Path(datasets.config.HF_DATASETS_CACHE)
arrow = [p for p in cache.rglob("*.arrow") if "by_content" not in str(p) or "cache-" in p.name]
print(json.dumps({{
    "seconds": seconds, "windows": len(windows), "disk_bytes": sum(p.stat().st_size for p in arrow),
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
}}))
"""


def make_corpus(path: Path, megabytes: int) -> Path:
    lines = [ln for ln in (WIKITEXT / "valid.txt").read_text(encoding="utf-8").splitlines() if ln.strip()]
    lines += [ln for ln in (WIKITEXT / "test.txt").read_text(encoding="utf-8").splitlines() if ln.strip()]
    rng, size = random.Random(0), 0
    with path.open("w", encoding="utf-8") as f:
        while size < megabytes * 1e6:
            rng.shuffle(lines)
            for line in lines:
                f.write(line + "\n")
                size += len(line.encode()) + 1
                if size >= megabytes * 1e6:
                    break
    return path


def fresh_env(checkout: Path, scratch: Path) -> dict[str, str]:
    """A process running `checkout`'s code offline, with an empty datasets cache of its own."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "HF_DATASETS_CACHE": tempfile.mkdtemp(dir=scratch)}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return env


def prepare(side: str, checkout: Path, corpus: Path, workers: int, scratch: Path) -> dict:
    code = CHILD.format(bpe=str(BPE), corpus=str(corpus), workers=workers, prepare=PREPARE[side])
    env = fresh_env(checkout, scratch)
    done = subprocess.run([sys.executable, "-c", code], cwd=scratch, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{side} on {corpus.name}: {done.stderr[-2000:]}")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    text_mb = corpus.stat().st_size * 0.95 / 1e6  # the training part (5% held out)
    tokens = row["windows"] * 512
    processes = workers if side == "new" else 1
    row.update(
        side=side, corpus_mb=round(corpus.stat().st_size / 1e6), workers=processes,
        mb_per_s=text_mb / row["seconds"], mb_per_s_per_core=text_mb / row["seconds"] / processes,
        bytes_per_token=row["disk_bytes"] / tokens if tokens else None,
    )  # fmt: skip
    return row


def recipe(side: str, checkout: Path, corpus: Path, scratch: Path) -> dict:
    out = Path(tempfile.mkdtemp(dir=scratch)) / "run"
    args = [sys.executable, str(checkout / "recipes" / "pretrain.py"), "--train_files", str(corpus), "--output_dir",
            str(out), "--n_layer", "1", "--n_embd", "32", "--n_head", "2", "--max_steps", "1", "--eval_steps", "1",
            "--max_eval_windows", "4", "--per_device_train_batch_size", "2", "--report_to", "none",
            "--disable_tqdm", "true"]  # fmt: skip
    env = fresh_env(checkout, scratch)
    code = (
        "import resource, runpy, sys, time; sys.argv = sys.argv[1:]; t = time.perf_counter()\n"
        "try:\n    runpy.run_path(sys.argv[0], run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print('BENCH', time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,"
        " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)"
    )
    done = subprocess.run([sys.executable, "-c", code, *args[1:]], env=env, capture_output=True, text=True)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("BENCH")), None)
    if done.returncode or line is None:
        raise RuntimeError(f"recipe on {corpus.name}: {done.stderr[-2000:]}")
    _, seconds, rss, worker_rss = line.split()
    return {"side": f"{side} (recipe)", "corpus_mb": round(corpus.stat().st_size / 1e6), "seconds": float(seconds),
            "rss_mb": float(rss), "worker_rss_mb": float(worker_rss)}  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="16,64,256", help="corpus sizes in MB for this checkout")
    p.add_argument("--workers", default="1,2", help="worker counts for this checkout")
    p.add_argument("--baseline", default=None, help="a git ref to measure beside this checkout")
    p.add_argument("--baseline-sizes", default="16,64", help="corpus sizes in MB for the baseline")
    p.add_argument("--recipe-sizes", default="16,256", help="corpus sizes in MB for the whole recipe")
    p.add_argument("--baseline-recipe-sizes", default="16,64", help="the same for the baseline")
    p.add_argument("--scratch", default=None, help="folder for corpora and caches (default: a temporary one)")
    p.add_argument("--json", default=None, help="write the rows here")
    args = p.parse_args(argv)
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="bench_data_prep_"))
    scratch.mkdir(parents=True, exist_ok=True)
    sizes = lambda text: [int(s) for s in text.split(",") if s]  # noqa: E731
    every = sorted({*sizes(args.sizes), *sizes(args.baseline_sizes), *sizes(args.recipe_sizes)}
                   | set(sizes(args.baseline_recipe_sizes) if args.baseline else []))  # fmt: skip
    corpora = {mb: make_corpus(scratch / f"corpus_{mb}mb.txt", mb) for mb in every}
    baseline = None
    if args.baseline:
        baseline = scratch / "baseline"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-f", "--detach", str(baseline), args.baseline],
                       check=True, capture_output=True)  # fmt: skip
    rows = []
    try:
        for mb in sorted(corpora):
            if baseline and mb in sizes(args.baseline_sizes):
                rows.append(prepare("baseline", baseline, corpora[mb], 1, scratch))
                print(json.dumps(rows[-1]), flush=True)
            if mb in sizes(args.sizes):
                for workers in sizes(args.workers):
                    rows.append(prepare("new", REPO, corpora[mb], workers, scratch))
                    print(json.dumps(rows[-1]), flush=True)
            if baseline and mb in sizes(args.baseline_recipe_sizes):
                rows.append(recipe("baseline", baseline, corpora[mb], scratch))
                print(json.dumps(rows[-1]), flush=True)
            if mb in sizes(args.recipe_sizes):
                rows.append(recipe("new", REPO, corpora[mb], scratch))
                print(json.dumps(rows[-1]), flush=True)
    finally:
        if baseline:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(baseline)], check=False)
    result = {"command": " ".join(["python", "benchmarks/bench_data_prep.py", *(argv or sys.argv[1:])]),
              "cores": os.cpu_count(), "baseline": args.baseline, "rows": rows}  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
