"""Training pieces the recipes share: the GPT-1 Trainer, crash-safe checkpoints and output-folder hygiene.

Everything here is plain transformers `Trainer` + Accelerate: multi-GPU, multi-node, FSDP and DeepSpeed come from
`accelerate launch --config_file recipes/configs/<...>.yaml`, never from code of ours.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import re
import shutil
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import yaml
from transformers import HfArgumentParser, Trainer, TrainerCallback, TrainingArguments
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

COMPLETE_MARKER = "checkpoint_complete.json"
RUN_FILE = "hf_gpt1_run.json"


@dataclass
class RecipeTrainingArguments(TrainingArguments):
    """`TrainingArguments` plus what every hf_gpt1 recipe adds: run ownership, resume, and `--bf16` on CPU."""

    logging_steps: float = field(default=10, metadata={"help": "Log every N steps."})
    overwrite_output_dir: bool = field(default=False, metadata={"help": "Replace an output dir holding another run."})
    resume: bool = field(default=False, metadata={"help": "Continue from the newest complete checkpoint."})
    retain_cpu_memory: bool | None = field(
        default=None,
        metadata={
            "help": "CPU training: reuse freed memory instead of page-faulting it in every step (glibc). Default: on "
            "where every batch has one shape (pre-training windows), off for fine-tuning's variable batch shapes."
        },
    )

    def __post_init__(self):
        # Without an accelerator, `use_cpu` is what makes two things work: Trainer refuses `--bf16` otherwise (and
        # on CPUs with AMX bf16 is the fast path), and only with it does Accelerate set up CPU distributed training
        # (gloo) under `accelerate launch --multi_gpu` / `torchrun`; without it each process believes it is rank 0
        # of 1 and trains alone on all the data.
        launched = int(os.environ.get("WORLD_SIZE", "1")) > 1 or int(os.environ.get("LOCAL_RANK", "-1")) != -1
        if (self.bf16 or launched) and not torch.accelerator.is_available():
            self.use_cpu = True
        super().__post_init__()


class GPT1Trainer(Trainer):
    """`Trainer` with GPT-1's optimizer grouping and L1/L2 logging.

    * Weight decay (decoupled, as the original Adam "L2" of 0.01) applies to matrices only: tensors of rank ≥ 2
      (embeddings and projections), never to biases or LayerNorm gains — the original code's `vector_l2=False`.
    * When the model returns `clf_loss` and `lm_loss` (the fine-tuning heads), both are logged beside `loss`.
    * Training on the CPU, freed memory stays in the process (`retain_freed_cpu_memory`) when the arguments'
      `retain_cpu_memory` says so, by default when every batch has one shape (`fixed_batch_shape`): there the heap
      is reused exactly; batches of varying shapes fragment a heap that is never trimmed (GPT-1 fine-tuning on RTE:
      resident memory 3.1 → 5.1 GB over 60 steps, for 5% more speed).
    """

    fixed_batch_shape: bool = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        retain = getattr(self.args, "retain_cpu_memory", None)
        if self.args.device.type == "cpu" and (self.fixed_batch_shape if retain is None else retain):
            retain_freed_cpu_memory()
        self._component_sums: dict[str, float] = defaultdict(float)
        self._component_counts: dict[str, int] = defaultdict(int)

    def get_decay_parameter_names(self, model: torch.nn.Module) -> list[str]:
        return [name for name, param in model.named_parameters() if param.ndim >= 2]

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch)
        if model.training:
            for key in ("clf_loss", "lm_loss"):
                value = outputs.get(key) if isinstance(outputs, dict) else getattr(outputs, key, None)
                if value is not None:
                    self._component_sums[key] += value.detach().float().item()
                    self._component_counts[key] += 1
        return (loss, outputs) if return_outputs else loss

    def log(self, logs: dict[str, float], *args, **kwargs) -> None:
        if "loss" in logs:  # a training log: add the running means of L2 and L1 since the last one
            keys = sorted(self._component_sums)
            means = [self._component_sums[key] / max(self._component_counts[key], 1) for key in keys]
            if keys and self.args.world_size > 1:  # every rank logs here: average over ranks, as Trainer does `loss`
                reduced = self.accelerator.reduce(torch.tensor(means, device=self.args.device), reduction="mean")
                means = reduced.tolist()
            for key, mean in zip(keys, means):
                logs[key] = round(mean, 4)
            self._component_sums.clear()
            self._component_counts.clear()
        super().log(logs, *args, **kwargs)


_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4  # mallopt parameters, glibc's malloc.h


def retain_freed_cpu_memory() -> bool:
    """Keeps the memory PyTorch frees on the CPU inside the process, so the next training step reuses it.

    glibc serves each allocation above its mmap threshold (32 MiB at most) with a fresh `mmap` and unmaps it when it
    is freed, so every training step faults all its large tensors in again page by page: the LM head's logits, the
    embedding and master-weight gradients, AdamW's temporaries. At GPT-1 size that is ~160,000 page faults per step,
    a fifth of a bf16 step on a 2-core VM. Here large allocations come from the heap and freed memory is not trimmed
    back to the system: after the first steps none fault (measured: 0 per step). The process's resident memory then
    stays at its training high-water mark, as a GPU's caching allocator keeps its blocks. Process-wide, and meant for
    training processes; `GPT1Trainer` calls it on the CPU where batch shapes are fixed (pre-training) or when asked.

    Returns:
        `bool`: whether the setting took effect (False where the C library is not glibc).
    """
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL("libc.so.6")
    return bool(libc.mallopt(_M_MMAP_MAX, 0)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, 2**31 - 1))


class CompleteCheckpointCallback(TrainerCallback):
    """Marks a checkpoint folder complete once Trainer has written every file of it.

    Trainer writes a checkpoint file by file; a run killed half-way leaves a folder that looks like a checkpoint but
    is missing its optimizer or trainer state. The marker is written (and fsynced) last, so `last_complete_checkpoint`
    never resumes from such a folder.
    """

    def on_save(self, args, state, control, **kwargs):
        if not args.should_save:
            return
        folder = Path(args.output_dir) / f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}"
        if folder.is_dir():
            for path in folder.rglob("*"):
                if path.is_file():
                    _fsync(path)
            write_json_atomic(folder / COMPLETE_MARKER, {"global_step": state.global_step})


def last_complete_checkpoint(output_dir: str | os.PathLike) -> str | None:
    """The newest `checkpoint-N` folder of `output_dir` that was written completely, or None."""
    folder = Path(output_dir)
    if not folder.is_dir():
        return None
    steps = []
    for path in folder.glob(f"{PREFIX_CHECKPOINT_DIR}-*"):
        suffix = path.name.rsplit("-", 1)[-1]
        if path.is_dir() and suffix.isdigit() and (path / COMPLETE_MARKER).is_file():
            steps.append((int(suffix), path))
    return str(max(steps)[1]) if steps else None


def prepare_output_dir(
    output_dir: str | os.PathLike, run: dict[str, Any], overwrite: bool, resume: bool, claim: bool = True
) -> None:
    """Claims `output_dir` for this run, refusing to mix two runs' files.

    The run's identity (`run`: recipe, task, model, data — whatever makes its results comparable) is stored in
    `hf_gpt1_run.json`. A folder that holds another run, or files of unknown origin, is an error unless `overwrite`
    (which empties it); resuming requires the same identity. `claim=False` only checks (nothing is emptied or
    written): recipes check first and claim once every input has been validated, so a failed start leaves the folder
    as it was.
    """
    folder = Path(output_dir)
    marker = folder / RUN_FILE
    if folder.exists() and any(folder.iterdir()):
        previous = json.loads(marker.read_text()) if marker.is_file() else None
        if overwrite:
            if not claim:
                return
            shutil.rmtree(folder)
        elif resume:
            if previous != run:
                raise ValueError(
                    f"--resume: {folder} holds a different run ({previous}) than the one asked for ({run}); "
                    "resume with the original arguments, or start afresh with --overwrite_output_dir."
                )
            return
        else:
            if previous == run:
                what = "this same run (pass --resume to continue it)"
            else:
                what = f"another run ({previous})" if previous else "files that are not from an hf_gpt1 run"
            raise ValueError(
                f"Output directory {folder} already holds {what}. Pass --overwrite_output_dir to replace it, "
                "--resume to continue the same run, or choose another --output_dir."
            )
    elif resume:
        raise ValueError(f"--resume: {folder} holds no run to resume; drop --resume to start one.")
    if not claim:
        return
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(marker, run)


def check_model_path(name_or_path: str | os.PathLike, flag: str = "--model_name_or_path") -> None:
    """Refuses a local-looking model path that does not exist, before transformers reports it as a bad Hub id."""
    text = str(name_or_path)
    hub_id = re.fullmatch(r"[\w-][\w.-]*(/[\w.-]+)?", text) is not None
    if not hub_id and not Path(text).expanduser().exists():
        raise FileNotFoundError(
            f"{flag} {text}: no such folder. Give a saved checkpoint folder (config.json + model.safetensors) or a "
            "Hub id such as openai-community/openai-gpt."
        )


def load_checkpoint(model_class: type, name_or_path: str | os.PathLike, **overrides: Any):
    """`model_class.from_pretrained(name_or_path, **overrides)` with load failures turned into one clear error.

    Weights are read from `model.safetensors` (no code can run while loading it); a pickled `pytorch_model.bin` only
    through transformers' `torch.load(weights_only=True)`, which refuses anything but tensors. A classification head
    whose size differs from the requested `num_labels` is refused instead of silently re-initialised or crashing
    half-way through loading.
    """
    check_model_path(name_or_path)
    folder = Path(name_or_path)
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(f"{folder} has no config.json: it is not a saved model folder.")
        try:
            saved = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"{folder / 'config.json'} is not valid JSON ({err}); re-save the model.") from None
        heads = [a for a in saved.get("architectures") or [] if a.endswith("ForSequenceClassification")]
        wanted = overrides.get("num_labels")
        saved_labels = _saved_head_rows(folder) if heads and wanted is not None else None
        if saved_labels is not None and saved_labels != wanted:
            raise ValueError(
                f"{folder} holds a {heads[0]} with a {saved_labels}-label head; this task "
                f"needs {wanted} label(s). Fine-tune from the pre-trained (language-model) checkpoint instead, or "
                "from a checkpoint of a task with the same labels."
            )
    try:
        return model_class.from_pretrained(name_or_path, **overrides)
    except Exception as err:  # safetensors / pickle / size-mismatch errors come in many types
        if type(err).__name__ == "UnpicklingError":
            cause = (
                "a pickled .bin that holds more than tensors, which weights-only loading refuses (it could run "
                "code). Re-save the model with save_pretrained (safetensors) from a trusted copy."
            )
        elif type(err).__name__ == "SafetensorError":
            cause = f"a truncated or corrupt model.safetensors ({err}); copy or download it again."
        elif isinstance(err, (OSError, RuntimeError)):
            cause = f"{str(err).splitlines()[0]}"
        else:
            raise
        raise ValueError(f"Could not load {model_class.__name__} from {name_or_path}: {cause}") from err


def _saved_head_rows(folder: Path) -> int | None:
    """Output size of the classifier saved in `folder/model.safetensors` (read from the header only), or None."""
    from safetensors import safe_open

    try:
        with safe_open(str(folder / "model.safetensors"), framework="pt") as weights:
            if "score.weight" in weights.keys():
                return int(weights.get_slice("score.weight").get_shape()[0])
    except Exception:  # no or damaged weights: from_pretrained reports it
        return None
    return None


def write_json_atomic(path: str | os.PathLike, data: Any) -> None:
    """Writes JSON through a temporary file and a rename, so readers never see half a file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True, default=str)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class _YamlLoader(yaml.SafeLoader):
    """YAML 1.1 reads `1e-4` (no dot) as a string; learning rates are written that way, so read them as floats."""


