# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The GPT-1 Trainer and the recipes' training arguments (hf_gpt1.training.trainer): decay grouping, L1/L2 logging,
evaluation in input order, checkpoint rotation that cannot lose the last complete checkpoint (the kill window is
injected, not timed), a full disk and a non-finite loss stopping the run with one line that names what to resume."""

from __future__ import annotations

import dataclasses
import errno
import inspect

import datasets
import pytest
import torch
from transformers import TrainerCallback, default_data_collator

from hf_gpt1 import GPT1ForSequenceClassification, GPT1LMHeadModel
from hf_gpt1.commands.command_line import parse_recipe_args
from hf_gpt1.data import atomic as atomic_module
from hf_gpt1.data.transforms import GPT1ClassificationCollator
from hf_gpt1.training import launch
from hf_gpt1.training.arguments import RecipeTrainingArguments
from hf_gpt1.training.checkpoints import last_complete_checkpoint
from hf_gpt1.training.run_folder import RunFolder
from hf_gpt1.training.trainer import GPT1Trainer, TrainingError
from tests.utils import DELIM, EXTRACT, PAD, START, lm_trainer, lm_windows, tiny_config, trainer_arguments


def test_weight_decay_applies_to_matrices_only(tmp_path):
    trainer = lm_trainer(tmp_path)
    decayed = set(trainer.get_decay_parameter_names(trainer.model))
    for name, param in trainer.model.named_parameters():
        assert (name in decayed) == (param.ndim >= 2), name  # embeddings and projections; never biases or LN gains


# ------------------------------------------------------------------------------------------------ evaluation order


def varied_pairs(n: int) -> datasets.Dataset:
    """Classification features of very different lengths, so that length grouping would reorder them."""
    rows = [{"segment_a": list(range(1, 2 + (i * 7) % 23)), "length": 1 + (i * 7) % 23} for i in range(n)]
    return datasets.Dataset.from_list(rows)


def test_predictions_come_back_in_input_order_with_length_grouped_training(tmp_path):
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2)).eval()
    collator = GPT1ClassificationCollator(START, DELIM, EXTRACT, PAD, max_length=32)
    dataset = varied_pairs(40)
    args = trainer_arguments(
        tmp_path,
        train_sampling_strategy="group_by_length",
        per_device_eval_batch_size=4,
        remove_unused_columns=False,
        dataloader_drop_last=True,  # for training batches only: prediction must still see every row
    )
    trainer = GPT1Trainer(model=model, args=args, train_dataset=dataset, data_collator=collator)
    predicted = trainer.predict(dataset).predictions
    assert predicted.shape == (40, 2)  # no row dropped, although 40 rows make 10 batches and dataloader_drop_last
    with torch.no_grad():
        one_by_one = torch.cat([model(**collator([dataset[i]])).logits for i in range(40)])
    torch.testing.assert_close(torch.from_numpy(predicted), one_by_one, atol=1e-5, rtol=1e-4)
    assert type(trainer.get_test_dataloader(dataset).base_dataloader.sampler).__name__ == "SequentialSampler"


def test_the_last_partial_training_batch_is_dropped_when_asked(tmp_path):
    trainer = lm_trainer(tmp_path, n=18, dataloader_drop_last=True)
    assert len(trainer.get_train_dataloader()) == 4  # 18 windows, batches of 4: the 2 left over are dropped
    assert len(trainer.get_eval_dataloader(lm_windows(18))) == 3  # ceil(18 / 8): the partial batch kept


# ------------------------------------------------------------------------------------------------ logging


def test_l1_and_l2_are_logged_beside_the_loss(tmp_path):
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2))
    collator = GPT1ClassificationCollator(START, DELIM, EXTRACT, PAD)
    rows = [{"segment_a": [1 + i % 5, 2, 3], "labels": i % 2} for i in range(8)]
    args = trainer_arguments(tmp_path, per_device_train_batch_size=4, max_steps=2, remove_unused_columns=False)
    trainer = GPT1Trainer(
        model=model, args=args, train_dataset=datasets.Dataset.from_list(rows), data_collator=collator
    )
    trainer.train()
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert len(logs) == 2
    for entry in logs:
        assert entry["loss"] == pytest.approx(entry["clf_loss"] + 0.5 * entry["lm_loss"], abs=2e-4)


def test_evaluation_reports_the_heads_own_l2_with_its_label_smoothing(tmp_path):
    """Eval `clf_loss` is the quantity training logs: the head's L2, label smoothing included (row-weighted over
    batches of unequal size)."""
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2, clf_label_smoothing=0.3)).eval()
    torch.nn.init.normal_(model.score.weight, std=5.0, generator=torch.Generator().manual_seed(0))  # confident
    collator = GPT1ClassificationCollator(START, DELIM, EXTRACT, PAD)
    rows = [{"segment_a": [1 + i % 5, 2, 3 + i % 3], "labels": i % 2} for i in range(10)]
    args = trainer_arguments(tmp_path, per_device_eval_batch_size=4, remove_unused_columns=False)
    trainer = GPT1Trainer(model=model, args=args, data_collator=collator)
    metrics = trainer.evaluate(datasets.Dataset.from_list(rows), metric_key_prefix="eval_v")
    with torch.no_grad():
        whole = model(**collator(rows))
    assert metrics["eval_v_clf_loss"] == pytest.approx(whole.clf_loss.item(), rel=1e-5)
    assert "eval_v_lm_loss" not in metrics  # L3 (`eval_v_loss`) holds it
    unsmoothed = torch.nn.functional.cross_entropy(whole.logits, torch.tensor([r["labels"] for r in rows]))
    assert abs(metrics["eval_v_clf_loss"] - unsmoothed.item()) > 1e-3


# ------------------------------------------------------------------------------------------------ checkpoints


class KillAt(BaseException):
    """A kill, injected at one moment: like SIGKILL, no handler of the code under test sees it."""


def test_rotation_never_deletes_the_last_complete_checkpoint(tmp_path, monkeypatch):
    """`--save_total_limit 1`: a kill between writing checkpoint-8's files and its completion marker (injected
    exactly there) must leave checkpoint-4 complete; transformers alone deletes it before the marker exists."""
    trainer = lm_trainer(tmp_path, max_steps=8, save_strategy="steps", save_steps=4, save_total_limit=1)
    original = RunFolder.mark_complete  # the owner marks each checkpoint complete, then rotates

    def mark_or_die(run, step, **kwargs):
        if step == 8:
            raise KillAt("killed before checkpoint-8 was marked complete")
        original(run, step, **kwargs)

    monkeypatch.setattr(RunFolder, "mark_complete", mark_or_die)
    with pytest.raises(KillAt):
        trainer.train()
    out = tmp_path / "out"
    assert (out / "checkpoint-8").is_dir()  # its files were written ...
    assert last_complete_checkpoint(out) == str(out / "checkpoint-4")  # ... and the previous one is still there


def test_the_newest_checkpoint_is_kept_beside_the_best_when_training_ends(tmp_path):
    """`--save_total_limit 1` with the best checkpoint kept (here the first, by a rising eval loss): when training
    ends, the newest complete checkpoint stays too (transformers alone deletes all but the best), so a kill while
    the test split is predicted resumes from the newest, not from the best's older step."""
    args = trainer_arguments(
        tmp_path, per_device_train_batch_size=4, max_steps=12, save_strategy="steps", save_steps=4,
        eval_strategy="steps", eval_steps=4, save_total_limit=1, load_best_model_at_end=True,
        metric_for_best_model="loss", greater_is_better=True,
    )  # fmt: skip
    trainer = GPT1Trainer(model=GPT1LMHeadModel(tiny_config()), args=args, train_dataset=lm_windows(16),
                          eval_dataset=lm_windows(8), data_collator=default_data_collator)  # fmt: skip
    trainer.train()
    out = tmp_path / "out"
    assert trainer.state.best_model_checkpoint == str(out / "checkpoint-4")
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-12", "checkpoint-4"]
    assert last_complete_checkpoint(out) == str(out / "checkpoint-12")


