# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The GPT-1 `Trainer`: plain transformers `Trainer` + Accelerate (multi-GPU, multi-node, FSDP and DeepSpeed come from
`accelerate launch --config_file recipes/configs/accelerate/<...>.yaml`), with what GPT-1 and a long run need added
through `Trainer` methods and callbacks ([`TRAINER_OVERRIDES`] lists them; a test pins each one to the installed
transformers). Two are private, as TRL's trainers override `_save_checkpoint`: where Trainer rotates checkpoints
([`ROTATION_OVERRIDES`]); nothing in `transformers.trainer` is replaced, so every other Trainer of the process keeps
its own behaviour.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import inspect
import math
import os
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import datasets
import torch
from accelerate.utils import AutocastKwargs
from torch.utils.data import DataLoader, SequentialSampler
from transformers import Trainer
from transformers.trainer_utils import has_length

from ..data.atomic import atomic_save, write_failure
from ..errors import TrainingError, TrainingInterrupted
from .callbacks import CheckpointCompletion, GracefulStop, SpeedMeter
from .checkpoints import COMPLETE_MARKER, checkpoint_elapsed
from .precision import master_weight_optimizer
from .run_folder import RunFolder

__all__ = [
    "RESUME_OVERRIDES",
    "ROTATION_OVERRIDES",
    "TRAINER_OVERRIDES",
    "GPT1Trainer",
    "PretrainTrainer",
    "TrainingError",
    "TrainingInterrupted",
]

TRAINER_OVERRIDES = {
    "train": "a checkpoint that cannot be written (full or read-only disk) stops the run with one line naming the "
    "checkpoint `--resume` continues from; a stop on a signal raises TrainingInterrupted after its checkpoint",
    "training_step": "the speed meter counts each batch's tokens on the device",
    "get_decay_parameter_names": "weight decay on matrices only, as the original code",
    "get_eval_dataloader": "evaluation reads every row in input order (Trainer would drop the last partial batch "
    "under dataloader_drop_last and group by length under train_sampling_strategy)",
    "get_test_dataloader": "prediction likewise: predict()'s row i is example i",
    "compute_loss": "keeps L2 and L1 of the fine-tuning heads for the log",
    "log": "adds the means of L2 and L1; stops on a non-finite loss or gradient norm",
    "save_model": "never writes non-finite weights; notes which checkpoint is being written",
    "prediction_step": "(PretrainTrainer) the loss without the (batch, seq, vocab) logits",
    "evaluation_loop": "adds the head's own L2 (`clf_loss`, as training logs it) to every evaluation; "
    "(PretrainTrainer) adds perplexity",
}
"""Every public `Trainer` method hf_gpt1 overrides, with why. `tests/training/test_trainer.py` checks their
signatures against the installed transformers, so a release that changes one fails loudly, naming its version."""

ROTATION_OVERRIDES = {
    "_save_checkpoint": "Trainer rotates (save_total_limit) at the end of its checkpoint save, before "
    "CheckpointCompletion marks the new checkpoint complete: withheld, and applied after the marker instead",
    "_finalize_training": "at the end of training, under save_total_limit 1, Trainer deletes every checkpoint but the "
    "best, the newest complete one included, although the run has not finished: withheld",
}
"""The private `Trainer` methods hf_gpt1 overrides, with why: where Trainer rotates checkpoints, as TRL's trainers
override `_save_checkpoint`. The test that pins the public ones also pins these, their signatures and the lines of
transformers' source they change."""

RESUME_OVERRIDES = {
    "_run_epoch": "resumed from a checkpoint at max_steps (a run killed before its final save), Trainer's loop takes "
    "one more update before it checks the limit: the epoch is not entered",
}
"""The private `Trainer` method hf_gpt1 overrides where Trainer resumes, with why; pinned beside the rotation ones."""


