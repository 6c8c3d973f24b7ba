# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""No training step reads a device value on the host: every head, with no mask, an all-ones mask and right padding
(left padding too), eager and compiled, forward and backward.

An accelerator would wait for every queued kernel at such a read. The step runs on meta tensors, which take the
non-CPU code paths without computing, under a `TorchDispatchMode` that fails on each op that hands a tensor's value
to Python; the compiled step (aot_eager: its graph runs op by op through the dispatcher) runs on the CPU, whose
compiled path is the one every device takes.
"""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from hf_gpt1 import GPT1ForMultipleChoice, GPT1ForSequenceClassification, GPT1LMHeadModel
from tests.utils import DELIM, EXTRACT, PAD, START, tiny_config

HOST_READS = {"_local_scalar_dense", "is_nonzero", "item", "nonzero", "equal"}


class NoHostReads(TorchDispatchMode):
    """Raises on the first op that reads a tensor's value on the host."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.__name__.split(".")[0]
        if name in HOST_READS:
            raise AssertionError(f"host read: aten.{func.__name__}")
        return func(*args, **(kwargs or {}))


def task_batch(mask: str, device: str) -> dict[str, torch.Tensor]:
    """Three `<s> a <$> b <e>` rows of lengths 12, 9 and 7, padded to 12 on the side `mask` names."""
    rows = []
    for length in (12, 9, 7):
        row = [START, *range(5, 5 + length - 4), DELIM, 7, EXTRACT]
        rows.append(row[: length - 1] + [EXTRACT] if len(row) >= length else row)
    ids = torch.full((3, 12), PAD)
    attention = torch.zeros(3, 12, dtype=torch.long)
    for i, row in enumerate(rows):
        where = slice(12 - len(row), 12) if mask == "left" else slice(0, len(row))
        ids[i, where], attention[i, where] = torch.tensor(row), 1
    if mask == "none":
        ids, attention = ids[:, :7], None  # equal lengths: every row cut to 7 tokens, extract last
        ids[:, -1] = EXTRACT
    elif mask == "ones":
        ids, attention = ids[:, :7], torch.ones(3, 7, dtype=torch.long)
        ids[:, -1] = EXTRACT
    batch = {"input_ids": ids, "attention_mask": attention}
    return {k: v.to(device) for k, v in batch.items() if v is not None}


def make(head: str, device: str):
    config = tiny_config(num_labels=2, original_embedding_table=True)
    model_class = {"lm": GPT1LMHeadModel, "clf": GPT1ForSequenceClassification, "mc": GPT1ForMultipleChoice}[head]
    with torch.device(device):
        return model_class(config).train()


def labelled(head: str, batch: dict, device: str) -> dict:
    if head == "lm":
        labels = batch["input_ids"].clone()
        if "attention_mask" in batch:
            labels = labels.masked_fill(batch["attention_mask"] == 0, -100)
        return {**batch, "labels": labels}
    if head == "mc":
        batch = {k: torch.stack([v, v], 1)[:2] for k, v in batch.items()}  # (2 examples, 2 choices, T)
        return {**batch, "labels": torch.tensor([0, 1], device=device)}
    return {**batch, "labels": torch.tensor([0, 1, 1], device=device)}


@pytest.mark.parametrize("mask", ["none", "ones", "right", "left"])
@pytest.mark.parametrize("head", ["lm", "clf", "mc"])
def test_an_eager_training_step_reads_nothing_on_the_host(head, mask):
    model = make(head, "meta")
    batch = labelled(head, task_batch(mask, "meta"), "meta")
    with NoHostReads():
        model(**batch).loss.backward()