def test_rotation_after_completion(tmp_path):
    trainer = lm_trainer(tmp_path, max_steps=12, save_strategy="steps", save_steps=4, save_total_limit=1)
    trainer.train()
    assert sorted(p.name for p in (tmp_path / "out").glob("checkpoint-*")) == ["checkpoint-12"]


class TrainAnother(TrainerCallback):
    """At this trainer's first checkpoint, trains `other` to its end, and notes whether transformers' checkpoint
    rotation is its own at every step: two Trainers interleaved in one process."""

    def __init__(self, other):
        import transformers.trainer
        import transformers.trainer_utils

        self.other, self.started = other, False
        self.module, self.original = transformers.trainer, transformers.trainer_utils
        self.replaced: list[str] = []

    def on_step_end(self, args, state, control, **kwargs):
        for name in ("rotate_checkpoints", "sort_checkpoints"):
            if getattr(self.module, name) is not getattr(self.original, name):
                self.replaced.append(f"transformers.trainer.{name} at step {state.global_step}")

    def on_save(self, args, state, control, **kwargs):
        if not self.started:
            self.started = True
            self.other.train()


@pytest.mark.parametrize("other", ["Trainer", "GPT1Trainer"])
def test_two_trainers_in_one_process_each_keep_their_own_checkpoints(other, tmp_path):
    """While a GPT1Trainer trains, nothing in `transformers.trainer` is replaced: another Trainer in the process
    (transformers' own, or a second GPT1Trainer) lists and rotates its own checkpoints by its own limit."""
    from transformers import Trainer, TrainingArguments

    first = lm_trainer(tmp_path / "first", n=48, max_steps=12, save_strategy="steps", save_steps=4, save_total_limit=2)
    second_args = TrainingArguments(
        output_dir=str(tmp_path / "second"), save_total_limit=1, report_to=[], use_cpu=True, max_steps=8,
        save_strategy="steps", save_steps=2, per_device_train_batch_size=4, disable_tqdm=True,
    )  # fmt: skip
    second = (Trainer if other == "Trainer" else GPT1Trainer)(
        model=GPT1LMHeadModel(tiny_config()), args=second_args, train_dataset=lm_windows(32),
        data_collator=default_data_collator,
    )  # fmt: skip
    watch = TrainAnother(second)
    first.add_callback(watch)
    first.train()
    assert watch.started and watch.replaced == []
    assert sorted(p.name for p in (tmp_path / "second").glob("checkpoint-*")) == ["checkpoint-8"]
    assert sorted(p.name for p in (tmp_path / "first" / "out").glob("checkpoint-*")) == [
        "checkpoint-12",
        "checkpoint-8",
    ]
    assert first.args.save_total_limit == 2 and second_args.save_total_limit == 1  # as given


