# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The data layer's errors in the command line's words (hf_gpt1.training.flags): a
path named by the flag that gave it."""

from __future__ import annotations

import pytest

from tests.utils import run_command


def test_the_command_line_names_a_data_layer_error_by_its_flags(tiny, tmp_path, capsys):
    """The data layer names a file by its path (and line) and an argument by its name; the command names them by the
    flags that gave them: the same error, in each one's words."""
    from hf_gpt1.data.files import load_task_splits
    from hf_gpt1.data.tasks import get_task

    bad = tmp_path / "train.csv"
    bad.write_text("sentence1,sentence2,label\na,b\n", encoding="utf-8")
    with pytest.raises(ValueError) as library:
        load_task_splits(get_task("rte"), train_file=str(bad), validation_file=str(bad))
    assert str(library.value).startswith(f"{bad}:2: expected 3 fields") and "--" not in str(library.value)
    argv = ["--task", "rte", "--train_file", bad, "--validation_file", bad, "--output_dir", tmp_path / "out",
            "--model_name_or_path", tiny]  # fmt: skip
    command = run_command(capsys, "glue", *argv, "--report_to", "none").error
    assert command == f"error: --train_file {library.value}"
    with pytest.raises(ValueError, match="`story_cloze_protocol` needs a `train_file`"):
        load_task_splits(get_task("story_cloze"), test_file=str(bad), story_cloze_protocol=True)
    argv = ["--task", "story_cloze", "--test_file", bad, "--story_cloze_protocol", "true",
            "--model_name_or_path", tiny]  # fmt: skip
    command = run_command(
        capsys, "multiple-choice", *argv, "--output_dir", tmp_path / "sc", "--report_to", "none"
    ).error
    assert command.startswith("error: --story_cloze_protocol needs a --train_file"), command
    assert not (tmp_path / "out").exists()
