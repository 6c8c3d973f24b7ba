# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Inference pipelines (hf_gpt1.pipelines + the stock text-classification / text-generation ones).

Every fine-tuned model here is built the way the recipe builds it (`hf_gpt1.training.finetune.build_model` on a saved
tiny pre-trained checkpoint), and "the model's own eval outputs" are what the recipe's evaluation computes: the task's
`prepare_dataset` + collator batch through the model in eval mode.
"""

import threading

import datasets
import pytest
import torch
from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast, TextIteratorStreamer, pipeline

from hf_gpt1 import GPT1LMHeadModel, add_gpt1_special_tokens, get_task, prepare_dataset
from hf_gpt1.pipelines import GPT1MultipleChoicePipeline
from hf_gpt1.tokenization_gpt1 import train_gpt1_tokenizer
from hf_gpt1.training.arguments import ModelArguments
from hf_gpt1.training.finetune import build_model
from tests.utils import tiny_config_for

SENTENCES = [
    "the cat sat on the mat .",
    "a dog runs in the park and barks at the birds .",
    "it is a charming and often affecting journey .",
    "unflinchingly bleak and desperate",
    "the film is a great success , says the critic .",
    "nobody liked the ending of the story .",
    "she walked to the station because it was raining .",
    "the trophy does not fit in the suitcase because it is too big .",
]
PAIRS = [(SENTENCES[i], SENTENCES[(3 * i + 1) % len(SENTENCES)]) for i in range(len(SENTENCES))]


@pytest.fixture(scope="module")
def pretrained_dir(tmp_path_factory):
    """A tiny pre-trained GPT-1 checkpoint (LM head + tokenizer), as recipes/pretrain.py leaves it."""
    tokenizer = train_gpt1_tokenizer(SENTENCES * 20, vocab_size=120)
    model = GPT1LMHeadModel(tiny_config_for(tokenizer, n_positions=48))
    add_gpt1_special_tokens(tokenizer, model)
    folder = tmp_path_factory.mktemp("pretrained")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def finetuned(pretrained_dir, tmp_path_factory, task: str):
    """A model + tokenizer for `task` set up exactly as the fine-tuning recipe does, saved to a folder."""
    from hf_gpt1 import load_gpt1_tokenizer

    tokenizer = load_gpt1_tokenizer(pretrained_dir)
    model = build_model(get_task(task), ModelArguments(model_name_or_path=str(pretrained_dir)), tokenizer)
    folder = tmp_path_factory.mktemp(task)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder, model.eval(), tokenizer


def eval_logits(model, tokenizer, task: str, rows: dict) -> torch.Tensor:
    """The recipe's evaluation path: prepare_dataset → the task's collator → model in eval mode."""
    dataset, collator = prepare_dataset(datasets.Dataset.from_dict(rows), tokenizer, task, max_length=48)
    batch = collator([dataset[i] for i in range(len(dataset))])
    batch.pop("labels", None)
    batch.pop("lm_labels", None)
    with torch.no_grad():
        return model(**batch).logits


@pytest.mark.parametrize(
    "task, rows, inputs",
    [
        ("sst2", {"sentence": SENTENCES}, SENTENCES),
        (
            "rte",
            {"sentence1": [a for a, _ in PAIRS], "sentence2": [b for _, b in PAIRS]},
            [{"text": a, "text_pair": b} for a, b in PAIRS],
        ),
        (
            "mrpc",
            {"sentence1": [a for a, _ in PAIRS], "sentence2": [b for _, b in PAIRS]},
            [{"text": a, "text_pair": b} for a, b in PAIRS],
        ),
        (
            "stsb",
            {"sentence1": [a for a, _ in PAIRS], "sentence2": [b for _, b in PAIRS]},
            [{"text": a, "text_pair": b} for a, b in PAIRS],
        ),
    ],
    ids=["single", "pair", "similarity", "regression"],
)
def test_text_classification_pipeline_equals_recipe_eval(pretrained_dir, tmp_path_factory, task, rows, inputs):
    folder, model, tokenizer = finetuned(pretrained_dir, tmp_path_factory, task)
    expected = eval_logits(model, tokenizer, task, rows)
    classifier = pipeline("text-classification", model=str(folder))
    spec = get_task(task)
    for batch_size in (1, 3):  # batched: right padding, the classifier still reads the extract token
        outputs = classifier(inputs, top_k=None, function_to_apply="none", batch_size=batch_size)
        for scores, logits in zip(outputs, expected):
            got = {d["label"]: d["score"] for d in scores}
            want = {model.config.id2label[i]: float(v) for i, v in enumerate(logits)}
            assert got.keys() == want.keys()
            for label in want:
                assert got[label] == pytest.approx(want[label], abs=1e-5)
    # default outputs: softmax over labels, or the raw score for regression (no sigmoid)
    default = classifier(inputs[:1])[0]
    if spec.is_regression:
        assert default["label"] == "similarity"  # named for what it scores, not transformers' LABEL_0
        assert default["score"] == pytest.approx(float(expected[0, 0]), abs=1e-5)
    else:
        probs = expected[0].softmax(-1)
        assert default["label"] == model.config.id2label[int(probs.argmax())]
        assert default["score"] == pytest.approx(float(probs.max()), abs=1e-5)


def test_truncation_matches_the_collator(pretrained_dir, tmp_path_factory):
    """The pipeline truncates a long pair by default, exactly as the recipe's collator does."""
    folder, model, tokenizer = finetuned(pretrained_dir, tmp_path_factory, "rte")
    long_a, long_b = " ".join(SENTENCES[:5]), " ".join(SENTENCES[5:])
    dataset, collator = prepare_dataset(
        datasets.Dataset.from_dict({"sentence1": [long_a], "sentence2": [long_b]}), tokenizer, "rte", max_length=20
    )
    expected = collator([dataset[0]])["input_ids"][0].tolist()
    assert tokenizer(long_a, long_b, truncation=True, max_length=20)["input_ids"] == expected
    tokenizer.model_max_length = 20  # as the recipe saves it: the length the model was fine-tuned with
    tokenizer.save_pretrained(folder)
    assert tokenizer(long_a, long_b)["input_ids"] == expected  # truncation is the default where the template applies
    classifier = pipeline("text-classification", model=str(folder))
    got = classifier({"text": long_a, "text_pair": long_b}, top_k=None)  # no truncation=True needed
    with torch.no_grad():
        probs = model(torch.tensor([expected])).logits.softmax(-1)[0]
    assert {d["label"]: d["score"] for d in got} == pytest.approx(
        {model.config.id2label[i]: float(p) for i, p in enumerate(probs)}, abs=1e-5
    )


