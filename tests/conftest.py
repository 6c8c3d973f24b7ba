"""Shared test set-up: offline hub, deterministic seeds, the one tiny model config, the ../shared/data location, and
the real-data fixtures the recipe tests start from (a tiny GPT-1 pre-trained on WikiText-2, slices of GLUE folders)."""

import os

# Before transformers/datasets/evaluate are imported anywhere: the Hub is unreachable here, and without these each
# hub call retries for ~23 s before failing.
for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

# The tiny model every unit test builds: a 64-token vocabulary whose last four ids are GPT-1's special tokens.
V, START, DELIM, EXTRACT, PAD = 64, 60, 61, 62, 63

# (device, dtype) pairs the parity tests run on, as litgpt's do: CUDA cases skip without a GPU.
DEVICE_DTYPES = [
    pytest.param("cpu", torch.float32, id="cpu-fp32"),
    pytest.param("cpu", torch.bfloat16, id="cpu-bf16"),
    pytest.param(
        "cuda",
        torch.float32,
        id="cuda-fp32",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine"),
    ),
    pytest.param(
        "cuda",
        torch.bfloat16,
        id="cuda-bf16",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine"),
    ),
]

# Recipe arguments shared by the in-process recipe tests.
TINY_LM = ["--n_layer", "2", "--n_embd", "64", "--n_head", "4", "--n_positions", "64", "--vocab_size", "1000"]
COMMON = ["--report_to", "none", "--disable_tqdm", "true", "--dataloader_num_workers", "0"]
GLUE_ROWS = {"train": 97, "dev": 49, "test": 31}  # lines kept per file, header included where the file has one


def tiny_config(**overrides):
    """The one tiny `GPT1Config` of the unit tests (2 blocks × 32, 4 heads, 32 positions)."""
    from hf_gpt1 import GPT1Config

    fields = dict(
        vocab_size=V,
        n_positions=32,
        n_embd=32,
        n_layer=2,
        n_head=4,
        start_token_id=START,
        delimiter_token_id=DELIM,
        extract_token_id=EXTRACT,
        pad_token_id=PAD,
    )
    fields.update(overrides)
    return GPT1Config(**fields)


def tiny_config_for(tokenizer, **overrides):
    """`tiny_config` sized for a GPT-1 tokenizer (its vocabulary, its special-token ids)."""
    from hf_gpt1 import add_gpt1_special_tokens

    ids = add_gpt1_special_tokens(tokenizer)
    special = {f"{name}_token_id": token_id for name, token_id in ids.items()}
    return tiny_config(vocab_size=len(tokenizer), **{**special, **overrides})


def shared_data(*parts: str) -> Path:
    """Path under ../shared/data, or skip the test with the reason when that real data is absent (a user's clone)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data {path} is absent (it lives in ../shared/data beside the repo, never in it)")
    return path


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running test, excluded from the CI fast suite (-m 'not slow')")


@pytest.fixture(scope="session")
def wikitext_slice(tmp_path_factory) -> dict[str, Path]:
    """~100 kB of WikiText-2 for training and a disjoint ~25 kB for held-out perplexity."""
    lines = shared_data("text", "wikitext-2", "valid.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    folder = tmp_path_factory.mktemp("wikitext")
    (folder / "train.txt").write_text("".join(lines[:400]), encoding="utf-8")
    (folder / "valid.txt").write_text("".join(lines[3000:3100]), encoding="utf-8")
    return {"train": folder / "train.txt", "validation": folder / "valid.txt"}


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory, wikitext_slice) -> Path:
    """A tiny GPT-1 pre-trained by `recipes/pretrain.py`'s code (dropout 0, so fine-tuning runs are reproducible)."""
    from hf_gpt1.pretraining import pretrain_main

    out = tmp_path_factory.mktemp("pretrain") / "run"
    results = pretrain_main(
        [
            "--train_files", str(wikitext_slice["train"]),
            "--validation_files", str(wikitext_slice["validation"]),
            "--output_dir", str(out),
            *TINY_LM, "--dropout", "0",
            "--max_steps", "16", "--per_device_train_batch_size", "8", "--warmup_steps", "4",
            "--eval_steps", "8", "--save_steps", "8", "--logging_steps", "4", "--seed", "1",
            *COMMON,
        ]
    )  # fmt: skip
    out.joinpath("results_in_memory.json").write_text(json.dumps(results, default=str))
    return out


@pytest.fixture(scope="session")
def glue_slice(tmp_path_factory) -> Path:
    """The first rows of the real RTE, STS-B and CoLA TSVs, in the GLUE folder layout."""
    root = tmp_path_factory.mktemp("glue")
    for folder in ("RTE", "STS-B", "CoLA"):
        (root / folder).mkdir()
        for name, n in GLUE_ROWS.items():
            lines = shared_data("glue", folder, f"{name}.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
            (root / folder / f"{name}.tsv").write_text("".join(lines[:n]), encoding="utf-8")
    return root


def glue_args(task: str, model: Path, data_dir: Path, out: Path, *extra: str) -> list[str]:
    """Arguments of a short `recipes/glue.py` run on a GLUE folder."""
    return [
        "--task", task, "--data_dir", str(data_dir), "--model_name_or_path", str(model), "--output_dir", str(out),
        "--num_train_epochs", "1", "--per_device_train_batch_size", "16", "--per_device_eval_batch_size", "32",
        "--max_seq_length", "64", "--learning_rate", "1e-3", "--logging_steps", "1", "--seed", "7",
        *COMMON, *extra,
    ]  # fmt: skip


@pytest.fixture
def no_training(monkeypatch):
    """Bad input must be rejected before the first training step."""
    from transformers import Trainer

    def train(self, *args, **kwargs):
        raise AssertionError("training started despite the bad input")

    monkeypatch.setattr(Trainer, "train", train)


def run_cli(capsys, main) -> str:
    """Runs a recipe's `main` as its script does (`run_recipe`); returns the one-line error it printed (exit 2)."""
    from hf_gpt1.runs import run_recipe

    with pytest.raises(SystemExit) as exit_info:
        run_recipe(main)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    return lines[0]
