# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Publishing fine-tuned models (hf_gpt1.tools.hub): push → pull → pipeline, in a process without hf_gpt1.

The Hub is unreachable here, so the round trip runs against `tests/hub_standin.py`, a small in-memory HTTP server on
127.0.0.1 that STANDS IN FOR THE HUB: it implements only the endpoints huggingface_hub 2.4 calls for create_repo,
upload_folder and downloads. Passing here shows the files and metadata are right and that the client finds what it
needs; it is not a test of huggingface.co itself.
"""

from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
from pathlib import Path

import huggingface_hub.constants
import pytest
from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast, pipeline

from hf_gpt1 import GPT1LMHeadModel, add_gpt1_special_tokens, get_task, load_gpt1_tokenizer
from hf_gpt1.modeling_gpt1 import AUTO_MAP
from hf_gpt1.tokenization_gpt1 import train_gpt1_tokenizer
from hf_gpt1.tools.hub import card_facts, model_card, push_finetuned
from hf_gpt1.training.arguments import ModelArguments
from hf_gpt1.training.finetune import build_model
from hf_gpt1.training.run_folder import RUN_FILE
from tests.tools.hub_standin import HubStandIn
from tests.utils import tiny_config_for

SENTENCES = ["the cat sat on the mat .", "a dog runs in the park .", "she did not answer the door ."]
PAIR = {"text": "the cat sat on the mat .", "text_pair": "a dog runs in the park ."}
MC = {"context": "she did not answer the door .", "answers": ["the cat sat .", "a dog runs in the park ."]}
# Requests the client makes that a test of these files does not need answered: the agent-harness registry (client
# telemetry) answers 404 here and huggingface_hub carries on.
IGNORED_REQUESTS = ("GET /api/agent-harnesses",)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two recipe-like output folders: STS-B (similarity + regression, with run and results files) and SWAG."""
    root = tmp_path_factory.mktemp("runs")
    tokenizer = train_gpt1_tokenizer(SENTENCES * 20, vocab_size=80)
    lm = GPT1LMHeadModel(tiny_config_for(tokenizer, n_layer=1))
    add_gpt1_special_tokens(tokenizer, lm)
    lm.save_pretrained(root / "pretrained")
    tokenizer.save_pretrained(root / "pretrained")
    for task in ("stsb", "swag"):
        tokenizer = load_gpt1_tokenizer(root / "pretrained")
        model = build_model(get_task(task), ModelArguments(model_name_or_path=str(root / "pretrained")), tokenizer)
        model.save_pretrained(root / task)
        tokenizer.save_pretrained(root / task)
    # what the recipe writes beside the model (hf_gpt1.training.finetune.run_finetuning)
    run = {"recipe": "glue", "model": {"model_name_or_path": "me/gpt1-base", "lm_coef": 0.5}, "seed": 42}
    run["data"] = {"task": "stsb", "data_dir": "../shared/data/glue", "max_train_samples": 200}
    (root / "stsb" / RUN_FILE).write_text(json.dumps(run))
    results = {"task": "stsb", "train": {"train_loss": 1.0}}
    results["validation"] = {
        "eval_validation_pearson": 0.25,
        "eval_validation_baseline_pearson": 0.0,
        "eval_validation_prediction_std": 0.4,
        "eval_validation_loss": 2.0,
        "eval_validation_runtime": 1.0,
    }
    results["hyperparameters"] = {"learning_rate": 6.25e-05, "num_train_epochs": 3.0, "global_batch_size": 32}
    results["hyperparameters"] |= {"seed": 42, "lr_scheduler_type": "linear", "warmup_steps": 0.002}
    (root / "stsb" / "all_results.json").write_text(json.dumps(results))
    return root