def test_multiple_choice_pipeline_equals_recipe_eval(pretrained_dir, tmp_path_factory):
    folder, model, tokenizer = finetuned(pretrained_dir, tmp_path_factory, "swag")
    rows = {
        "sent1": SENTENCES[:3],
        "sent2": ["then", "so", "and"],
        **{f"ending{k}": [SENTENCES[(i + k + 3) % len(SENTENCES)] for i in range(3)] for k in range(4)},
        "label": [0, 1, 2],
    }
    expected = eval_logits(model, tokenizer, "swag", rows)  # (3, 4)
    chooser = pipeline("multiple-choice", model=str(folder))
    assert isinstance(chooser, GPT1MultipleChoicePipeline)
    for i in range(3):
        # SWAG's answers start with sent2 (the task's choice_prefix_column), as the preprocessor builds them
        answers = [f"{rows['sent2'][i]} {rows[f'ending{k}'][i]}" for k in range(4)]
        raw = chooser(rows["sent1"][i], answers=answers, function_to_apply="none")
        assert [d["answer"] for d in raw] == answers
        assert [d["score"] for d in raw] == pytest.approx(expected[i].tolist(), abs=1e-5)
        probs = chooser({"context": rows["sent1"][i], "answers": answers})
        assert [d["score"] for d in probs] == pytest.approx(expected[i].softmax(-1).tolist(), abs=1e-5)
    many = chooser([{"context": rows["sent1"][0], "answers": ["yes", "no"]}] * 2)
    assert len(many) == 2 and len(many[0]) == 2


def lm_generator(pretrained_dir):
    # Prompts are raw text, as in pre-training: without add_special_tokens=False the GPT-1 tokenizer's template would
    # wrap every prompt in `_start_ ... _classify_`.
    return pipeline("text-generation", model=str(pretrained_dir), add_special_tokens=False)


