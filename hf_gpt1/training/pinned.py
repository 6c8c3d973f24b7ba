# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Plan identities: what a run will read for its model and tokenizer, resolved when it is planned, and read exactly.

A model argument names a folder or a Hub id. transformers resolves either when it loads: a Hub id to whatever commit
the cache's `refs/main` (or the Hub) names then, a folder to whichever weights file it finds first
(`model.safetensors` before `pytorch_model.bin`). A run planned on one and executed on another trains from weights
nobody planned, under a record that certifies the planned ones. Here the plan pins each model argument
([`pin_model`]): a Hub id to its commit and that commit's snapshot folder in the Hugging Face cache, a folder to
itself; and in either, the files that decide what is read (the weights and the tokenizer's files). Execute reads the
pinned folder ([`PinnedModel.loading`]) and first refuses, in one line, a folder whose deciding files changed since
([`PinnedModel.check`]); the run identity records the pins ([`pins_record`]).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DECIDING_FILES",
    "MODEL_FILES",
    "PinnedModel",
    "pin_model",
    "pinned_arguments",
    "pins_record",
    "plan_model_inputs",
]

# What a run downloads of a model repository: its config, tokenizer and safetensors weights (openai-gpt's repository
# also holds TensorFlow and Rust copies of the weights, which a run never reads); `pytorch_model.bin` only where the
# commit has no safetensors weights.
MODEL_FILES = ["*.json", "*.txt", "*.safetensors"]
PICKLED_WEIGHTS = ["pytorch_model.bin*"]

DECIDING_FILES = (
    "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json",
    "tokenizer.json", "vocab.json", "merges.txt",
)  # fmt: skip
"""The files of a model folder whose presence decides what transformers and `load_gpt1_tokenizer` read: the
safetensors weights before the pickled ones, a GPT-1 `tokenizer.json` before `vocab.json` + `merges.txt`."""


def _deciding(folder: str | os.PathLike) -> tuple[str, ...]:
    return tuple(name for name in DECIDING_FILES if (Path(folder) / name).is_file())


@dataclass(frozen=True)
class PinnedModel:
    """One model argument as the plan resolved it.

    Args:
        flag (`str`): The argument (`--model_name_or_path`, `--tokenizer_name_or_path`).
        given (`str`): Its value, as given (a Hub id or a folder).
        folder (`str`): The folder execute reads: the folder itself, or the Hub commit's snapshot folder.
        commit (`str`, *optional*): The Hub commit (None for a local folder).
        files (`tuple[str, ...]`): The files of [`DECIDING_FILES`] in the folder when planned.
    """

    flag: str
    given: str
    folder: str
    commit: str | None
    files: tuple[str, ...]

    @property
    def weights(self) -> str | None:
        """The weights file transformers reads from the folder (safetensors first), or None."""
        return next((name for name in self.files if name.startswith(("model.", "pytorch_model."))), None)

    def record(self) -> dict[str, Any]:
        """What the run identity records of the pin."""
        return {"given": self.given, "commit": self.commit, "files": list(self.files)}

    def check(self) -> None:
        """Refuses, in one line, a folder whose deciding files changed since the plan: transformers (or the
        tokenizer) would read other files than the planned ones."""
        now = _deciding(self.folder)
        if now == self.files:
            return
        came, went = sorted(set(now) - set(self.files)), sorted(set(self.files) - set(now))
        change = "; ".join(
            [*(f"{name} appeared" for name in came), *(f"{name} went" for name in went)]
        )  # fmt: skip
        where = f"{self.given} (commit {self.commit})" if self.commit else self.given
        planned = ", ".join(self.files) or "no weights or tokenizer files"
        raise ValueError(
            f"{self.flag} {where}: {change} after this run was planned (it planned {planned}), so other files would "
            "be read: nothing was trained. Run the same command again to plan the run with the folder as it is now."
        )


def pin_model(name_or_path: str, flag: str = "--model_name_or_path", revision: str | None = None) -> PinnedModel:
    """The folder and files a model argument will be read from: a local folder as it is (absolute); a Hub id at
    `revision` (default: `main`, as the Hub or, offline, the cache's `refs/main` names it now) as its commit's
    snapshot folder in the Hugging Face cache, downloaded there when the Hub is reachable and it is not yet. A Hub
    that cannot be reached raises huggingface_hub's error: the caller names its flags (`hub_access`)."""
    if Path(name_or_path).is_dir():
        folder = os.path.abspath(name_or_path)
        return PinnedModel(flag, name_or_path, folder, None, _deciding(folder))
    from huggingface_hub import snapshot_download

    folder = snapshot_download(name_or_path, revision=revision, allow_patterns=MODEL_FILES)
    if not any(name.startswith("model.") for name in _deciding(folder)):  # a commit without safetensors weights
        folder = snapshot_download(name_or_path, revision=Path(folder).name, allow_patterns=PICKLED_WEIGHTS)
    # the cache's layout: snapshots/<commit>, the files of that commit whatever refs/main names later
    return PinnedModel(flag, name_or_path, folder, Path(folder).name, _deciding(folder))


def plan_model_inputs(model_args: Any) -> tuple[PinnedModel, ...]:
    """The pins of a run's `--model_name_or_path` and `--tokenizer_name_or_path` (those given), a Hub that cannot be
    reached said in one line naming them."""
    from .checkpoints import model_hub_access

    given = [(flag, getattr(model_args, flag.removeprefix("--"), None)) for flag in MODEL_FLAGS]
    with model_hub_access(model_args):
        return tuple(pin_model(value, flag) for flag, value in given if value)


MODEL_FLAGS = ("--model_name_or_path", "--tokenizer_name_or_path")


def pinned_arguments(model_args: Any, pins: Iterable[PinnedModel]) -> Any:
    """`model_args` with each argument pinned to a Hub commit naming that commit's snapshot folder: what execute
    loads from (a local folder is read as given; its pin is checked, [`PinnedModel.check`])."""
    changes = {pin.flag.removeprefix("--"): pin.folder for pin in pins if pin.commit is not None}
    return dataclasses.replace(model_args, **changes) if changes else model_args


def pins_record(pins: Iterable[PinnedModel]) -> dict[str, Any]:
    """The run identity's record of the Hub pins (`{flag: {given, commit, files}}`): a local folder's files are
    recorded by their digests already (`input_digests`)."""
    return {pin.flag: pin.record() for pin in pins if pin.commit is not None}