_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+$"), list("-+0123456789.")
)


def load_yaml(path: str | os.PathLike) -> Any:
    """Reads a YAML file, with `1e-4`-style numbers as floats."""
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_YamlLoader)


def parse_recipe_args(dataclass_types: Sequence[type], argv: Sequence[str] | None = None) -> tuple:
    """Parses a recipe's argument dataclasses from the command line, or from one YAML/JSON file given alone."""
    parser = HfArgumentParser(dataclass_types)
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) == 1 and argv[0].endswith((".yaml", ".yml")):
        return parser.parse_dict(load_yaml(argv[0]))
    if len(argv) == 1 and argv[0].endswith(".json"):
        return parser.parse_json_file(argv[0])
    return parser.parse_args_into_dataclasses(argv)


def run_recipe(main: Callable[[], Any]) -> Any:
    """Runs a recipe's `main`, turning input errors into one readable line and exit status 2.

    Input problems (unknown task, bad columns, labels or files, an occupied output dir) are raised by hf_gpt1 as
    `ValueError` / `KeyError` / `FileNotFoundError` with the cause and the fix in the message; a traceback through
    Trainer and torch would only hide it. `HF_GPT1_TRACEBACK=1` shows the traceback anyway.
    """
    try:
        result = main()
    except (ValueError, KeyError, FileNotFoundError) as err:
        if os.environ.get("HF_GPT1_TRACEBACK"):
            raise
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"error: {message}\n(HF_GPT1_TRACEBACK=1 shows where it was raised)", file=sys.stderr)
        raise SystemExit(2) from None
    # Trainer leaves the process group of a multi-process launch open: wait for every rank, then close it cleanly.
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    return result


def _fsync(path: Path) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


__all__ = [
    "CompleteCheckpointCallback",
    "RecipeTrainingArguments",
    "GPT1Trainer",
    "check_model_path",
    "load_checkpoint",
    "last_complete_checkpoint",
    "load_yaml",
    "parse_recipe_args",
    "prepare_output_dir",
    "run_recipe",
    "write_json_atomic",
]