def test_batched_generation_equals_one_by_one(pretrained_dir):
    generator = lm_generator(pretrained_dir)
    pad = generator.tokenizer.pad_token_id
    prompts = ["the cat", "a dog runs in the park and", "she walked to the station because it"]
    kwargs = {"max_new_tokens": 6, "do_sample": False, "return_tensors": True}
    single = [list(generator(prompt, **kwargs)[0]["generated_token_ids"]) for prompt in prompts]
    batched = generator(prompts, batch_size=3, **kwargs)
    assert generator.tokenizer.padding_side == "left"
    # batched sequences come back with their left padding; without it they are the one-by-one ones
    assert [[t for t in out[0]["generated_token_ids"] if t != pad] for out in batched] == single
    assert any(out[0]["generated_token_ids"][0] == pad for out in batched)  # padding (and positions) were exercised
    # the same tokens as the model's own cached generate() on each unpadded prompt
    for prompt, ids in zip(prompts, single):
        prompt_ids = generator.tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"]
        assert ids[: prompt_ids.shape[1]] == prompt_ids[0].tolist()
        reference = generator.model.generate(prompt_ids, max_new_tokens=6, do_sample=False, use_cache=True)
        assert ids == reference[0].tolist()


def test_streaming_generation(pretrained_dir):
    generator = lm_generator(pretrained_dir)
    expected = generator("the film is", max_new_tokens=8, do_sample=False, return_full_text=False)[0]
    streamer = TextIteratorStreamer(generator.tokenizer, skip_prompt=True)
    thread = threading.Thread(
        target=generator, args=("the film is",), kwargs={"max_new_tokens": 8, "do_sample": False, "streamer": streamer}
    )
    thread.start()
    pieces = list(streamer)
    thread.join()
    assert len(pieces) > 1  # text arrives piece by piece
    assert "".join(pieces).strip() == expected["generated_text"].strip()


# ----------------------------------------------------------------------------------------------- bad input


def test_tokenizer_without_special_tokens_is_a_clear_error(pretrained_dir, tmp_path_factory):
    plain = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")))
    # the multiple-choice pipeline refuses such a tokenizer up front ...
    _, model, _ = finetuned(pretrained_dir, tmp_path_factory, "swag")
    with pytest.raises(ValueError, match="no GPT-1 special token.*add_gpt1_special_tokens"):
        pipeline("multiple-choice", model=model, tokenizer=plain)
    # ... and a text classifier fed its inputs (no extract token) says what to do
    folder, _, _ = finetuned(pretrained_dir, tmp_path_factory, "sst2")
    classifier = pipeline("text-classification", model=str(folder), tokenizer=plain)
    with pytest.raises(ValueError, match="no extract token.*add_gpt1_special_tokens"):
        classifier("the cat sat")


def test_empty_or_malformed_answers_are_clear_errors(pretrained_dir, tmp_path_factory):
    folder, _, _ = finetuned(pretrained_dir, tmp_path_factory, "swag")
    chooser = pipeline("multiple-choice", model=str(folder))
    with pytest.raises(ValueError, match="list of answers is empty"):
        chooser("the cat sat", answers=[])
    with pytest.raises(ValueError, match="Pass the candidate answers"):
        chooser("the cat sat")
    with pytest.raises(ValueError, match="answers must be a list of strings"):
        chooser("the cat sat", answers="yes")
    with pytest.raises(ValueError, match="'context': str"):
        chooser({"question": "the cat sat", "answers": ["a"]})


def test_generated_text_continues_the_prompt_as_text(pretrained_dir):
    """The continuation starts with a space where a word ended, and reads as text (no `'s` split off)."""
    generator = lm_generator(pretrained_dir)
    out = generator("the film is", max_new_tokens=6, do_sample=False)[0]["generated_text"]
    new = generator("the film is", max_new_tokens=6, do_sample=False, return_full_text=False)[0]["generated_text"]
    assert out == "the film is" + new
    assert new.startswith(" ") and not new.startswith("  ")
    assert "the film isthe" not in out


def test_every_task_pipeline_truncates_as_the_recipe(pretrained_dir, tmp_path_factory):
    """A pair far beyond n_positions (48) is classified, not refused, by every pair-format model."""
    long = " ".join(SENTENCES * 6)
    for task in ("rte", "mrpc", "sst2"):
        folder, _, _ = finetuned(pretrained_dir, tmp_path_factory, task)
        classifier = pipeline("text-classification", model=str(folder))
        inputs = long if task == "sst2" else {"text": long, "text_pair": long}
        assert classifier([inputs])[0]["label"] in get_task(task).id2label.values()  # class names (MRPC: equivalent)