def compiled_step_ops(model, batch) -> set[str]:
    """The aten ops (`name.overload`) of the forward and backward graphs that `torch.compile(fullgraph=True)` makes
    of a training step (AOTAutograd's graphs, which the backend would compile)."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    ops = set()

    def record(graph, example_inputs):
        ops.update(
            node.target.__name__ for node in graph.graph.nodes if isinstance(node.target, torch._ops.OpOverload)
        )
        return make_boxed_func(graph.forward)

    torch._dynamo.reset()
    backend = aot_autograd(fw_compiler=record, bw_compiler=record)
    torch.compile(model, backend=backend, fullgraph=True)(**batch).loss.backward()
    return ops


@pytest.mark.parametrize("mask", ["none", "ones", "right", "left"])
@pytest.mark.parametrize("head", ["lm", "clf", "mc"])
def test_a_compiled_training_step_reads_nothing_on_the_host(head, mask):
    """The graphs hold no op that reads a value, so the compiled step runs without a sync (a data-dependent Python
    branch would have broken the graph, which `fullgraph=True` refuses)."""
    model = make(head, "cpu")
    ops = compiled_step_ops(model, labelled(head, task_batch(mask, "cpu"), "cpu"))
    assert "mm.default" in ops  # the graphs were recorded
    assert not {op for op in ops if op.split(".")[0] in HOST_READS}, ops


@pytest.mark.parametrize("mask", ["ones", "right", "left"])
def test_without_a_mask_each_real_token_gets_the_masked_result(mask):
    """The LM head's unmasked path (padding moved after the real tokens, which keep their positions) gives every real
    token the logits of its row computed alone at the same positions: what the masked computation means."""
    model = GPT1LMHeadModel(tiny_config()).eval()
    batch = task_batch(mask, "cpu")
    ids, attention = batch["input_ids"], batch["attention_mask"].bool()
    got = model(**batch, use_cache=False).logits  # no cache: the unmasked path
    for row in range(ids.shape[0]):
        positions = attention[row].nonzero().squeeze(-1)
        alone = model(ids[row, positions][None], position_ids=positions[None], use_cache=False).logits[0]
        torch.testing.assert_close(got[row, positions], alone, atol=1e-5, rtol=1e-5)
    cached = model(**batch, use_cache=True)  # a cache is filled: transformers' masked path, the same logits
    torch.testing.assert_close(cached.logits[attention], got[attention], atol=1e-5, rtol=1e-5)


class CountedHostReads(TorchDispatchMode):
    """Counts the ops that read a tensor's value on the host while `counting` is on."""

    def __init__(self):
        super().__init__()
        self.counting, self.reads = False, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.counting and func.__name__.split(".")[0] in HOST_READS:
            self.reads.append(func.__name__)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("nan_filter", [False, True])
def test_the_trainers_training_step_reads_nothing_on_the_host(tmp_path, nan_filter):
    """Between two optimizer steps, GPT1Trainer (forward, backward, clipping, the master-weight AdamW step, the
    schedule, the speed meter, the callbacks) hands no value to Python: the host can queue the next step, or replay
    it as a CUDA graph, while the GPU runs this one. Reads wait for a log line. transformers' own
    `--logging_nan_inf_filter` (off in our recipes: a non-finite loss stops the run) reads the loss at every step."""
    import datasets
    from transformers import TrainerCallback

    from hf_gpt1.training.arguments import GPT1TrainingArguments
    from hf_gpt1.training.trainer import GPT1Trainer
    from tests.test_compile import bucket_batch

    mode = CountedHostReads()

    class CountInsideSteps(TrainerCallback):  # the first step, which builds the optimizer's state, aside
        def on_step_begin(self, args, state, control, **kwargs):
            mode.counting = state.global_step >= 1

        def on_step_end(self, args, state, control, **kwargs):
            mode.counting = False

    rows = [{k: v[0].tolist() for k, v in bucket_batch("clf", 16).items()} for _ in range(8)]
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2)).to(torch.bfloat16)  # fp32 masters
    args = GPT1TrainingArguments(
        str(tmp_path), max_steps=5, per_device_train_batch_size=2, logging_steps=1000, report_to="none",
        save_strategy="no", eval_strategy="no", logging_nan_inf_filter=nan_filter, disable_tqdm=True,
    )  # fmt: skip
    trainer = GPT1Trainer(model=model, args=args, train_dataset=datasets.Dataset.from_list(rows))
    trainer.add_callback(CountInsideSteps())
    with mode:
        trainer.train()
    assert trainer.state.global_step == 5
    assert bool(mode.reads) is nan_filter, mode.reads