def test_model_card_names_base_model_task_lambda_data_and_metrics(runs):
    card = model_card(runs / "stsb", "me/gpt1-stsb")
    front, body = card.split("---\n")[1], card.split("---\n", 2)[2]
    assert "base_model: me/gpt1-base" in front and "pipeline_tag: text-classification" in front
    assert "library_name: transformers" in front and "- pearson" in front
    assert "**Task:** stsb (similarity" in body and "λ (`lm_coef`) = 0.5" in body
    assert "official GLUE TSV files (`glue/`); max_train_samples = 200" in body
    assert "| validation | 0.2500 |" in body and "loss" not in body.split("## Results")[1].split("## How")[0]
    assert 'pipeline("text-classification", model="me/gpt1-stsb", trust_remote_code=True)' in body
    assert "Regression" in body and "Similarity" in body
    assert "**Requires:** `transformers>=5.23.0`" in body
    # what the Hub reads: the licence of the base (openai-gpt's is MIT when it is the base), the model-index
    assert "license: mit" not in front  # me/gpt1-base's licence is not known here
    assert "model-index:" in front and "type: pearson" in front and "value: 0.25" in front
    assert "| mean-prediction baseline | 0.0000 |" in body and "prediction_std" not in body
    assert "- learning_rate: 6.25e-05" in body and "- global_batch_size: 32" in body and "- seed: 42" in body
    openai = model_card(runs / "stsb", "me/gpt1-stsb", base_model="openai-community/openai-gpt")
    assert "license: mit" in openai.split("---\n")[1] and "base_model: openai-community/openai-gpt" in openai
    local = model_card(runs / "stsb", "me/gpt1-stsb", base_model=str(runs / "pretrained"))
    assert "base_model:" not in local.split("---\n")[1] and str(runs) not in local
    assert "**Base model:** a local checkpoint (not on the Hub" in local
    swag = model_card(runs / "swag", "me/gpt1-swag")  # no run files: the card says so instead of guessing
    assert "pipeline_tag: multiple-choice" in swag and "**Base model:** `not recorded`" in swag


