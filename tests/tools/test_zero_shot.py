# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The paper's zero-shot heuristics (hf_gpt1.tools.zero_shot), each checked on a tiny random LM against a hand
computation that runs the model on one unpadded sequence at a time."""

import datasets
import numpy as np
import pytest
import torch
from torch.nn import functional as F

from hf_gpt1 import GPT1LMHeadModel, add_gpt1_special_tokens
from hf_gpt1.tokenization_gpt1 import train_gpt1_tokenizer
from hf_gpt1.tools.zero_shot import (
    cola_scores,
    continuation_logprobs,
    evaluate_zero_shot,
    fit_threshold,
    race_scores,
    sst2_scores,
    wnli_predictions,
)
from tests.utils import REPO_ROOT, shared_data, tiny_config_for

CORPUS = [
    "the cat sat on the mat .",
    "it is a very positive and very negative film .",
    "the trophy does not fit in the suitcase because it is too big .",
    "jane knocked on susan 's door but she did not answer .",
    "the man could not lift his son because he was so heavy .",
    "the son was so heavy . susan did not answer . the trophy is too big .",
]


@pytest.fixture(scope="module")
def lm():
    tokenizer = train_gpt1_tokenizer(CORPUS * 20, vocab_size=150)
    model = GPT1LMHeadModel(tiny_config_for(tokenizer, n_positions=40))
    add_gpt1_special_tokens(tokenizer, model)
    return model.eval(), tokenizer


def ids(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def hand_logprobs(model, sequence: list[int]) -> torch.Tensor:
    """log p(token t | tokens < t) for t = 1..n-1, from one unpadded forward pass."""
    with torch.no_grad():
        logits = model(torch.tensor([sequence])).logits[0]
    return F.log_softmax(logits, -1)[torch.arange(len(sequence) - 1), torch.tensor(sequence[1:])]


def hand_average(model, context: list[int], continuation: list[int]) -> float:
    return float(hand_logprobs(model, context + continuation)[len(context) - 1 :].mean())


def test_continuation_logprobs_batched_equals_one_by_one(lm):
    model, tok = lm
    contexts = [ids(tok, "the cat"), ids(tok, "the trophy does not fit in the suitcase because")]
    continuations = [ids(tok, "sat on the mat ."), ids(tok, "it")]
    batched = continuation_logprobs(model, contexts, continuations, batch_size=2)
    for context, continuation, got in zip(contexts, continuations, batched):
        expected = hand_logprobs(model, context + continuation)[len(context) - 1 :]
        assert torch.allclose(got, expected, atol=1e-5)
    # a context too long for n_positions keeps its newest tokens
    long_context = ids(tok, " ".join(CORPUS))
    assert len(long_context) > 40
    (got,) = continuation_logprobs(model, [long_context], [continuations[1]])
    expected = hand_logprobs(model, long_context[-(40 - len(continuations[1])) :] + continuations[1])[-1:]
    assert torch.allclose(got, expected, atol=1e-5)


def test_cola_average_log_probability_and_threshold(lm):
    model, tok = lm
    sentences = ["the cat sat on the mat .", "mat the on sat cat the .", "the son was so heavy ."]
    scores = cola_scores(model, tok, sentences)
    for sentence, score in zip(sentences, scores):
        sequence = ids(tok, sentence)
        assert score == pytest.approx(float(hand_logprobs(model, sequence).mean()), abs=1e-5)
    # the fitted threshold separates the labels whenever the scores allow it
    assert fit_threshold(np.array([-3.0, -1.0, -2.0, -0.5]), np.array([0, 1, 0, 1])) == pytest.approx(-1.5)
    data = datasets.Dataset.from_dict({"sentence": sentences, "label": [1, 0, 1]})
    result = evaluate_zero_shot(model, tok, "cola", data, threshold=float(np.median(scores)))
    expected_predictions = (scores > np.median(scores)).astype(int)
    assert result["threshold"] == pytest.approx(float(np.median(scores)))
    from sklearn.metrics import matthews_corrcoef

    assert result["matthews_correlation"] == pytest.approx(matthews_corrcoef([1, 0, 1], expected_predictions))


def test_sst2_compares_positive_and_negative_after_very(lm):
    model, tok = lm
    sentences = ["it is a charming film", "the film is a bleak"]
    scores = sst2_scores(model, tok, sentences)
    for sentence, score in zip(sentences, scores):
        context = ids(tok, f"{sentence} very")
        with torch.no_grad():
            logprobs = F.log_softmax(model(torch.tensor([context])).logits[0, -1], -1)
        (positive,), (negative,) = ids(tok, "positive"), ids(tok, "negative")  # one token each in this vocab
        assert score == pytest.approx(float(logprobs[positive] - logprobs[negative]), abs=1e-5)
    data = datasets.Dataset.from_dict({"sentence": sentences, "label": [1, 0]})
    result = evaluate_zero_shot(model, tok, "sst-2", data)
    assert result["accuracy"] == pytest.approx(np.mean((scores > 0).astype(int) == [1, 0]))


def test_race_picks_the_answer_with_highest_average_log_probability(lm):
    model, tok = lm
    article, question = "the trophy does not fit in the suitcase because it is too big .", "what is too big ?"
    options = ["the trophy", "the suitcase", "the cat sat on the mat", "jane"]
    (scores,) = race_scores(model, tok, [f"{article} {question}"], [options])
    context = ids(tok, f"{article} {question}")
    expected = [hand_average(model, context, ids(tok, option)) for option in options]
    assert scores.tolist() == pytest.approx(expected, abs=1e-5)
    data = datasets.Dataset.from_dict(
        {
            "article": [article],
            "question": [question],
            "options": [options],
            "answer": ["ABCD"[int(np.argmax(expected))]],
        }
    )
    assert evaluate_zero_shot(model, tok, "race", data)["accuracy"] == 1.0


def test_wnli_substitutes_candidates_and_scores_the_rest(lm):
    model, tok = lm
    premise = "the trophy does not fit in the suitcase because it is too big ."
    hypotheses = ["the trophy is too big .", "the suitcase is too big ."]  # competing candidates of one pronoun
    single_premise = "jane knocked on susan 's door but she did not answer ."
    rows = {
        "sentence1": [premise, premise, single_premise, "the cat sat on the mat ."],
        "sentence2": [*hypotheses, "susan did not answer .", "a dog barks"],  # the last one has no substitution
    }
    predictions, unresolved = wnli_predictions(model, tok, rows["sentence1"], rows["sentence2"])
    before = ids(tok, "the trophy does not fit in the suitcase because")
    rest = ids(tok, "is too big .")
    trophy, suitcase = (hand_average(model, before + ids(tok, c), rest) for c in ("the trophy", "the suitcase"))
    assert predictions[:2].tolist() == ([1, 0] if trophy >= suitcase else [0, 1])
    # a row without a competitor is compared with the pronoun itself
    single_before, single_rest = ids(tok, "jane knocked on susan 's door but"), ids(tok, "did not answer .")
    susan = hand_average(model, single_before + ids(tok, "susan"), single_rest)
    she = hand_average(model, single_before + ids(tok, "she"), single_rest)
    assert predictions[2] == int(susan >= she)
    assert predictions[3] == 0 and unresolved == 1
    labels = [1, 0, 1, 0]
    result = evaluate_zero_shot(model, tok, "wnli", datasets.Dataset.from_dict({**rows, "label": labels}))
    assert result["accuracy"] == pytest.approx(np.mean(predictions == labels)) and result["unresolved"] == 1


def test_bad_input_is_a_clear_error(lm):
    model, tok = lm
    data = datasets.Dataset.from_dict({"sentence1": ["a"], "sentence2": ["b"], "label": [0]})
    with pytest.raises(ValueError, match="No zero-shot heuristic for 'rte'"):
        evaluate_zero_shot(model, tok, "rte", data)
    with pytest.raises(ValueError, match="no 'label' column"):
        evaluate_zero_shot(model, tok, "sst2", datasets.Dataset.from_dict({"sentence": ["a film"]}))


@pytest.mark.slow  # the full tier (scripts/test.sh --all): the recipe on the real GLUE dev files
@pytest.mark.parametrize("task", ["sst2", "cola", "wnli"])
def test_recipe_on_real_glue_dev(lm, tmp_path, task, capsys, monkeypatch):
    """`python recipes/zero_shot.py ...` run as Python runs a script (`runpy`, in this process: the recipe's process
    adds only a fresh interpreter's imports, and the console entry points' processes are test_commands.py's)."""
    from tests.test_recipes import run_script

    glue = shared_data("glue")
    model, tok = lm
    model.save_pretrained(tmp_path / "lm")
    tok.save_pretrained(tmp_path / "lm")
    out = tmp_path / "metrics.json"
    command = ["--model_name_or_path", str(tmp_path / "lm")]
    command += ["--task", task, "--data_dir", str(glue), "--max_eval_samples", "64", "--output_file", str(out)]
    monkeypatch.chdir(REPO_ROOT)
    result = run_script(capsys, monkeypatch, "recipes/zero_shot.py", *command)
    assert result.code == 0, result.stderr[-2000:]
    import json

    metrics = json.loads(out.read_text())
    assert metrics["task"] == task and metrics["num_examples"] == 64
    main = "matthews_correlation" if task == "cola" else "accuracy"
    assert main in metrics and f"baseline_{main}" in metrics  # chance level beside the score
    (line,) = [line for line in result.stdout.splitlines() if line.startswith(f"zero-shot {task} (64 rows): ")]
    assert f"; majority-class baseline: {main} {metrics[f'baseline_{main}']:.4f}" in line


@pytest.mark.parametrize(
    "flag, fragment", [("--batch_size", "--batch_size 0 must be a positive integer"), ("--max_eval_samples", ">= 1")]
)
def test_recipe_refuses_bad_sizes_in_one_line(flag, fragment, tmp_path, capsys, monkeypatch):
    from tests.test_recipes import run_script

    monkeypatch.chdir(REPO_ROOT)
    command = ["--model_name_or_path", str(tmp_path), "--task", "sst2", flag, "0"]
    result = run_script(capsys, monkeypatch, "recipes/zero_shot.py", *command)
    assert result.code == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and fragment in result.stderr