@pytest.mark.parametrize("limit, kept", [(None, [12, 16, 20]), (0, [4, 8, 12, 16, 20])])
def test_a_long_run_keeps_three_checkpoints_by_default(limit, kept, tmp_path):
    overrides = {} if limit is None else {"save_total_limit": limit}
    trainer = lm_trainer(tmp_path, n=80, max_steps=20, save_strategy="steps", save_steps=4, **overrides)
    trainer.train()
    assert sorted(int(p.name.split("-")[1]) for p in (tmp_path / "out").glob("checkpoint-*")) == kept


@pytest.mark.parametrize("failure", ["ENOSPC", "torch writer", "safetensors writer"])
def test_a_full_disk_stops_with_one_line_naming_the_checkpoint_to_resume(failure, tmp_path, monkeypatch):
    """Whichever writer finds the disk full (Python's, torch's for the optimizer, safetensors' for the weights)."""
    import transformers.modeling_utils
    from safetensors import SafetensorError

    trainer = lm_trainer(tmp_path, max_steps=8, save_strategy="steps", save_steps=4)
    original = GPT1Trainer._save_optimizer_and_scheduler
    save_weights = transformers.modeling_utils.safe_save_file

    def weights_or_fail(tensors, filename, *args, **kwargs):
        if failure == "safetensors writer" and "checkpoint-8" in str(filename):
            raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")
        return save_weights(tensors, filename, *args, **kwargs)

    monkeypatch.setattr(transformers.modeling_utils, "safe_save_file", weights_or_fail)

    def save_or_fail(self, output_dir):
        if output_dir.endswith("checkpoint-8"):
            if failure == "ENOSPC":
                raise OSError(errno.ENOSPC, "No space left on device", output_dir)
            monkeypatch.setattr(atomic_module.shutil, "disk_usage", lambda path: type("U", (), {"free": 0})())
            raise RuntimeError("[enforce fail at inline_container.cc:664] . unexpected pos 128 vs 64")
        original(self, output_dir)

    monkeypatch.setattr(GPT1Trainer, "_save_optimizer_and_scheduler", save_or_fail)
    with pytest.raises(TrainingError) as info:
        trainer.train()
    message = str(info.value)
    out = tmp_path / "out"
    assert f"Could not write {out / 'checkpoint-8'}: the disk holding {out} is full" in message
    assert f"--resume continues from {out / 'checkpoint-4'}" in message


