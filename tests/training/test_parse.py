# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The one parse of a run's arguments (hf_gpt1.training.parse): one argument given twice in one place, or
with one dash, is refused before anything runs."""

from __future__ import annotations

import pytest

from hf_gpt1.commands.command_line import parse_recipe_args


@pytest.mark.parametrize(
    ("words", "problem"),
    [
        (
            ["--original_embedding_table", "true", "--no-original-embedding-table"],
            "--original_embedding_table and --no_original_embedding_table are one argument, given twice on the "
            "command line: keep one of them.",
        ),
        (["--seed", "1", "--seed=2"], "--seed is given twice on the command line: keep one of them."),
    ],
)
def test_one_argument_given_twice_in_one_place_is_refused_not_settled_by_the_last(words, problem, tmp_path):
    """Two values for one argument, under any spelling the parser takes (issue 50): argparse would keep the last
    silently; the one parse refuses it before anything runs. A file and the command line are two places: the
    command line overrides the file."""
    from hf_gpt1.commands.glue import ARGUMENTS

    with pytest.raises(ValueError) as refused:
        parse_recipe_args(ARGUMENTS, ["--task", "rte", "--output_dir", str(tmp_path), *words])
    assert str(refused.value) == problem
    config = tmp_path / "run.yaml"
    config.write_text("task: rte\noriginal_embedding_table: true\nseed: 1\n")
    model, _, training = parse_recipe_args(
        ARGUMENTS, [str(config), "--no-original-embedding-table", "--seed=2", "--output_dir", str(tmp_path)]
    )
    assert model.original_embedding_table is False and training.seed == 2


def test_a_one_dash_argument_is_refused_naming_the_two_dash_one(tmp_path):
    from hf_gpt1.commands.glue import ARGUMENTS

    with pytest.raises(ValueError, match=r"-max_steps \(did you mean --max_steps\?\)"):
        parse_recipe_args(ARGUMENTS, ["--task", "rte", "--output_dir", str(tmp_path), "-max_steps", "5"])
