"""`python -m hf_gpt1 <command> ...`, also `accelerate launch -m hf_gpt1 <command> ...`: the `hf-gpt1` command."""

from .commands import main

main()