class PoisonAfter(TrainerCallback):
    """Turns one weight into NaN after step `step`, as a diverging run would."""

    def __init__(self, step: int):
        self.step = step

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step == self.step:
            with torch.no_grad():
                model.transformer.h[0].mlp.c_fc.weight[0, 0] = float("nan")


@pytest.mark.parametrize("logging_steps", [1, 100])
def test_a_non_finite_loss_stops_training_and_keeps_the_last_good_checkpoint(logging_steps, tmp_path):
    """Caught at the next log line, or (logging rarely) before the next checkpoint: nothing NaN is ever saved."""
    trainer = lm_trainer(tmp_path, max_steps=12, save_strategy="steps", save_steps=4, logging_steps=logging_steps)
    trainer.add_callback(PoisonAfter(5))
    with pytest.raises(TrainingError) as info:
        trainer.train()
    out = tmp_path / "out"
    message = str(info.value)
    assert f"the last good checkpoint is {out / 'checkpoint-4'}" in message and "--resume" in message
    assert ("the training loss is nan" in message) == (logging_steps == 1)  # logged as it is, not filtered
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-4"]


# ------------------------------------------------------------------------------------------------ arguments


@pytest.mark.parametrize(
    "fields, fragment",
    [
        ({"learning_rate": float("inf")}, "--learning_rate inf is not a finite number"),
        ({"learning_rate": -1e-4}, "--learning_rate -0.0001 must be >= 0"),
        ({"per_device_train_batch_size": 0}, "--per_device_train_batch_size 0 must be a positive integer"),
        ({"save_total_limit": -1}, "--save_total_limit -1 must be >= 0 (0 keeps every checkpoint)"),
        ({"resume": True, "overwrite_output_dir": True}, "pass one of them"),
    ],
)
def test_bad_training_arguments(fields, fragment, tmp_path):
    with pytest.raises(ValueError, match=None) as info:
        trainer_arguments(tmp_path, **fields)
    assert fragment in str(info.value)


def test_cpu_defaults(tmp_path):
    args = trainer_arguments(tmp_path)
    assert args.use_cpu and not args.dataloader_pin_memory  # no accelerator here: no pinned-memory warnings
    assert not args.tf32  # TF32 is an NVIDIA GPU default only
    assert args.do_train and not args.retain_cpu_memory