@pytest.mark.slow  # the full tier (scripts/test.sh --all): a process without hf_gpt1
def test_push_pull_pipeline_without_hf_gpt1(runs, tmp_path, monkeypatch):
    expected = {
        "stsb": pipeline("text-classification", model=str(runs / "stsb"))(PAIR),
        "swag": pipeline("multiple-choice", model=str(runs / "swag"))(MC),
    }
    with HubStandIn() as hub:
        # conftest switches huggingface_hub to offline mode; the stand-in is local, so allow it for the push
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        for task in ("stsb", "swag"):
            url = push_finetuned(runs / task, f"me/gpt1-{task}", endpoint=hub.endpoint, token="hf_standin")
            assert url.startswith(f"{hub.endpoint}/me/gpt1-{task}/commit/")
        files = hub.repos["me/gpt1-stsb"]
        remote_code = {"configuration_gpt1.py", "modeling_gpt1.py", "kernels.py", "formats.py", "tokenization_gpt1.py"}
        assert {"model.safetensors", "config.json", *remote_code} <= set(files)
        assert {"tokenizer.json", "tokenizer_config.json", "README.md", "all_results.json"} <= set(files)
        assert not any(name.endswith((".bin", ".pt")) or name == RUN_FILE for name in files)
        assert json.loads(files["config.json"])["auto_map"] == AUTO_MAP
        swag_config = json.loads(hub.repos["me/gpt1-swag"]["config.json"])
        assert swag_config["custom_pipelines"]["multiple-choice"]["impl"] == "pipelines.GPT1MultipleChoicePipeline"
        assert {"pipelines.py", *remote_code} <= set(hub.repos["me/gpt1-swag"])

        script = f"""
import json, sys
sys.path[:0] = {[p for p in site.getsitepackages() if p.endswith("site-packages")]!r}
from transformers import AutoModelForMultipleChoice, AutoModelForSequenceClassification, AutoTokenizer, pipeline
try:
    import hf_gpt1
    raise SystemExit("hf_gpt1 must not be importable here")
except ImportError:
    pass
model = AutoModelForSequenceClassification.from_pretrained("me/gpt1-stsb", trust_remote_code=True)
assert type(model).__module__.startswith("transformers_modules"), type(model).__module__
assert type(AutoModelForMultipleChoice.from_pretrained("me/gpt1-swag", trust_remote_code=True)).__name__ == (
    "GPT1ForMultipleChoice")
tokenizer = AutoTokenizer.from_pretrained("me/gpt1-stsb", trust_remote_code=True)
assert tokenizer("a", "b")["input_ids"][0] == model.config.start_token_id  # the GPT-1 template came along
out = {{
    "stsb": pipeline("text-classification", model="me/gpt1-stsb", trust_remote_code=True)({PAIR!r}),
    "swag": pipeline("multiple-choice", model="me/gpt1-swag", trust_remote_code=True)({MC!r}),
}}
print(json.dumps(out))
"""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_")) and k != "PYTHONPATH"}
        env.update(
            HF_ENDPOINT=hub.endpoint,  # read when huggingface_hub is imported
            HF_HOME=str(tmp_path / "hf_home"),
            HF_MODULES_CACHE=str(tmp_path / "modules"),
            HF_TOKEN="hf_standin",
        )
        # -I -S: neither the repo nor an editable install of hf_gpt1 is on sys.path (site-packages added back above)
        result = subprocess.run(
            [sys.executable, "-I", "-S", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert [r for r in hub.unhandled if not r.startswith(IGNORED_REQUESTS)] == []
    pulled = json.loads(result.stdout.strip().splitlines()[-1])
    assert pulled["stsb"]["label"] == expected["stsb"]["label"]
    assert pulled["stsb"]["score"] == pytest.approx(expected["stsb"]["score"], abs=1e-5)
    assert [d["answer"] for d in pulled["swag"]] == MC["answers"]
    assert [d["score"] for d in pulled["swag"]] == pytest.approx([d["score"] for d in expected["swag"]], abs=1e-5)


def test_push_refuses_a_tokenizer_without_gpt1_tokens(runs, tmp_path):
    folder = tmp_path / "broken"
    GPT1LMHeadModel.from_pretrained(runs / "pretrained").save_pretrained(folder)
    plain = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")))
    plain.save_pretrained(folder)
    with pytest.raises(ValueError, match="no GPT-1 tokenizer"):  # refused before any network call
        push_finetuned(folder, "me/broken", endpoint="http://127.0.0.1:9", token="hf_standin")


def test_push_with_the_hub_unreachable_says_so_and_what_is_ready(runs, monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(OSError) as raised:
        push_finetuned(runs / "stsb", "me/gpt1-stsb")
    message = str(raised.value)
    assert message.startswith("pushing to me/gpt1-stsb: the Hugging Face Hub cannot be reached (offline mode")
    assert (
        f"the model in {runs / 'stsb'} is unchanged" in message and "push again where the Hub is reachable" in message
    )


def test_the_card_states_facts_read_from_the_run_and_the_license_given(runs, monkeypatch):
    facts = card_facts(runs / "stsb", "me/gpt1-stsb")
    assert (facts["task"], facts["input_format"], facts["lm_coef"]) == ("stsb", "similarity", 0.5)
    assert facts["regression"] and facts["similarity"] and facts["result_names"] == ["pearson"]
    assert facts["card_data"].license is None  # me/gpt1-base: its licence is not known here, none is guessed
    assert "**License:** not stated" in model_card(runs / "stsb", "me/gpt1-stsb")
    card = model_card(runs / "stsb", "me/gpt1-stsb", license="apache-2.0")
    assert "license: apache-2.0" in card.split("---\n")[1] and "**License:** `apache-2.0`" in card
    from hf_gpt1.commands import push

    given = {}
    monkeypatch.setattr(push, "push_finetuned", lambda *args, **kwargs: given.update(kwargs) or "url")
    push.main([str(runs / "stsb"), "me/gpt1-stsb", "--license", "cc-by-4.0"])
    assert given["license"] == "cc-by-4.0" and given["output_dir"] == str(runs / "stsb") and given["private"] is None


# ------------------------------------------------------------------------------------------- cards tell the truth


def test_a_run_from_a_pinned_hub_snapshot_names_its_base_model_and_licence(runs, tmp_path):
    """`hf-gpt1 reproduce` runs read `openai-community/openai-gpt` from the cache at a commit: the card names the Hub
    model (and its licence), not "a local checkpoint"; another cached model's licence comes from its own card."""
    import shutil

    from hf_gpt1.tools.hub import hub_snapshot

    run_dir = tmp_path / "run"
    shutil.copytree(runs / "stsb", run_dir)
    snapshot = tmp_path / "hub" / "models--openai-community--openai-gpt" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    assert hub_snapshot(str(snapshot)) == ("openai-community/openai-gpt", "a" * 40)
    run = json.loads((run_dir / RUN_FILE).read_text())
    run["model"]["model_name_or_path"] = str(snapshot)
    run["inputs"] = {"--model_name_or_path": {str(snapshot / "config.json"): "0" * 64}}  # read locally, from the cache
    (run_dir / RUN_FILE).write_text(json.dumps(run))
    front = model_card(run_dir, "me/gpt1-stsb").split("---\n")[1]
    assert "base_model: openai-community/openai-gpt" in front and "license: mit" in front
    other = tmp_path / "hub" / "models--someone--gpt1-books" / "snapshots" / ("b" * 40)
    other.mkdir(parents=True)
    (other / "README.md").write_text("---\nlicense: cc-by-4.0\n---\n# a card\n")
    run["model"]["model_name_or_path"] = str(other)
    (run_dir / RUN_FILE).write_text(json.dumps(run))
    front = model_card(run_dir, "me/gpt1-stsb").split("---\n")[1]
    assert "base_model: someone/gpt1-books" in front and "license: cc-by-4.0" in front


def test_a_run_from_a_legacy_hub_id_names_the_repo_the_hub_resolves_it_to(runs, tmp_path):
    """`--model_name_or_path openai-gpt` (an id from before the Hub's organisations) is
    `openai-community/openai-gpt`: the card names that base model, with its licence, not a local checkpoint."""
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(runs / "stsb", run_dir)
    run = json.loads((run_dir / RUN_FILE).read_text())
    run["model"]["model_name_or_path"] = "openai-gpt"
    (run_dir / RUN_FILE).write_text(json.dumps(run))
    card = model_card(run_dir, "me/gpt1-stsb")
    front = card.split("---\n")[1]
    assert "base_model: openai-community/openai-gpt" in front and "license: mit" in front
    assert "**Base model:** `openai-community/openai-gpt`" in card


def test_a_hub_id_is_named_as_the_hub_resolves_it(tmp_path):
    """Legacy ids map to their organisation's repo; `org/name`, local folders and ids the (unreachable) Hub cannot
    answer for stay as given."""
    from hf_gpt1.tools.hub import canonical_hub_id

    assert canonical_hub_id("openai-gpt") == "openai-community/openai-gpt"
    assert canonical_hub_id("me/gpt1") == "me/gpt1" and canonical_hub_id(str(tmp_path)) == str(tmp_path)
    assert canonical_hub_id("some-legacy-model") == "some-legacy-model"  # offline here: the Hub is not asked
    assert canonical_hub_id(None) is None


def test_the_model_index_claims_a_subset_of_a_split_only_as_that_subset(runs, tmp_path):
    """`--max_eval_samples 8` scored 8 of the split's rows: the model-index entry names the slice and the count."""
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(runs / "stsb", run_dir)
    results = json.loads((run_dir / "all_results.json").read_text())
    (run_dir / "all_results.json").write_text(
        json.dumps({**results, "evaluated_rows": {"validation": {"rows": 8, "of": 40, "selected": 8}}})
    )
    (entry,) = card_facts(run_dir, "me/gpt1-stsb")["card_data"].eval_results
    assert entry.dataset_split == "validation[:8]" and "the first 8 of 40 rows," in entry.dataset_name
    whole = {**results, "evaluated_rows": {"validation": {"rows": 40, "of": 40, "selected": 40}}}
    (run_dir / "all_results.json").write_text(json.dumps(whole))
    (entry,) = card_facts(run_dir, "me/gpt1-stsb")["card_data"].eval_results
    assert entry.dataset_split == "validation" and "rows" not in entry.dataset_name
    # a run recorded before the counts were kept, with --max_eval_samples: at most that many rows, said so
    (run_dir / "all_results.json").write_text(json.dumps(results))
    run = json.loads((run_dir / RUN_FILE).read_text())
    (run_dir / RUN_FILE).write_text(json.dumps({**run, "data": {**run["data"], "max_eval_samples": 16}}))
    (entry,) = card_facts(run_dir, "me/gpt1-stsb")["card_data"].eval_results
    assert entry.dataset_split == "validation[:16]" and "at most the first 16 rows" in entry.dataset_name
    # counted before the choice was recorded: the choice is the run's --max_eval_samples
    (run_dir / "all_results.json").write_text(
        json.dumps({**results, "evaluated_rows": {"validation": {"rows": 15, "of": 40}}})
    )
    (entry,) = card_facts(run_dir, "me/gpt1-stsb")["card_data"].eval_results
    assert entry.dataset_split == "validation[:16]", entry
    assert "the first 16 of 40 rows, of which the 15 labelled ones were scored" in entry.dataset_name


@pytest.mark.parametrize("limit", [None, 5])
def test_the_model_index_describes_the_rows_scored_when_a_split_has_an_unlabelled_row(
    limit, tiny, rte_files, tmp_path, capsys
):
    """A 6-row validation split whose third row has no label: 5 rows are scored. Without a limit that is every
    labelled row of the split, not `validation[:5]` (which would hold the unlabelled row and leave a labelled one
    out); with `--max_eval_samples 5`, the first 5 rows as chosen, of which 4 are labelled."""
    from tests.utils import glue_argv, run_command

    train, dev = rte_files
    lines = dev.read_text().splitlines(keepends=True)[:7]
    lines[3] = lines[3].rsplit(",", 1)[0] + ",\n"  # no gold label
    dev.write_text("".join(lines))
    out = tmp_path / "run"
    extra = ("--max_steps", "1", "--save_strategy", "no", "--do_predict", "false")
    extra += ("--max_eval_samples", str(limit)) if limit else ()
    run_command(capsys, "glue", *glue_argv(tiny, train, dev, out, extra=extra)).results()
    (entry,) = card_facts(out, "me/gpt1-rte")["card_data"].eval_results
    if limit is None:
        assert entry.dataset_split == "validation", entry
        assert "every labelled row: 5 of its 6 rows" in entry.dataset_name, entry.dataset_name
    else:
        assert entry.dataset_split == "validation[:5]", entry
        assert "the first 5 of 6 rows, of which the 4 labelled ones were scored" in entry.dataset_name, entry


def test_the_model_index_names_a_hub_dataset_only_when_the_run_read_it(runs, tmp_path):
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(runs / "stsb", run_dir)
    run = json.loads((run_dir / RUN_FILE).read_text())
    run["data"] = {"task": "stsb", "train_file": "mine/train.csv", "validation_file": "mine/dev.csv"}
    (run_dir / RUN_FILE).write_text(json.dumps(run))
    front = model_card(run_dir, "me/gpt1-stsb").split("---\n")[1]
    assert "nyu-mll/glue" not in front and "type: stsb" in front  # the user's own CSVs: no Hub dataset claimed
    run["data"] = {"task": "stsb"}  # read from the Hub copy
    (run_dir / RUN_FILE).write_text(json.dumps(run))
    front = model_card(run_dir, "me/gpt1-stsb").split("---\n")[1]
    assert "type: nyu-mll/glue" in front and "- nyu-mll/glue" in front


@pytest.mark.parametrize(
    ("license", "name", "problem"),
    [
        ("Apache 2.0", None, r"--license 'Apache 2.0' is not a Hub licence identifier \(did you mean apache-2.0"),
        ("other", None, "--license other needs --license_name"),
        (None, "My licence", "--license_name names a licence of --license other"),
    ],
)
def test_a_licence_the_hub_does_not_know_is_refused_before_anything_is_created(runs, license, name, problem):
    with pytest.raises(ValueError, match=problem):
        push_finetuned(
            runs / "stsb", "me/gpt1-stsb", license=license, license_name=name, endpoint="http://127.0.0.1:9"
        )


def test_other_with_its_name_is_carried_on_the_card(runs):
    front = model_card(runs / "stsb", "me/gpt1-stsb", license="other", license_name="my-licence").split("---\n")[1]
    assert "license: other" in front and "license_name: my-licence" in front


def test_push_refuses_a_task_file_that_is_not_the_models_task(runs, tmp_path, monkeypatch):
    import shutil

    from hf_gpt1.data import tasks

    # reading the task file registers it: in copies of the registry, so no other test sees the task
    monkeypatch.setattr(tasks, "TASKS", dict(tasks.TASKS))
    monkeypatch.setattr(tasks, "_BY_NAME", dict(tasks._BY_NAME))

    run_dir = tmp_path / "run"
    shutil.copytree(runs / "stsb", run_dir)
    (run_dir / "task.json").write_text(
        json.dumps({"name": "mine", "format": "classification", "text_columns": ["text"], "label_names": ["a", "b"]})
    )
    with pytest.raises(ValueError, match=r"task.json describes task 'mine' \(classification.*fine-tuned on 'stsb'"):
        push_finetuned(run_dir, "me/gpt1-stsb", endpoint="http://127.0.0.1:9")


def push_to_standin(folder: Path, monkeypatch) -> dict[str, str]:
    import huggingface_hub.constants

    from hf_gpt1.tools.hub import push_finetuned
    from tests.tools.hub_standin import HubStandIn

    with HubStandIn() as hub:
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        push_finetuned(folder, "me/gpt1-rte", endpoint=hub.endpoint, token="hf_standin")
        return hub.repos["me/gpt1-rte"]


def test_a_push_publishes_no_local_path(finished_run, tmp_path, monkeypatch):
    files = push_to_standin(finished_run, monkeypatch)
    results = json.loads(files["all_results.json"])
    assert results["test_predictions"] == "RTE.tsv" and results["best_checkpoint"] == "checkpoint-4"
    for name, content in files.items():
        text = content if isinstance(content, str) else content.decode("utf-8", "replace")
        assert str(tmp_path) not in text and str(Path.home()) + os.sep not in text, name


def test_a_push_that_would_leak_a_path_is_refused_listing_it(finished_run, tmp_path):
    from hf_gpt1.tools.hub import push_finetuned

    config = json.loads((finished_run / "config.json").read_text())
    (finished_run / "config.json").write_text(json.dumps({**config, "notes": str(tmp_path / "client-x" / "data")}))
    with pytest.raises(ValueError, match=r"Nothing was pushed: .*config.json: .*pytest"):  # before any request
        push_finetuned(finished_run, "me/gpt1-rte", endpoint="http://127.0.0.1:9", token="hf_standin")


@pytest.mark.parametrize("damaged", ["all_results.json", "hf_gpt1_run.json"])
def test_a_push_refuses_a_damaged_run_file_before_loading_the_model(finished_run, damaged, monkeypatch):
    """The run's own files are read (strictly, and their shape checked) before the model is loaded or anything
    staged: a damaged one is the first and only thing said."""
    from hf_gpt1 import modeling_gpt1
    from hf_gpt1.tools.hub import push_finetuned

    def loaded(*args, **kwargs):
        raise AssertionError("the model was loaded before the run's files were checked")

    monkeypatch.setattr(modeling_gpt1.GPT1PreTrainedModel, "from_pretrained", loaded)
    (finished_run / damaged).write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{damaged} is damaged (it is not a JSON object)")):
        push_finetuned(finished_run, "me/gpt1-rte", endpoint="http://127.0.0.1:9", token="hf_standin")


def test_a_local_base_model_is_named_as_local_from_any_folder(finished_run, tmp_path, monkeypatch):
    from hf_gpt1.tools.hub import model_card

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # runs/first-pt does not exist from here
    card = model_card(finished_run, "me/gpt1-rte")
    assert "base_model:" not in card.split("---\n")[1], card
    assert "**Base model:** a local checkpoint (not on the Hub: `first-pt`;" in card


def test_non_finite_metrics_are_written_as_null_and_left_out_of_the_card(finished_run, caplog):
    from hf_gpt1.data.atomic import write_json_atomic
    from hf_gpt1.tools.hub import model_card

    results = json.loads((finished_run / "all_results.json").read_text())
    results["validation"] = {"eval_validation_pearson": float("nan"), "eval_validation_accuracy": 0.5}
    write_json_atomic(finished_run / "all_results.json", results)
    text = (finished_run / "all_results.json").read_text()
    assert json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))  # strict JSON
    assert '"eval_validation_pearson": null' in text
    assert "validation.eval_validation_pearson" in caplog.text and "written as null" in caplog.text
    card = model_card(finished_run, "me/gpt1-rte")
    assert "nan" not in card.lower().replace("financ", ""), card


def test_a_multi_label_cards_usage_returns_every_labels_score(runs, tmp_path):
    """transformers' text-classification pipeline returns the top label only, unless `top_k=None`: a multi-label
    model's card shows the call that gives every label's sigmoid score, as the label kind says (and the snippet
    run on the model gives them)."""
    from hf_gpt1 import TaskSpec
    from hf_gpt1.data.tasks import task_to_dict
    from hf_gpt1.training.run_folder import RunFolder

    names = ("sports", "politics", "science")
    spec = TaskSpec(name="topics", format="classification", text_columns=("text",), label_names=names,
                    label_kind="multi_label", metric_config="multi_label", main_metric="micro_f1")  # fmt: skip
    folder = tmp_path / "topics"
    tokenizer = load_gpt1_tokenizer(runs / "pretrained")
    build_model(spec, ModelArguments(model_name_or_path=str(runs / "pretrained")), tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    RunFolder(folder).write_task(task_to_dict(spec))
    usage = card_facts(folder, "me/topics")["usage"]
    assert (
        usage.splitlines()[0]
        == 'classifier = pipeline("text-classification", model="me/topics", trust_remote_code=True)'
    )
    call = usage.splitlines()[1]
    assert call.startswith('classifier("A sentence.", top_k=None)  # every label\'s score'), call
    scores = eval(call.split("  #")[0], {"classifier": pipeline("text-classification", model=str(folder))})
    assert sorted(score["label"] for score in scores) == sorted(names)
    # one label per row: the top label, as the pipeline answers by default
    assert "top_k" not in card_facts(runs / "stsb", "me/gpt1-stsb")["usage"]
