# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 push`: a fine-tuning run to the Hugging Face Hub, with its model card ([`hf_gpt1.tools.hub`]).

hf-gpt1 push runs/rte me/gpt1-rte [--license apache-2.0] [--private]
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field

from ..tools.hub import push_finetuned
from .command_line import ARGUMENT_FILE_SUFFIXES, parse_recipe_args


@dataclass
class PushArguments:
    """`hf-gpt1 push`'s arguments (the first two may also be given as words: `hf-gpt1 push runs/rte me/gpt1-rte`)."""

    output_dir: str = field(metadata={"help": "The fine-tuning run's output folder."})
    repo_id: str = field(metadata={"help": "namespace/name of the Hub repository (created when absent)."})
    base_model: str | None = field(default=None, metadata={"help": "The pre-trained model, for the card (default: "
                                                           "the run's)."})  # fmt: skip
    license: str | None = field(
        default=None,
        metadata={"help": "The model's licence, a Hub identifier (apache-2.0, mit, ...); default: the base model's."},
    )
    license_name: str | None = field(default=None, metadata={"help": "With --license other: the licence's name."})
    private: bool = field(default=False, metadata={"help": "Create the repository private."})


def main(argv: list[str] | None = None) -> str:
    """`hf-gpt1 push`: [`~hf_gpt1.tools.hub.push_finetuned`] from the command line."""
    argv = list(sys.argv[1:] if argv is None else argv)
    words = 0
    while (
        words < min(2, len(argv))
        and not argv[words].startswith("-")
        and not argv[words].endswith(ARGUMENT_FILE_SUFFIXES)
    ):
        words += 1
    named = [word for flag, value in zip(("--output_dir", "--repo_id"), argv[:words]) for word in (flag, value)]
    (args,) = parse_recipe_args((PushArguments,), [*named, *argv[words:]], prog="hf-gpt1 push")
    # the fields are push_finetuned's arguments; not --private leaves the repository's visibility to the Hub
    url = push_finetuned(**{**dataclasses.asdict(args), "private": args.private or None})
    print(f"Pushed {args.output_dir} to {args.repo_id}: {url}")
    return url


if __name__ == "__main__":  # python -m: the same as the hf-gpt1 command
    from hf_gpt1.commands import module_main

    module_main(__spec__.name)
