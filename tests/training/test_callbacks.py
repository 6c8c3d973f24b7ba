# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The Trainer callbacks (hf_gpt1.training.callbacks): a graceful stop on a signal, and a checkpoint complete
only after its model is saved."""

from __future__ import annotations

import signal

from transformers import default_data_collator

from hf_gpt1 import GPT1LMHeadModel, process_control
from hf_gpt1.process_control import controlled, handled_signals
from hf_gpt1.training.checkpoints import last_complete_checkpoint
from hf_gpt1.training.trainer import GPT1Trainer
from tests.utils import lm_windows, tiny_config, trainer_arguments


def test_a_signal_inherited_as_ignored_stays_ignored(monkeypatch):
    """`nohup` (SIGHUP) and a background job (SIGINT) start a process with the signal ignored: neither a command nor
    training installs a handler over it."""
    from hf_gpt1.training.callbacks import GracefulStop

    monkeypatch.setitem(process_control._INHERITED, signal.SIGHUP, signal.SIG_IGN)
    monkeypatch.setitem(process_control._INHERITED, signal.SIGINT, signal.SIG_IGN)
    assert handled_signals() == (signal.SIGTERM,)
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGHUP, signal.SIGINT)}
    stop = GracefulStop()
    with controlled():
        assert signal.getsignal(signal.SIGTERM) is process_control._terminate
        assert {signum: signal.getsignal(signum) for signum in before} == before
        stop.on_train_begin(None, None, None)
        assert signal.getsignal(signal.SIGTERM) == stop._handle
        assert {signum: signal.getsignal(signum) for signum in before} == before
        stop.on_train_end(None, None, None)


def test_save_model_is_still_called_first_for_each_checkpoint(tmp_path):
    """GPT1Trainer learns that a checkpoint is being written from `save_model(..., _internal_call=True)`, the first
    write of Trainer's checkpoint save; CheckpointCompletion marks it complete in `on_save`, after the last."""
    calls = []

    class Recording(GPT1Trainer):
        def save_model(self, output_dir=None, _internal_call=False):
            calls.append(("save_model", _internal_call, output_dir))
            super().save_model(output_dir, _internal_call)

    trainer = Recording(
        model=GPT1LMHeadModel(tiny_config()),
        args=trainer_arguments(
            tmp_path, per_device_train_batch_size=4, max_steps=2, save_strategy="steps", save_steps=2
        ),
        train_dataset=lm_windows(8),
        data_collator=default_data_collator,
    )
    trainer.train()
    assert calls == [("save_model", True, str(tmp_path / "out" / "checkpoint-2"))]
    assert last_complete_checkpoint(tmp_path / "out") == str(tmp_path / "out" / "checkpoint-2")