class GPT1Trainer(Trainer):
    """`Trainer` with GPT-1's optimizer grouping, L1/L2 logging, in-order evaluation and crash-safe checkpoints.

    * Weight decay (decoupled, as the original Adam "L2" of 0.01) applies to matrices only: tensors of rank ≥ 2
      (embeddings and projections), never to biases or LayerNorm gains — the original code's `vector_l2=False`.
    * When the model returns `clf_loss` and `lm_loss` (the fine-tuning heads), both are logged beside `loss` in
      training, and every evaluation reports the head's own `clf_loss` (L2, label smoothing included).
    * Evaluation and prediction read every row in order: `predict()`'s row i is example i.
    * A checkpoint is marked complete before older ones are rotated away ([`CheckpointCompletion`] applies
      `save_total_limit`); no model or checkpoint is written from non-finite weights, and
      a non-finite training loss or a full disk stops the run with a `TrainingError` that names the last good
      checkpoint.
    * [`speed`] measures the steady-state training speed ([`SpeedMeter`]).
    * A model with bf16 weights is trained through fp32 master weights ([`MasterWeightOptimizer`]), without
      `--bf16`'s autocast (its matmuls are bf16 already; LayerNorms stay in bf16, as faithful to the fp32 run as fp32
      LayerNorms: tests/training/test_precision.py).
    """

    def __init__(self, model=None, args=None, *positional, **kwargs):
        masters = None
        if model is not None and args is not None and not kwargs.get("optimizers"):
            masters = master_weight_optimizer(args, model)
            kwargs.setdefault("optimizer_cls_and_kwargs", masters)
        super().__init__(model, args, *positional, **kwargs)
        if masters is not None:  # bf16 weights: --bf16's autocast would only add casts (fp32 LayerNorms on CUDA)
            self.accelerator.autocast_handler = AutocastKwargs(enabled=False)
        self._component_sums: dict[str, torch.Tensor | float] = defaultdict(float)
        self._component_counts: dict[str, int] = defaultdict(int)
        self._eval_components: tuple[dict[str, torch.Tensor | float], dict[str, int]] = (
            defaultdict(float),
            defaultdict(int),
        )
        self._writing_checkpoint: str | None = None
        self.speed = SpeedMeter()
        self.stop = GracefulStop()
        self.completion = CheckpointCompletion()
        for callback in (self.speed, self.completion, self.stop):
            self.add_callback(callback)
        self.earlier_training_s = 0.0  # a resumed run's training time before its checkpoint
        self._gather_the_tables_under_zero3()

    def _gather_the_tables_under_zero3(self) -> None:
        """DeepSpeed ZeRO-3 gathers a partitioned weight only while its own module runs. GPT-1's L1 reads the
        embedding tables as its output matrix in the model's forward, outside the embeddings' own (the tied head's
        weight, without calling the head: the logits are never built; under `original_embedding_table` the position
        table too), so under ZeRO-3 each table is registered with the model, to be gathered for its whole forward and
        backward. Known only once the Trainer has read accelerate's DeepSpeed config: here, before `train` builds the
        engine."""
        from transformers.integrations import is_deepspeed_zero3_enabled

        if not (self.is_deepspeed_enabled and is_deepspeed_zero3_enabled()):
            return
        import deepspeed  # `deepspeed.zero` is an attribute, not an importable module

        tables = [module.weight for module in self.model.modules() if isinstance(module, torch.nn.Embedding)]
        for table in dict.fromkeys(tables):  # a tied table once
            deepspeed.zero.register_external_parameter(self.model, table)

    def train(self, *args, **kwargs):
        resumed = kwargs.get("resume_from_checkpoint")
        if isinstance(resumed, str | os.PathLike):
            self.earlier_training_s = checkpoint_elapsed(resumed)
            self.completion.started = time.time() - self.earlier_training_s
        try:
            result = super().train(*args, **kwargs)
        except TrainingError:
            raise
        except Exception as err:  # any writer's failure (Python's, torch's, safetensors' own error type) mid-save
            folder = self._writing_checkpoint
            if folder is None or (Path(folder) / COMPLETE_MARKER).exists():
                raise
            raise self._save_error(Path(folder), err) from err
        if self.stop.received:
            last = self.run_folder.last_complete_checkpoint()
            raise TrainingInterrupted(
                f"Stopped on {self.stop.what} at step {self.state.global_step}; "
                f"{last or 'no checkpoint'} holds the run so far.",
                self.stop.received,
            )
        return result

    @property
    def run_folder(self) -> RunFolder:
        """The folder this Trainer's run writes (`--output_dir`), whose owner marks and rotates its checkpoints."""
        return RunFolder.of(self.args)

    def _save_checkpoint(self, model, trial) -> None:
        with self._trainer_rotation_withheld():  # CheckpointCompletion rotates, once the marker is written
            super()._save_checkpoint(model, trial)

    def _finalize_training(self, trial, num_train_samples, start_time):
        # only save_total_limit 1 deletes here; the newest complete checkpoint is what --resume continues from
        with self._trainer_rotation_withheld(only_limit=1):
            return super()._finalize_training(trial, num_train_samples, start_time)

    def _run_epoch(self, *args, **kwargs):
        if 0 < self.state.max_steps <= self.state.global_step:  # the checkpoint is the whole run: nothing to train
            self.control.should_training_stop = True
            return None
        return super()._run_epoch(*args, **kwargs)

    @contextlib.contextmanager
    def _trainer_rotation_withheld(self, only_limit: int | None = None) -> Iterator[None]:
        """Inside the block, this Trainer's own code reads `save_total_limit` as None, so it rotates nothing:
        `self.args` is a shallow copy that says so. The caller's arguments object is never changed (to_dict(),
        `training_args.bin` and any other Trainer sharing it keep the limit as given), and nothing outside this
        instance is touched. `only_limit`: withhold only under that limit."""
        args = self.args
        limit = args.save_total_limit
        if not limit or (only_limit is not None and limit != only_limit):
            yield
            return
        self.args = copy.copy(args)
        self.args.save_total_limit = None
        try:
            yield
        finally:
            self.args = args

    def training_step(self, model, inputs, *args, **kwargs):
        self.speed.count(inputs)
        return super().training_step(model, inputs, *args, **kwargs)

    def get_decay_parameter_names(self, model: torch.nn.Module) -> list[str]:
        return [name for name, param in model.named_parameters() if param.ndim >= 2]

    def get_eval_dataloader(self, eval_dataset=None) -> DataLoader:
        if eval_dataset is None and self.eval_dataset is None:
            raise ValueError("Trainer: evaluation requires an eval_dataset.")
        if isinstance(eval_dataset, str):
            eval_dataset = self.eval_dataset[eval_dataset]
        return self._in_order(self.eval_dataset if eval_dataset is None else eval_dataset)

    def get_test_dataloader(self, test_dataset) -> DataLoader:
        return self._in_order(test_dataset)

    def _in_order(self, dataset) -> DataLoader:
        """Every row, in order, in batches of `eval_batch_size`; several processes each read a contiguous shard,
        which `gather_for_metrics` puts back in order."""
        if self.args.remove_unused_columns and isinstance(dataset, datasets.Dataset):
            model = self.accelerator.unwrap_model(self.model)
            model = model.get_base_model() if hasattr(model, "get_base_model") else model  # a PEFT model
            accepted = {*inspect.signature(model.forward).parameters, *self.label_names, "label", "label_ids"}
            dataset = dataset.select_columns([name for name in dataset.column_names if name in accepted])
        sequential = has_length(dataset) and self.args.world_size <= 1
        loader = DataLoader(
            dataset,
            batch_size=self.args.eval_batch_size,
            sampler=SequentialSampler(dataset) if sequential else None,
            drop_last=False,
            collate_fn=self.data_collator,
            num_workers=self.args.dataloader_num_workers,
            pin_memory=self.args.dataloader_pin_memory,
            persistent_workers=self.args.dataloader_persistent_workers,
            prefetch_factor=self.args.dataloader_prefetch_factor,
        )
        return self.accelerator.prepare(loader)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch)
        # training: the mean of the steps since the last log line; evaluation: the mean over the rows
        # (evaluation reports L2 alone: its L3 is Trainer's `loss`)
        sums, counts = (self._component_sums, self._component_counts) if model.training else self._eval_components
        rows = 1 if model.training else len(inputs["input_ids"]) if "input_ids" in inputs else 1
        for key in ("clf_loss", "lm_loss") if model.training else ("clf_loss",):
            value = outputs.get(key) if isinstance(outputs, dict) else getattr(outputs, key, None)
            if value is not None:
                # detached and summed on the device: read (synchronised) only when a log line is written
                sums[key] = sums[key] + value.detach().float() * rows
                counts[key] += rows
        return (loss, outputs) if return_outputs else loss

    def evaluation_loop(
        self, dataloader, description, prediction_loss_only=None, ignore_keys=None, metric_key_prefix="eval"
    ):
        sums, counts = self._eval_components
        sums.clear()
        counts.clear()
        output = super().evaluation_loop(dataloader, description, prediction_loss_only, ignore_keys, metric_key_prefix)
        keys = sorted(sums)
        if keys:  # the head's own L2 (label smoothing included), as training logs it
            totals = torch.stack(
                [torch.as_tensor(sums[k], device=self.args.device) for k in keys]
                + [torch.tensor(float(counts[k]), device=self.args.device) for k in keys]
            )
            if self.args.world_size > 1:
                totals = self.accelerator.reduce(totals, reduction="sum")
            totals = totals.tolist()
            for i, key in enumerate(keys):
                output.metrics[f"{metric_key_prefix}_{key}"] = totals[i] / totals[len(keys) + i]
        return output

    def log(self, logs: dict[str, float], *args, **kwargs) -> None:
        if "loss" in logs:  # a training log: add the running means of L2 and L1 since the last one
            keys = sorted(self._component_sums)
            if keys:
                means = torch.stack(
                    [torch.as_tensor(self._component_sums[k]) / self._component_counts[k] for k in keys]
                )
                if self.args.world_size > 1:  # every rank logs here: average over ranks, as Trainer does `loss`
                    means = self.accelerator.reduce(means.to(self.args.device), reduction="mean")
                for key, mean in zip(keys, means.tolist()):
                    logs[key] = round(mean, 4)
            self._component_sums.clear()
            self._component_counts.clear()
            for key in ("loss", "grad_norm"):
                if key in logs and not math.isfinite(logs[key]):
                    what = "the training loss" if key == "loss" else "the gradient norm"
                    self._stop_on_non_finite(f"{what} is {logs[key]}")
        super().log(logs, *args, **kwargs)

    def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
        # Checkpoints and the final model alike: weights that are no longer finite are never written.
        if not bool(torch.stack([torch.isfinite(p).all() for p in self.model.parameters()]).all()):  # one sync
            self._stop_on_non_finite("some weights are NaN or infinite")
        if _internal_call:  # the first file of a checkpoint: until its completion marker, a failure is a save's
            self._writing_checkpoint = output_dir
            super().save_model(output_dir, _internal_call=True)
            return
        with self._whole_state_dict():
            if not self.args.should_save:  # sharded saves aside, only the main process writes
                super().save_model(output_dir)
                return
            # the final model: each file whole or not at all (a checkpoint has its completion marker instead)
            with atomic_save(output_dir or self.run_folder.path) as staging:
                super().save_model(str(staging))

    @contextlib.contextmanager
    def _whole_state_dict(self):
        """Under FSDP with sharded checkpoints, the final model as one full state dict, which `from_pretrained`
        reads: for a sharded state dict Trainer writes no model at all. accelerate's documented switch, undone
        after the save (checkpoints stay sharded)."""
        plugin = getattr(self.accelerator.state, "fsdp_plugin", None) if self.is_fsdp_enabled else None
        if plugin is None or plugin.state_dict_type.name == "FULL_STATE_DICT":
            yield
            return
        kept = (plugin.state_dict_type, plugin.state_dict_config, plugin.optim_state_dict_config)
        plugin.state_dict_config = plugin.optim_state_dict_config = None  # made anew for the full type
        plugin.set_state_dict_type("FULL_STATE_DICT")
        try:
            yield
        finally:
            plugin.state_dict_type, plugin.state_dict_config, plugin.optim_state_dict_config = kept

    def _stop_on_non_finite(self, what: str) -> None:
        last = self.run_folder.last_complete_checkpoint()
        resume = f"the last good checkpoint is {last}" if last else "no checkpoint was written before it"
        raise TrainingError(
            f"Training stopped at step {self.state.global_step}: {what}, so the weights are no longer usable and "
            f"nothing more is saved; {resume}. Lower --learning_rate or --lm_coef, or check the data, then start "
            "again (--resume continues from that checkpoint)."
        )

    def _save_error(self, folder: Path, err: BaseException) -> TrainingError:
        """A save failure as one line: a full or read-only disk (`write_failure`: also torch's writer, whose error
        carries no errno), or the system's own message; either way what `--resume` will do."""
        failure = write_failure(err, folder.parent)
        if failure is None:
            cause, fix = f"{type(err).__name__}: {err}", "Fix that"
        elif failure.errno == errno.EROFS:
            cause, fix = f"the file system holding {folder.parent} is read-only", "Make it writable"
        else:
            cause, fix = f"the disk holding {folder.parent} is full", "Free space"
        last = RunFolder(folder.parent).last_complete_checkpoint()
        resume = f"--resume continues from {last}" if last else "no complete checkpoint exists yet"
        return TrainingError(f"Could not write {folder}: {cause}. {fix}, then rerun with --resume; {resume}.")


class PretrainTrainer(GPT1Trainer):
    """Adds `perplexity` = exp(mean token L1) to every evaluation, which never builds the logits."""

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        if prediction_loss_only:  # the fused loss alone: no (batch, seq, vocab) logits
            inputs = {**inputs, "skip_logits": True}
        return super().prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)

    def evaluation_loop(
        self, dataloader, description, prediction_loss_only=None, ignore_keys=None, metric_key_prefix="eval"
    ):
        output = super().evaluation_loop(dataloader, description, prediction_loss_only, ignore_keys, metric_key_prefix)
        loss = output.metrics.get(f"{metric_key_prefix}_loss")
        if loss is not None:
            output.metrics[f"{metric_key_prefix}_perplexity"] = math.exp(min(loss, 50.0))
        return output
