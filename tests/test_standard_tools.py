# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Standard tools work unchanged on GPT-1: a plain `Trainer` recipe (transformers' own pattern: an accuracy metric,
`compute_metrics`, length grouping), hooks on the input embeddings (NEFTune, activation patching).

Each test uses the tool exactly as its documentation shows it for any transformers model, on a tiny model.
"""

from __future__ import annotations

import datasets
import numpy as np
import pytest
import torch
from transformers import Trainer, TrainingArguments

from hf_gpt1 import GPT1ForSequenceClassification, add_gpt1_special_tokens, prepare_dataset, train_gpt1_tokenizer
from hf_gpt1.data.transforms import segment_lengths
from tests.utils import SENTENCES, run_command, tiny_config_for


@pytest.fixture(scope="module")
def tokenizer():
    tokenizer = train_gpt1_tokenizer(SENTENCES, vocab_size=120)
    add_gpt1_special_tokens(tokenizer)
    return tokenizer


@pytest.fixture
def rte_rows():
    pairs = [(a, b) for a, b in zip(SENTENCES, SENTENCES[1:])][:24]
    return datasets.Dataset.from_dict(
        {
            "sentence1": [a for a, _ in pairs],
            "sentence2": [b for _, b in pairs],
            "label": [i % 2 for i in range(len(pairs))],
        }
    )


def accuracy(prediction) -> dict[str, float]:
    """The metric of transformers' run_glue.py / the course, written as a user writes it for any model."""
    predictions = np.argmax(prediction.predictions, axis=-1)
    return {"accuracy": float((predictions == prediction.label_ids).mean())}


def test_a_plain_trainer_recipe_runs_unchanged(tokenizer, rte_rows, tmp_path):
    model = GPT1ForSequenceClassification(tiny_config_for(tokenizer, num_labels=2))
    train, collator = prepare_dataset(rte_rows, tokenizer, "rte")
    args = TrainingArguments(
        tmp_path / "run",
        per_device_train_batch_size=4,
        num_train_epochs=1,
        remove_unused_columns=False,  # the collator reads the segment columns
        train_sampling_strategy="group_by_length",
        report_to="none",
        use_cpu=True,
    )
    trainer = Trainer(model, args, train_dataset=train, eval_dataset=train, data_collator=collator)
    trainer.compute_metrics = accuracy
    trainer.train()
    assert trainer.label_names == ["labels"]
    prediction = trainer.predict(train)
    # the task labels (not a `(labels, lm_labels)` tuple); transformers groups evaluation batches by length too
    assert prediction.label_ids.shape == (24,) and sorted(prediction.label_ids.tolist()) == sorted(rte_rows["label"])
    metrics = trainer.evaluate()
    assert 0 <= metrics["eval_accuracy"] <= 1 and np.isfinite(metrics["eval_loss"])


def test_the_auxiliary_lm_targets_still_reach_l3(tokenizer, rte_rows):
    model = GPT1ForSequenceClassification(tiny_config_for(tokenizer, num_labels=2, lm_coef=0.5)).eval()
    train, collator = prepare_dataset(rte_rows, tokenizer, "rte")
    batch = collator([train[i] for i in range(4)])
    out = model(**batch)
    assert torch.allclose(out.loss, out.clf_loss + 0.5 * out.lm_loss)
    masked = batch["lm_labels"].clone()
    masked[:, :5] = -100  # other targets give another L1: the collator's lm_labels are used, not a default
    assert not torch.allclose(model(**{**batch, "lm_labels": masked}).lm_loss, out.lm_loss)


def test_prepared_rows_carry_their_length(tokenizer, rte_rows):
    train, _ = prepare_dataset(rte_rows, tokenizer, "rte")
    assert train["length"] == sum(segment_lengths(train, "entailment")).tolist()
    rows = datasets.Dataset.from_dict(
        {"context": ["a b c", "d"], "options": [["e", "f g h"], ["i j", "k"]], "answer": [0, 1]}
    )
    choices, _ = prepare_dataset(
        rows, tokenizer, "multiple_choice", text_columns=["context"], choice_columns=["options"], label_column="answer"
    )
    assert choices["length"] == sum(segment_lengths(choices, "multiple_choice")).tolist()


# ------------------------------------------------------------------------------------------ hooks on the embeddings


def _lm(tokenizer, **overrides):
    from hf_gpt1 import GPT1LMHeadModel

    return GPT1LMHeadModel(tiny_config_for(tokenizer, **overrides))


def _logits(model, ids, seed=0):
    torch.manual_seed(seed)
    return model(ids, skip_logits=False).logits