def test_cuda_defaults_tf32_and_batches_copied_without_blocking(tmp_path, monkeypatch):
    """On a CUDA GPU (simulated: this machine has none) fp32 matmuls use TF32 and each batch is copied from pinned
    memory without waiting for the GPU: the fields' defaults there, so a user's own value is what the field holds."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(launch, "is_torch_tf32_available", lambda: True)
    fields = {field.name: field for field in dataclasses.fields(RecipeTrainingArguments)}
    assert fields["tf32"].default_factory() is True
    assert fields["accelerator_config"].default_factory() == {"non_blocking": True}
    monkeypatch.undo()
    (parsed,) = parse_recipe_args((RecipeTrainingArguments,), ["--output_dir", str(tmp_path), "--tf32", "false"])
    assert parsed.tf32 is False and parsed.to_dict()["tf32"] is False
    # what the default becomes: Accelerate's data loaders copy batches with non_blocking=True
    trainer = GPT1Trainer(
        model=GPT1LMHeadModel(tiny_config()),
        args=trainer_arguments(tmp_path, accelerator_config={"non_blocking": True}),
    )
    assert trainer.accelerator.dataloader_config.non_blocking


# ---------------------------------------------------------------------------------------------- pinned to transformers

# The parameters of every Trainer method GPT1Trainer overrides, as in the transformers these overrides were written
# for (5.23): a release that renames, adds or drops one fails here, naming itself, before a recipe breaks silently.
PINNED_SIGNATURES = {
    "train": ["self", "resume_from_checkpoint", "trial", "ignore_keys_for_eval"],
    "training_step": ["self", "model", "inputs", "num_items_in_batch"],
    "get_decay_parameter_names": ["self", "model"],
    "get_eval_dataloader": ["self", "eval_dataset"],
    "get_test_dataloader": ["self", "test_dataset"],
    "compute_loss": ["self", "model", "inputs", "return_outputs", "num_items_in_batch"],
    "log": ["self", "logs", "start_time"],
    "save_model": ["self", "output_dir", "_internal_call"],
    "prediction_step": ["self", "model", "inputs", "prediction_loss_only", "ignore_keys"],
    "evaluation_loop": [
        *("self", "dataloader", "description", "prediction_loss_only", "ignore_keys", "metric_key_prefix"),
    ],
}


def test_every_trainer_override_is_listed_and_pinned_to_the_installed_transformers():
    import inspect

    import transformers
    from transformers import Trainer

    from hf_gpt1.training.trainer import RESUME_OVERRIDES, ROTATION_OVERRIDES, TRAINER_OVERRIDES, PretrainTrainer

    overridden = {
        name
        for cls in (GPT1Trainer, PretrainTrainer)
        for name, value in vars(cls).items()
        if callable(value) and hasattr(Trainer, name) and not name.startswith("__")
    }
    public = {name for name in overridden if not name.startswith("_")}
    assert public == set(TRAINER_OVERRIDES) == set(PINNED_SIGNATURES)  # each one listed, with its reason
    # the only private ones are where Trainer rotates checkpoints and where it resumes, pinned by the tests below
    assert overridden - public == set(ROTATION_OVERRIDES) | set(RESUME_OVERRIDES)
    for name, expected in PINNED_SIGNATURES.items():
        actual = list(inspect.signature(getattr(Trainer, name)).parameters)
        assert actual == expected, (
            f"transformers {transformers.__version__} changed Trainer.{name}{tuple(actual)} (hf_gpt1 overrides it "
            f"for: {TRAINER_OVERRIDES[name]}); re-check GPT1Trainer.{name} against it."
        )


def test_resuming_reties_the_lm_head_without_a_missing_keys_warning(tmp_path, caplog):
    """The tied head is saved once, as the token embedding; Trainer re-ties it on resume because the model lists it in
    `_keys_to_ignore_on_save` (the mechanism of transformers' `Trainer._issue_warnings_after_load`)."""
    first = lm_trainer(tmp_path, max_steps=2, save_strategy="steps", save_steps=2)
    first.train()
    resumed = lm_trainer(tmp_path, max_steps=4, save_strategy="steps", save_steps=2)
    with caplog.at_level("WARNING", logger="transformers.trainer"):
        resumed.train(resume_from_checkpoint=str(tmp_path / "out" / "checkpoint-2"))
    assert "missing keys" not in caplog.text
    model = resumed.model
    assert model.lm_head.weight.data_ptr() == model.transformer.tokens_embed.weight.data_ptr()


def test_a_plain_save_total_limit_is_applied_after_the_marker(tmp_path):
    """transformers' own TrainingArguments (TRL's, a user's) get the same crash-safe rotation, the field unchanged."""
    from transformers import TrainingArguments

    args = TrainingArguments(
        output_dir=str(tmp_path / "out"), save_total_limit=1, report_to=[], use_cpu=True, max_steps=8,
        save_strategy="steps", save_steps=4, per_device_train_batch_size=4, disable_tqdm=True,
    )  # fmt: skip
    trainer = GPT1Trainer(
        model=GPT1LMHeadModel(tiny_config()), args=args, train_dataset=lm_windows(16),
        data_collator=default_data_collator,
    )  # fmt: skip
    trainer.train()
    assert sorted(p.name for p in (tmp_path / "out").glob("checkpoint-*")) == ["checkpoint-8"]
    assert args.save_total_limit == 1 and trainer.args.save_total_limit == 1


def test_the_private_rotation_overrides_are_pinned_to_the_installed_transformers():
    """GPT1Trainer withholds Trainer's own rotation by overriding the two private methods that rotate
    (`ROTATION_OVERRIDES`), as TRL's trainers override `_save_checkpoint`; inside them Trainer must still read the
    limit from `self.args.save_total_limit` (what the override sets to None on its own copy), and nothing else in
    `transformers.trainer` may rotate or delete checkpoints. A release that changes any of it fails here, naming its
    version."""
    import transformers
    import transformers.trainer as transformers_trainer
    from transformers import Trainer

    from hf_gpt1.training.trainer import ROTATION_OVERRIDES

    recheck = f"transformers {transformers.__version__} changed Trainer.{{}}: re-check GPT1Trainer.{{}} against it."
    assert set(ROTATION_OVERRIDES) == {"_save_checkpoint", "_finalize_training"}
    signatures = {
        "_save_checkpoint": ["self", "model", "trial"],
        "_finalize_training": ["self", "trial", "num_train_samples", "start_time"],
    }
    for name, expected in signatures.items():
        assert list(inspect.signature(getattr(Trainer, name)).parameters) == expected, recheck.format(name, name)
        assert name in vars(GPT1Trainer), name
    save = inspect.getsource(Trainer._save_checkpoint)
    assert "rotate_checkpoints(" in save and "save_total_limit=self.args.save_total_limit" in save, recheck.format(
        "_save_checkpoint", "_save_checkpoint"
    )
    finalize = inspect.getsource(Trainer._finalize_training)
    assert "self.args.save_total_limit == 1" in finalize and "shutil.rmtree(checkpoint" in finalize, recheck.format(
        "_finalize_training", "_finalize_training"
    )
    # the only places of transformers.trainer that rotate, list or delete checkpoints are these two
    module = inspect.getsource(transformers_trainer).splitlines()
    for call in ("rotate_checkpoints(", "sort_checkpoints(", "shutil.rmtree(checkpoint"):
        inside = [line for line in (save + finalize).splitlines() if call in line]
        assert [line for line in module if call in line and not line.lstrip().startswith(("def ", "#"))] == inside, (
            f"transformers {transformers.__version__} calls {call[:-1]} elsewhere in transformers.trainer: withhold "
            "it there too (hf_gpt1.training.trainer.ROTATION_OVERRIDES)."
        )


def test_the_private_resume_override_is_pinned_to_the_installed_transformers():
    """`_run_epoch` (`RESUME_OVERRIDES`) is called once per epoch from the training loop, after the state is restored
    from the checkpoint, and the loop stops on `control.should_training_stop`. A release that changes either fails
    here, naming its version."""
    import transformers
    from transformers import Trainer

    from hf_gpt1.training.trainer import RESUME_OVERRIDES

    recheck = f"transformers {transformers.__version__} changed Trainer._run_epoch: re-check GPT1Trainer._run_epoch."
    assert set(RESUME_OVERRIDES) == {"_run_epoch"} and "_run_epoch" in vars(GPT1Trainer)
    expected = ["self", "model", "epoch", "train_dataloader", "steps_in_epoch", "num_update_steps_per_epoch", "trial"]
    expected += ["ignore_keys_for_eval", "start_time", "resume_from_checkpoint", "epochs_trained"]
    expected += ["steps_trained_in_current_epoch"]
    assert list(inspect.signature(Trainer._run_epoch).parameters) == expected, recheck
    loop = inspect.getsource(Trainer._inner_training_loop)
    restored, called = loop.find("self._init_training_state("), loop.find("self._run_epoch(")
    assert 0 <= restored < called and "if self.control.should_training_stop:" in loop[called:], recheck


def test_trainer_finds_one_label_column_for_the_language_model():
    """Trainer takes every forward parameter named like a label for a column each batch must carry: a named
    `shift_labels` would make every pre-training evaluation loss-less (it is read from the keyword arguments)."""
    from transformers.utils import find_labels

    assert find_labels(GPT1LMHeadModel) == ["labels"]


def test_an_fsdp_runs_final_model_is_saved_whole_and_its_checkpoints_sharded(tmp_path, monkeypatch):
    """With accelerate's SHARDED_STATE_DICT (recipes/configs/accelerate/fsdp.yaml), transformers' Trainer writes no
    final model at all: the H200's FSDP stage trained and resumed, and from_pretrained found no config.json. The
    final save gathers one full state dict (accelerate's documented switch to FULL_STATE_DICT for it); checkpoints
    stay sharded, and the plugin is left as it was. The CPU stands in: the FSDP plugin is set, the save recorded."""
    from accelerate import FullyShardedDataParallelPlugin
    from transformers import Trainer

    args = RecipeTrainingArguments(output_dir=str(tmp_path), report_to="none", save_strategy="no")
    trainer = GPT1Trainer(model=GPT1LMHeadModel(tiny_config()), args=args)
    plugin = FullyShardedDataParallelPlugin(fsdp_version=2, state_dict_type="SHARDED_STATE_DICT")
    sharded_configs = (plugin.state_dict_config, plugin.optim_state_dict_config)
    monkeypatch.setattr(trainer.accelerator.state, "fsdp_plugin", plugin, raising=False)
    monkeypatch.setattr(trainer, "is_fsdp_enabled", True)
    saved = []
    monkeypatch.setattr(Trainer, "save_model", lambda self, *a, **k: saved.append(plugin.state_dict_type.name))
    trainer.save_model(str(tmp_path / "checkpoint-1"), _internal_call=True)
    trainer.save_model()
    assert saved == ["SHARDED_STATE_DICT", "FULL_STATE_DICT"]
    assert plugin.state_dict_type.name == "SHARDED_STATE_DICT"
    assert (plugin.state_dict_config, plugin.optim_state_dict_config) == sharded_configs


def test_resuming_a_checkpoint_at_max_steps_trains_no_further_update(tmp_path):
    """A run killed after its last checkpoint (at --max_steps) but before its final save: `--resume` finishes it from
    that checkpoint. transformers' loop would first take one more step (learning rate 0, AdamW's moments still
    moving the weights) before it checks the limit."""
    from safetensors.torch import load_file

    lm_trainer(tmp_path, max_steps=2, save_strategy="steps", save_steps=2).train()
    checkpoint = tmp_path / "out" / "checkpoint-2"
    resumed = lm_trainer(tmp_path, max_steps=2, save_strategy="steps", save_steps=2)
    resumed.train(resume_from_checkpoint=str(checkpoint))
    assert resumed.state.global_step == 2
    assert [entry["step"] for entry in resumed.state.log_history if "loss" in entry] == [1, 2]
    saved = load_file(checkpoint / "model.safetensors")
    for name, value in resumed.model.state_dict().items():
        if name in saved:
            assert torch.equal(value, saved[name]), name
