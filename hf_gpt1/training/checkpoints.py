# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Checkpoints that are never lost: completion markers, verified resumes, safe rotation, and model loading.

Trainer writes a checkpoint file by file; a run killed half-way leaves a folder that looks like a checkpoint but is
missing its optimizer or trainer state. `GPT1Trainer` therefore writes, after every file of a checkpoint is on disk
(fsynced), a marker recording each file's size and SHA-256 ([`mark_complete`]); a checkpoint counts only with its
marker and only while its files still have those sizes ([`checkpoint_problem`]). Rotation (`save_total_limit`) deletes
old checkpoints only once a newer one is complete ([`rotate_checkpoints`]), and a resume falls back past a checkpoint
that was damaged after it was written ([`usable_checkpoint`]): one whose files no longer have the contents recorded
at completion (weights half zeros at the same size, say) is named and the one before it is used.

This module owns checkpoint digests: they are taken in [`mark_complete`] (one read of each file, which the write has
just left in the page cache, in the pass that flushes it to disk) and compared in [`usable_checkpoint`], which every
command resumes through (its run folder's owner asks it: `hf_gpt1.training.run_folder.RunFolder.resume_checkpoint`);
the cheap checks (sizes, the weights' header) serve rotation and the messages. Which folder a checkpoint is in, and
when it is marked and rotated, is the run folder's (`hf_gpt1.training.run_folder.RunFolder`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import pickle
import re
import shutil
from collections.abc import Collection
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import torch
from huggingface_hub.errors import StrictDataclassError
from transformers.trainer_pt_utils import safe_globals
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from ..data.atomic import write_json_atomic
from ..data.hub_access import hub_access
from ..data.strict_files import StrictJSONError, read_json
from ..modeling_gpt1 import stored_shape
from ..module_names import moved_names

logger = logging.getLogger(__name__)

COMPLETE_MARKER = "checkpoint_complete.json"

__all__ = [
    "COMPLETE_MARKER",
    "batch_of",
    "checkpoint_elapsed",
    "checkpoint_problem",
    "check_model_path",
    "complete_checkpoints",
    "digest_problem",
    "last_complete_checkpoint",
    "load_checkpoint",
    "load_config",
    "mark_complete",
    "rotate_checkpoints",
]

# a run resumes through its folder's owner: hf_gpt1.training.run_folder.RunFolder.resume_checkpoint
__getattr__ = moved_names(__name__, ("hf_gpt1.training.run_folder",), ("resume_checkpoint",))


class DamagedMarker(ValueError):
    """A completion marker that is not what [`mark_complete`] writes; `str()` says why."""


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _marker(folder: str | os.PathLike) -> dict[str, Any]:
    """The completion marker of the checkpoint in `folder`, read strictly and checked against the shape
    [`mark_complete`] writes (`OSError`: none; [`DamagedMarker`]: damaged, saying why)."""
    try:
        record = read_json(Path(folder) / COMPLETE_MARKER)
    except StrictJSONError as err:
        raise DamagedMarker(err.reason) from err
    if not isinstance(record, dict):
        raise DamagedMarker("it is not a JSON object")
    files, digests = record.get("files"), record.get("sha256")
    if files is None:
        raise DamagedMarker("it records no files")
    if not isinstance(files, dict) or not all(isinstance(size, int) and size >= 0 for size in files.values()):
        raise DamagedMarker("its 'files' is not an object of file sizes")
    if digests is not None:  # a marker written before digests were recorded has none (`unverified`)
        if not isinstance(digests, dict) or not all(
            isinstance(digest, str) and _SHA256.fullmatch(digest) for digest in digests.values()
        ):
            raise DamagedMarker("its 'sha256' is not an object of SHA-256 digests")
        if set(digests) != set(files):
            raise DamagedMarker("its 'sha256' lists other files than its 'files'")
    return record


def _damaged(err: DamagedMarker) -> str:
    return f"its completion marker {COMPLETE_MARKER} is damaged ({err})"


def unverified(folder: str | os.PathLike) -> bool:
    """Whether the checkpoint's marker records no SHA-256 digests (its files' sizes are checked, their contents
    cannot be)."""
    try:
        return "sha256" not in _marker(folder)
    except (OSError, DamagedMarker):
        return False


def _sha256(f: Any) -> str:
    """The SHA-256 of an open binary file, read in 1 MiB blocks (`hashlib.file_digest` is Python 3.11's)."""
    digest = hashlib.sha256()
    while block := f.read(1 << 20):
        digest.update(block)
    return digest.hexdigest()


def _digest_and_sync(path: Path) -> str:
    """The SHA-256 of a file just written, read once (from the page cache the write left it in), then flushed to
    disk through the same descriptor."""
    with open(path, "rb") as f:
        digest = _sha256(f)
        os.fsync(f.fileno())
    return digest


def batch_of(args: Any) -> dict[str, int]:
    """How a launch batches: its processes, rows per device and accumulation (a checkpoint records it, and a resume
    compares: [`batch_change`])."""
    return {
        "world_size": max(int(args.world_size), 1),
        "per_device": int(args.per_device_train_batch_size),
        "accumulation": int(args.gradient_accumulation_steps),
    }


def mark_complete(
    folder: str | os.PathLike,
    global_step: int,
    elapsed_s: float | None = None,
    batch: dict[str, int] | None = None,
) -> None:
    """Flushes every file of a checkpoint to disk, then records it as complete with each file's size and SHA-256 (and
    the run's
    time so far, which a resumed run's summary adds to its own, and the launch's batching, [`batch_of`], which
    a resume compares with its own)."""
    folder = Path(folder)
    files, digests = {}, {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != COMPLETE_MARKER:
            name = path.relative_to(folder).as_posix()
            digests[name] = _digest_and_sync(path)
            files[name] = path.stat().st_size
    # `files` keeps its meaning (sizes) for readers of earlier markers; the digests are beside it
    record = {"global_step": global_step, "files": files, "sha256": digests}
    if elapsed_s is not None:
        record["elapsed_s"] = round(elapsed_s, 3)
    if batch is not None:
        record["batch"] = batch
    write_json_atomic(folder / COMPLETE_MARKER, record)


def checkpoint_elapsed(folder: str | os.PathLike) -> float:
    """The run's time when `folder` was saved (0 for a checkpoint that did not record it)."""
    try:
        return float(_marker(folder).get("elapsed_s", 0.0))
    except (OSError, ValueError, TypeError):  # DamagedMarker is a ValueError
        return 0.0


def checkpoint_problem(folder: str | os.PathLike) -> str | None:
    """Why `folder` is not a usable complete checkpoint (no marker, a missing or resized file, a weights file whose
    header does not parse), or None when it is one. Cheap: the contents are compared with their digests only when a
    resume reads them ([`digest_problem`])."""
    folder = Path(folder)
    marker = folder / COMPLETE_MARKER
    if not marker.is_file():
        return "it was never completed (no completion marker: the run stopped while saving it)"
    try:
        files = _marker(folder)["files"]
    except DamagedMarker as err:
        return _damaged(err)
    for name, size in files.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if path.stat().st_size != size:
            return f"{name} has {path.stat().st_size} bytes where {size} were written (truncated or overwritten)"
    for weights in folder.glob("*.safetensors"):
        problem = _safetensors_problem(weights)
        if problem:
            return f"{weights.name} {problem}"
    for state in folder.glob("*.json"):  # trainer_state.json, the config: a resume reads them first
        try:
            json.loads(state.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            return f"{state.name} is not valid JSON ({err})"
    return None


def digest_problem(folder: str | os.PathLike) -> str | None:
    """The first file of `folder` whose content is not what was written (its SHA-256 differs from the one its
    completion marker recorded), or None. A marker written before digests were recorded has none to compare."""
    folder = Path(folder)
    try:
        digests = _marker(folder).get("sha256") or {}
    except OSError:
        return "it was never completed (no completion marker: the run stopped while saving it)"
    except DamagedMarker as err:
        return _damaged(err)
    for name, recorded in sorted(digests.items()):
        path = folder / name
        try:
            with open(path, "rb") as f:
                digest = _sha256(f)
        except OSError:
            return f"{name} is missing"
        if digest != recorded:
            return (
                f"{name} is not the file written there (its SHA-256 differs from the one recorded when the "
                "checkpoint was completed: damaged or overwritten since)"
            )
    return None


def _safetensors_problem(path: Path) -> str | None:
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt") as weights:
            weights.keys()
    except (SafetensorError, OSError) as err:
        return f"does not load ({err})"
    return None


def _checkpoint_folders(output_dir: str | os.PathLike) -> list[tuple[int, Path]]:
    """`(step, folder)` of every `checkpoint-N` folder, oldest first."""
    folder = Path(output_dir)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob(f"{PREFIX_CHECKPOINT_DIR}-*"):
        match = re.fullmatch(rf"{PREFIX_CHECKPOINT_DIR}-(\d+)", path.name)
        if match and path.is_dir():
            found.append((int(match.group(1)), path))
    return sorted(found)


def complete_checkpoints(output_dir: str | os.PathLike) -> list[Path]:
    """The checkpoint folders of `output_dir` that carry a completion marker, oldest first (not verified)."""
    return [path for _, path in _checkpoint_folders(output_dir) if (path / COMPLETE_MARKER).is_file()]


def last_complete_checkpoint(output_dir: str | os.PathLike) -> str | None:
    """The newest checkpoint of `output_dir` that was written completely and is still intact, or None.

    A newer checkpoint that is incomplete or damaged is skipped with a warning that names it and says why, so a
    resume continues from the previous good one instead of failing on a truncated file.
    """
    return usable_checkpoint(output_dir)[0]


def usable_checkpoint(
    output_dir: str | os.PathLike, load_states: bool = False, log: bool = True
) -> tuple[str | None, list[str]]:
    """The newest usable checkpoint (or None) and, for each newer one skipped, why. With `load_states` (what a resume
    reads), its optimizer, scheduler and RNG states must also load as tensors only, and every file must still have
    the digest recorded when it was completed. `log`: warn of each skipped one here (a caller that says them itself
    passes False)."""
    skipped = []
    for _, path in reversed(_checkpoint_folders(output_dir)):
        problem = checkpoint_problem(path)
        if problem is None and load_states:
            problem = _state_problem(path) or digest_problem(path)
        if problem is None:
            return str(path), skipped
        if log:
            logger.warning("Not resuming from %s: %s. Trying the checkpoint before it.", path, problem)
        skipped.append(f"{path.name} was not used: {problem}")
    return None, skipped


def _state_problem(folder: Path) -> str | None:
    """Why a checkpoint's pickled states (optimizer, scheduler, RNG) would not load with transformers' weights-only
    loading, or None. Memory-mapped: the check reads the pickle, not the tensors."""
    for path in sorted([*folder.glob("*.pt"), *folder.glob("*.pth")]):
        try:
            with safe_globals():  # the numpy types transformers' own loading allows (the RNG state holds them)
                torch.load(path, weights_only=True, mmap=True, map_location="cpu")
        except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError) as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            return f"{path.name} does not load as tensors only ({first[:160]}): replaced by another file?"
    return None


def _describe(batch: dict[str, int]) -> str:
    world = batch["world_size"]
    return (
        f"{world} process{'es' if world > 1 else ''} × {batch['per_device']} per device × {batch['accumulation']} "
        "accumulation"
    )


def _global(batch: dict[str, int]) -> int:
    return batch["world_size"] * batch["per_device"] * batch["accumulation"]


def _updates_per_epoch(batch: dict[str, int], rows: int | None, drop_last: bool) -> int | None:
    """Trainer's optimizer steps per epoch under `batch` (accelerate gives each process every world-size-th batch of
    the epoch's order, the last round evened out), or None for a set without a length."""
    if rows is None:
        return None
    batches = rows // batch["per_device"] if drop_last else math.ceil(rows / batch["per_device"])
    per_process = batches // batch["world_size"] if drop_last else math.ceil(batches / batch["world_size"])
    return max(math.ceil(per_process / batch["accumulation"]), 1)


def _position(step: int, batch: dict[str, int], rows: int | None, drop_last: bool) -> tuple[int, int]:
    """(epoch, rows of that epoch's order read) after `step` updates under `batch`."""
    per_epoch = _updates_per_epoch(batch, rows, drop_last)
    if per_epoch is None:
        return 0, step * _global(batch)
    return step // per_epoch, (step % per_epoch) * _global(batch)


def _restoring_flags(recorded: dict[str, int], now: dict[str, int]) -> str:
    """The batch flags that give this launch's processes the recorded global batch."""
    wanted, world = _global(recorded), now["world_size"]
    if wanted % world:
        return (
            f"launch {recorded['world_size']} process{'es' if recorded['world_size'] > 1 else ''} (or any number that "
            f"divides {wanted})"
        )
    per_process = wanted // world
    per_device = now["per_device"] if per_process % now["per_device"] == 0 else per_process
    return f"pass --per_device_train_batch_size {per_device} --gradient_accumulation_steps {per_process // per_device}"


def batch_change(args: Any, checkpoint: Path, train_dataset: Any, unit: str) -> list[str]:
    """What resuming `checkpoint` under this launch's batching changes, for the start; raises `ValueError` for a
    change that would corrupt the run (see `RunFolder.resume_checkpoint`)."""
    try:
        marker = _marker(checkpoint)
    except (OSError, ValueError):
        marker = {}
    recorded, now = marker.get("batch"), batch_of(args)
    if not isinstance(recorded, dict) or recorded == now:
        if not isinstance(recorded, dict):
            return [
                f"{checkpoint.name} does not record the batching it was trained with (written by an earlier "
                "version): resume it with the same processes, --per_device_train_batch_size and "
                "--gradient_accumulation_steps, or the data position may move."
            ]
        return []
    step = int(marker.get("global_step", 0))
    rows = len(train_dataset) if hasattr(train_dataset, "__len__") else None
    drop_last = bool(getattr(args, "dataloader_drop_last", False))
    (old_epoch, old_read), (new_epoch, new_read) = (_position(step, b, rows, drop_last) for b in (recorded, now))
    old_global, new_global = _global(recorded), _global(now)
    was = f"{checkpoint.name} was trained with {_describe(recorded)} = a global batch of {old_global}"
    if old_global == new_global:
        lines = [
            f"{was}; this launch has {_describe(now)}, the same global batch: the data position is exact (update "
            f"{step + 1} reads the {unit} the run would have read next)."
        ]
        regrouped = recorded["per_device"] * recorded["accumulation"] != now["per_device"] * now["accumulation"]
        if getattr(args, "train_sampling_strategy", "random") == "group_by_length" and regrouped and new_read:
            lines[0] = (
                f"{was}; this launch has {_describe(now)}, the same global batch, but --train_sampling_strategy "
                "group_by_length forms its length groups per process batch, so the rest of epoch "
                f"{new_epoch + 1} is read in another order: of its {unit}, some of the {new_read} already read are "
                "read again and as many are skipped; later epochs are whole."
            )
        if recorded["world_size"] != now["world_size"]:
            lines.append(
                f"the checkpoint holds the random states of {recorded['world_size']} process(es): dropout draws "
                "other masks than an uninterrupted run would."
            )
        return lines
    schedule = str(getattr(args.lr_scheduler_type, "value", args.lr_scheduler_type))
    moved = _moved(unit, old_epoch, old_read, new_epoch, new_read)
    if schedule != "constant":
        fix = _restoring_flags(recorded, now)
        raise ValueError(
            f"--resume: {was}; this launch has {_describe(now)} = {new_global}, and under the {schedule} "
            f"learning-rate schedule (planned in updates) the rest of the run would train at another batch and "
            f"{moved}. {fix[0].upper()}{fix[1:]} to resume with the global batch of {old_global}."
        )
    return [f"{was}; this launch has {_describe(now)}: the global batch changes to {new_global}, and {moved}."]


def _moved(unit: str, old_epoch: int, old_read: int, new_epoch: int, new_read: int) -> str:
    """Where a resume at another global batch continues, against where the run was, in words."""
    if (old_epoch, old_read) == (new_epoch, new_read):
        return f"the data position stays exact (epoch {new_epoch + 1}, after {new_read} {unit})"
    if old_epoch == new_epoch:
        first, last = sorted((old_read, new_read))
        what = "are skipped" if new_read > old_read else "are read again"
        return f"{unit} {first + 1}–{last} of epoch {old_epoch + 1}'s order {what}"
    return (
        f"it continues in epoch {new_epoch + 1} after {new_read} {unit}, where the run was in epoch {old_epoch + 1} "
        f"after {old_read} (the {unit} between are read again or skipped)"
    )


def rotate_checkpoints(
    output_dir: str | os.PathLike, limit: int | None, keep: str | os.PathLike | None = None
) -> None:
    """Deletes the oldest checkpoints until at most `limit` remain, never the newest complete one nor `keep` (the
    best one), and never one newer than the newest complete one (its successor may still be unfinished). The best
    counts among the `limit`, as in transformers' `rotate_checkpoints` (`--save_total_limit 2` with an early best
    keeps the best and the newest), and both are kept even when `limit` is 1."""
    if not limit or limit <= 0:
        return
    folders = [path for _, path in _checkpoint_folders(output_dir)]
    complete = [path for path in folders if checkpoint_problem(path) is None]
    if not complete:
        return
    newest = complete[-1]
    protected = {newest.resolve(), *((Path(keep).resolve(),) if keep else ())}
    candidates = [path for path in folders[: folders.index(newest)] if path.resolve() not in protected]
    excess = len(folders) - max(limit, len(protected))
    for path in candidates[: max(excess, 0)]:
        shutil.rmtree(path, ignore_errors=True)


def check_model_path(name_or_path: str | os.PathLike, flag: str = "--model_name_or_path") -> None:
    """Refuses a local-looking model path that does not exist, before transformers reports it as a bad Hub id."""
    text = str(name_or_path)
    hub_id = re.fullmatch(r"[\w-][\w.-]*(/[\w.-]+)?", text) is not None and not Path(text).exists()
    path = Path(text).expanduser()
    if hub_id:
        return
    if not path.exists():
        raise FileNotFoundError(
            f"{flag} {text}: no such folder. Give a saved checkpoint folder (config.json + model.safetensors) or a "
            "Hub id such as openai-community/openai-gpt."
        )
    if not path.is_dir():
        raise NotADirectoryError(f"{flag} {text} is a file; give the folder that holds config.json and the weights.")


def model_hub_access(model_args: Any) -> AbstractContextManager:
    """Around loading a run's model and tokenizer: a Hub id that cannot be fetched is one line naming the flag and
    the local alternative."""
    given = [("--model_name_or_path", model_args.model_name_or_path)]
    given.append(("--tokenizer_name_or_path", getattr(model_args, "tokenizer_name_or_path", None)))
    return hub_access(
        " / ".join(f"{flag} {value}" for flag, value in given if value),
        "give a local folder instead (a checkpoint saved by hf-gpt1 pretrain, or a release converted with hf-gpt1 "
        "convert), or run where the Hub is reachable",
    )


def load_config(config_class: type, name_or_path: str | os.PathLike, **overrides: Any):
    """`config_class.from_pretrained(name_or_path, **overrides)`, with a value the model cannot be built with (the
    config's own validation) as one line naming config.json."""
    try:
        return config_class.from_pretrained(name_or_path, **overrides)
    except StrictDataclassError as err:
        raise ValueError(
            f"{name_or_path}: its config.json is invalid ({err.__cause__ or err}); correct the value or re-save the "
            "model."
        ) from None


def _check_shapes(model_class: type, folder: Path) -> None:
    """Compares each tensor of `folder/model.safetensors` (its header only) with the shape the model built from
    config.json gives it (on the meta device: nothing is allocated, however absurd the sizes)."""
    from safetensors import SafetensorError, safe_open

    config = load_config(model_class.config_class, folder)
    with torch.device("meta"):
        model = model_class(config)
    expected = {name: stored_shape(name, t.shape, config) for name, t in model.state_dict().items()}
    try:
        with safe_open(str(folder / "model.safetensors"), framework="pt") as weights:
            saved = {name: tuple(weights.get_slice(name).get_shape()) for name in weights.keys()}
    except (SafetensorError, OSError):  # no or damaged weights: from_pretrained reports it
        return
    wrong = [(name, shape, expected[name]) for name, shape in saved.items() if expected.get(name, shape) != shape]
    if wrong:
        name, shape, needed = wrong[0]
        raise ValueError(
            f"Could not load {model_class.__name__} from {folder}: tensor {name} has shape {shape} in "
            f"model.safetensors, but config.json builds it as {needed} ({len(wrong)} such tensor(s): transposed, or "
            "config.json describes another model size); re-convert or re-save the checkpoint."
        )


def load_checkpoint(
    model_class: type,
    name_or_path: str | os.PathLike,
    new_weights: Collection[str] = (),
    missing_hint: str = "re-save the checkpoint from a complete model (save_pretrained)",
    **overrides: Any,
):
    """`model_class.from_pretrained(name_or_path, **overrides)` with load failures turned into one clear error.

    Weights are read from `model.safetensors` (no code can run while loading it); a pickled `pytorch_model.bin` only
    through transformers' `torch.load(weights_only=True)`, which refuses anything but tensors.

    Args:
        model_class (`type`): The hf_gpt1 class to load.
        name_or_path (`str` or `os.PathLike`): A model folder or Hub id.
        new_weights (`Collection[str]`): Weights that may be absent (a head about to be fine-tuned); any other
            missing weight is refused, as it would silently start from random values.
        missing_hint (`str`): What the refusal of a missing weight tells the user to do.
        overrides: Config values (`num_labels`, `lm_coef`, ...) for `from_pretrained`.

    Raises:
        `ValueError`: A weight is missing or has another shape (both shapes named), the classification head has
            another number of labels than `num_labels`, or the files are damaged; one line, naming the file.
    """
    from safetensors import SafetensorError

    check_model_path(name_or_path)
    folder = Path(name_or_path)
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(f"{folder} has no config.json: it is not a saved model folder.")
        try:  # a config.json edited by hand: one meaning (a key given twice is refused, not the last one kept)
            saved = read_json(folder / "config.json")
        except StrictJSONError as err:
            raise ValueError(f"{folder / 'config.json'}: {err.reason}; correct it or re-save the model.") from None
        if not isinstance(saved, dict):
            raise ValueError(f"{folder / 'config.json'} holds no JSON object; re-save the model.")
        _check_shapes(model_class, folder)
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
        model, info = model_class.from_pretrained(
            name_or_path, ignore_mismatched_sizes=True, output_loading_info=True, **overrides
        )
    except StrictDataclassError as err:  # config.json holds a value the model cannot be built with
        cause = f"its config.json is invalid ({err.__cause__ or err}); correct the value or re-save the model"
    except pickle.UnpicklingError as err:
        cause = (
            f"a pickled .bin that holds more than tensors, which weights-only loading refuses (it could run code: "
            f"{str(err).splitlines()[0]}). Re-save the model with save_pretrained (safetensors) from a trusted copy."
        )
    except SafetensorError as err:
        cause = f"a truncated or corrupt model.safetensors ({err}); copy or download it again."
    except (OSError, RuntimeError) as err:
        cause = f"{str(err).splitlines()[0]}"
    else:
        mismatched = sorted(info["mismatched_keys"])
        if mismatched:
            name, saved, needed = mismatched[0]
            raise ValueError(
                f"Could not load {model_class.__name__} from {name_or_path}: tensor {name} has shape {tuple(saved)} "
                f"in the checkpoint, but its config.json builds it as {tuple(needed)} ({len(mismatched)} such "
                "tensor(s): transposed, or from another model size); re-convert or re-save the checkpoint."
            )
        tied = set(getattr(model, "_tied_weights_keys", None) or ())
        missing = sorted(set(info["missing_keys"]) - tied - set(new_weights))
        if missing:
            more = f" and {len(missing) - 4} more" if len(missing) > 4 else ""
            raise ValueError(
                f"Could not load {model_class.__name__} from {name_or_path}: it lacks {missing[:4]}{more}, which "
                f"would start from random values; {missing_hint}."
            )
        return model
    raise ValueError(f"Could not load {model_class.__name__} from {name_or_path}: {cause}")


def _saved_head_rows(folder: Path) -> int | None:
    """Output size of the classifier saved in `folder/model.safetensors` (read from the header only), or None."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(folder / "model.safetensors"), framework="pt") as weights:
            if "score.weight" in weights.keys():
                return int(weights.get_slice("score.weight").get_shape()[0])
    except (SafetensorError, OSError):  # no or damaged weights: from_pretrained reports it
        return None
    return None