@pytest.mark.parametrize("original_table", [True, False])
def test_neftune_changes_the_training_logits_and_an_identity_hook_changes_nothing(tokenizer, original_table):
    from transformers.integrations.neftune import activate_neftune, deactivate_neftune

    no_dropout = {"embd_pdrop": 0.0, "attn_pdrop": 0.0, "resid_pdrop": 0.0}
    model = _lm(tokenizer, original_embedding_table=original_table, **no_dropout).train()
    ids = torch.tensor([tokenizer("the dog chased the cat across the garden")["input_ids"]])
    plain = _logits(model, ids)
    embeddings = model.get_input_embeddings()
    handle = embeddings.register_forward_hook(lambda module, args, output: output)
    assert torch.equal(_logits(model, ids), plain)  # bit-identical
    handle.remove()
    handle = activate_neftune(model, 5.0)  # what Trainer does with neftune_noise_alpha=5
    noisy = _logits(model, ids)
    deactivate_neftune(model, handle)
    assert (noisy - plain).abs().max() > 1e-3
    assert torch.equal(_logits(model.eval(), ids), _logits(model, ids))


def test_the_original_table_dropout_drops_the_hooked_rows_with_the_tables_mask(tokenizer):
    model = _lm(tokenizer, original_embedding_table=True, embd_pdrop=0.3).train()
    ids = torch.tensor([tokenizer("the dog chased the cat across the garden")["input_ids"]])
    seen = {}
    model.transformer.h[0].register_forward_pre_hook(lambda module, args: seen.setdefault("h", args[0]))
    model.get_input_embeddings().register_forward_hook(lambda module, args, output: seen.setdefault("rows", output))
    out = model.transformer(ids)
    tokens, positions = out.embedding_tables  # the dropped tables L1's softmax reads
    expected = tokens[ids] + positions[torch.arange(ids.shape[1])][None]
    assert torch.equal(seen["h"], expected)  # the rows fed in are the dropped table's, bit for bit
    assert torch.equal(seen["rows"], model.transformer.tokens_embed.weight[ids])  # the hook saw the module's rows
    assert (tokens == 0).float().mean().item() == pytest.approx(0.3, abs=0.05)


def test_an_activation_patch_on_the_embeddings_reaches_the_output(tokenizer):
    model = _lm(tokenizer).eval()
    ids = torch.tensor([tokenizer("the dog chased the cat")["input_ids"]])
    clean = model(ids).logits

    def patch(module, args, output):
        output = output.clone()
        output[:, 1] = 0.0  # knock out the second token's embedding
        return output

    handle = model.get_input_embeddings().register_forward_hook(patch)
    patched = model(ids).logits
    handle.remove()
    assert torch.equal(patched[:, 0], clean[:, 0]) and not torch.allclose(patched[:, 1:], clean[:, 1:])


# ------------------------------------------------------------------------------------------ the first screen


def test_help_shows_only_real_flags_each_with_its_own_text(capsys):
    shown = run_command(capsys, "glue", "--help")
    assert shown.code == 0, shown.stderr
    text = " ".join(shown.stdout.split())  # argparse wraps lines
    assert "--task TASK Task name from hf_gpt1.data.tasks" in text and "(required)" in text
    assert "--gradient_checkpointing" not in text and "Deprecated" not in text  # transformers' deprecated alias
    assert "--activation_checkpointing" in text
    assert "--no-original-embedding-table The same as --original_embedding_table false." in text


@pytest.mark.parametrize(
    ("task", "names"),
    [("sst2", ["negative", "positive"]), ("cola", ["unacceptable", "acceptable"]), ("rte", None)],
)
def test_a_model_fine_tuned_from_glue_files_names_its_classes(task, names, tokenizer, tmp_path):
    from hf_gpt1 import GPT1LMHeadModel, get_task
    from hf_gpt1.training.arguments import ModelArguments
    from hf_gpt1.training.finetune import build_model

    spec = get_task(task)
    names = names or list(spec.label_names)
    GPT1LMHeadModel(tiny_config_for(tokenizer)).save_pretrained(tmp_path / "lm")
    tokenizer.save_pretrained(tmp_path / "lm")
    model = build_model(spec, ModelArguments(model_name_or_path=str(tmp_path / "lm")), tokenizer)
    assert list(model.config.id2label.values()) == names  # what pipeline("text-classification") answers
    assert spec.label_to_id("1") == 1 and spec.label_to_id(names[1]) == 1  # file values and names both read


def test_a_folder_of_another_run_is_refused_with_the_fix_first_and_briefly(tmp_path):
    from hf_gpt1.training.run_folder import RUN_FILE, check_output_dir

    folder = tmp_path / "run"
    folder.mkdir()
    digests = {f"/data/shard{i}.txt": "f" * 64 for i in range(40)}  # a run of many inputs: 40 digests recorded
    previous = {"recipe": "pretrain", "seed": 1, "model": {}, "data": {}, "inputs": {"--train_files": digests}}
    (folder / RUN_FILE).write_text(__import__("json").dumps(previous))
    run = {"recipe": "glue", "seed": 42, "model": {}, "data": {"task": "rte"}, "inputs": {}}
    with pytest.raises(ValueError) as raised:
        check_output_dir(folder, run, overwrite=False, resume=False)
    message = str(raised.value)
    assert message.index("--overwrite_output_dir") < 200 and len(message) < 700, message
    assert "another run (recipe 'pretrain', seed 1)" in message and "f" * 64 not in message
