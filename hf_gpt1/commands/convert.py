# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 convert`: the original OpenAI GPT-1 release to an hf_gpt1 checkpoint ([`hf_gpt1.tools.convert`]).

    hf-gpt1 convert --checkpoint_dir finetune-transformer-lm/model --output_dir gpt1-original \
        [--encoder_path model/encoder_bpe_40000.json --bpe_path model/vocab_40000.bpe]
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..data.atomic import atomic_save
from ..tools.convert import convert_openai_checkpoint
from .command_line import parse_recipe_args


@dataclass
class ConvertArguments:
    """`hf-gpt1 convert`'s arguments."""

    checkpoint_dir: str = field(metadata={"help": "Folder with params_shapes.json and params_*.npy."})
    output_dir: str = field(metadata={"help": "Where to save the hf_gpt1 checkpoint."})
    n_positions: int | None = field(default=None, metadata={"help": "Keep only this many position embeddings."})
    no_special_tokens: bool = field(default=False, metadata={"help": "Do not append the GPT-1 special tokens."})
    encoder_path: str | None = field(default=None, metadata={"help": "encoder_bpe_40000.json: also save the "
                                                             "original tokenizer (with --bpe_path)."})  # fmt: skip
    bpe_path: str | None = field(default=None, metadata={"help": "vocab_40000.bpe: also save the original tokenizer."})

    def __post_init__(self):
        if (self.encoder_path is None) != (self.bpe_path is None):
            raise ValueError("--encoder_path and --bpe_path go together: give both to save the original tokenizer.")


def main(argv: list[str] | None = None) -> None:
    """`hf-gpt1 convert`: [`~hf_gpt1.tools.convert.convert_openai_checkpoint`], saved whole or not at all."""
    (args,) = parse_recipe_args((ConvertArguments,), argv, prog="hf-gpt1 convert")
    model = convert_openai_checkpoint(args.checkpoint_dir, args.n_positions, not args.no_special_tokens)
    with atomic_save(args.output_dir) as staging:
        model.save_pretrained(staging)
        if args.encoder_path:
            from ..tokenization_gpt1 import original_tokenizer

            original_tokenizer(args.encoder_path, args.bpe_path).save_pretrained(staging)
    print(f"Saved {model.num_parameters():,}-parameter GPT-1 to {args.output_dir}")


if __name__ == "__main__":  # python -m: the same as the hf-gpt1 command
    from hf_gpt1.commands import module_main

    module_main(__spec__.name)
