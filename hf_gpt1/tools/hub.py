# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Publishing a fine-tuned GPT-1 on the Hugging Face Hub: model card + one-call push.

A pushed repository holds the weights (safetensors), the tokenizer (with the GPT-1 input template), the package's
modeling code with a complete `auto_map`, for multiple-choice models the `multiple-choice` pipeline code
(`config.custom_pipelines`), the run's `all_results.json`, and a model card. In a process without hf_gpt1:

```python
>>> model = AutoModelForSequenceClassification.from_pretrained(repo_id, trust_remote_code=True)
>>> pipeline("text-classification", model=repo_id, trust_remote_code=True)
>>> pipeline("multiple-choice", model=repo_id, trust_remote_code=True)  # multiple-choice models
```
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from huggingface_hub import EvalResult, HfApi, ModelCard, ModelCardData
from transformers import AutoConfig

from .. import modeling_gpt1
from ..configuration_gpt1 import MIN_TRANSFORMERS_VERSION
from ..data.hub_access import hub_access
from ..data.metrics import baseline_name, scores_and_baselines
from ..data.tasks import TaskSpec, get_task, task_from_file
from ..modeling_gpt1 import HEADS
from ..pipelines import MULTIPLE_CHOICE_TASK, GPT1MultipleChoicePipeline, gpt1_special_token_ids
from ..tokenization_gpt1 import load_gpt1_tokenizer
from ..training.cli import ARGUMENT_FILE_SUFFIXES, parse_recipe_args
from ..training.output_dir import RESULTS_FILE, RUN_FILE, TASK_FILE

_PIPELINE_TAGS = {entry.model.__name__: entry.pipeline_tag for entry in HEADS if entry.pipeline_tag}

__all__ = ["card_facts", "model_card", "push_finetuned"]


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _is_hub_id(name: str | None, run: dict[str, Any]) -> bool:
    """Whether `name` is a Hub repository: `base_model` metadata must name one. A folder the run read its weights
    from (recorded among its local inputs) is local wherever the card is written, also where it is not (another
    machine or folder)."""
    if not name or os.path.exists(name) or name.startswith((".", "/", "~")) or name.count("/") != 1:
        return False
    read_locally = "--model_name_or_path" in run.get("inputs", {})
    return not (read_locally and name == run.get("model", {}).get("model_name_or_path"))


def _eval_metrics(results: dict[str, Any]) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """`{split: {metric: value}}` from all_results.json, and the same for the constant baseline (timings, losses and
    the predictions' spread left out)."""
    scores, baselines = {}, {}
    for split, values in results.items():
        if split in ("train", "hyperparameters") or not isinstance(values, dict):
            continue
        values = {key: value for key, value in values.items() if value is not None}  # non-finite: written as null
        own, constant = scores_and_baselines(values, f"eval_{split}_")
        if own := {key: value for key, value in own.items() if not key.endswith("loss")}:
            scores[split] = own
        if constant:
            baselines[split] = constant
    return scores, baselines


# The licences of base models whose licence is known; a card on another base states none rather than guess.
BASE_LICENSES = {"openai-community/openai-gpt": "mit"}


CARD_TEMPLATE = Path(__file__).with_name("model_card_template.md")
"""The card's text (Jinja, as huggingface_hub's `ModelCard.from_template` renders it); [`card_facts`] fills it."""


def card_facts(
    model_dir: str | os.PathLike, repo_id: str, base_model: str | None = None, license: str | None = None
) -> dict[str, Any]:
    """What the card of a fine-tuned model states, each fact read from the run's files: `card_data` (the Hub's
    metadata: pipeline tag, licence, base model, datasets, metrics, model-index) and the fields of
    [`CARD_TEMPLATE`] (base model, task and format, λ, data, licence, results beside the constant baseline,
    hyperparameters, usage).

    Reads what the fine-tuning recipe leaves in `model_dir`: `config.json`, `hf_gpt1_run.json` (the run's model and
    data arguments), `all_results.json` (metrics) and, for a task of its user's, `task.json`; missing files leave
    their part out.

    Args:
        model_dir (`str` or `os.PathLike`): The recipe's output folder.
        repo_id (`str`): The repository the card is for (used in the usage examples).
        base_model (`str`, *optional*): The pre-trained model; default: the run's `--model_name_or_path`.
        license (`str`, *optional*): The model's licence (a Hub licence identifier); default: the base model's where
            it is known ([`BASE_LICENSES`]), else none is stated.
    """
    folder = Path(model_dir)
    config = _read_json(folder / "config.json")
    run = _read_json(folder / RUN_FILE)
    results = _read_json(folder / RESULTS_FILE)
    data = run.get("data", {})
    base_model = base_model or run.get("model", {}).get("model_name_or_path")
    task_name = results.get("task") or data.get("task")
    if (folder / TASK_FILE).is_file():  # a task its user registered: declared beside the model
        spec: TaskSpec | None = task_from_file(folder / TASK_FILE)
    else:
        spec = get_task(task_name) if task_name else None
    architecture = (config.get("architectures") or ["GPT1PreTrainedModel"])[0]
    pipeline_tag = _PIPELINE_TAGS.get(architecture)
    metrics, baselines = _eval_metrics(results)
    hub_base = base_model if _is_hub_id(base_model, run) else None

    if data.get("data_dir"):
        source = f"the official GLUE TSV files (`{Path(data['data_dir']).name}/`)"
    elif any(data.get(key) for key in ("train_file", "validation_file", "test_file")):
        files = [Path(data[key]).name for key in ("train_file", "validation_file", "test_file") if data.get(key)]
        source = "local files " + ", ".join(f"`{name}`" for name in files)
    elif spec is not None and spec.hub is not None:
        source = f"the Hub dataset `{spec.hub[0]}`" + (f" (config `{spec.hub[1]}`)" if spec.hub[1] else "")
    else:
        source = "not recorded"
    limits = [f"{key} = {data[key]}" for key in ("max_train_samples", "max_eval_samples") if data.get(key)]

    dataset = spec.hub[0] if spec is not None and spec.hub is not None else (spec.name if spec else None)
    eval_results = [
        EvalResult(
            task_type=pipeline_tag or "text-classification",
            dataset_type=dataset,
            dataset_name=f"{spec.name} ({split})",
            dataset_config=spec.hub[1] if spec.hub else None,
            dataset_split=split,
            metric_type=name,
            metric_value=round(float(value), 4),
        )
        for split, values in metrics.items()
        for name, value in values.items()
        if spec is not None
    ]
    names = sorted({name for split in metrics.values() for name in split})
    card_data = ModelCardData(
        library_name="transformers",
        pipeline_tag=pipeline_tag,
        license=license or BASE_LICENSES.get(hub_base),
        base_model=hub_base,
        datasets=[spec.hub[0]] if spec is not None and spec.hub is not None and source.startswith("the Hub") else None,
        metrics=names or None,
        tags=["gpt1", "hf_gpt1", "custom_code"] + ([spec.name] if spec is not None else []),
        model_name=repo_id.split("/")[-1] if eval_results else None,
        eval_results=eval_results or None,
    )
    if hub_base:
        base_line = f"`{hub_base}`"
    elif base_model:
        base_line = (
            f"a local checkpoint (not on the Hub: `{Path(base_model).name}`; pass `base_model=` its Hub id to link it)"
        )
    else:
        base_line = "`not recorded`"
    constant = (f"{baseline_name(spec)} baseline" if spec is not None else "baseline") if baselines else None
    rows = list(metrics.items())
    rows += [(f"{constant} ({split})" if len(baselines) > 1 else constant, v) for split, v in baselines.items()]
    return {
        "card_data": card_data,
        "model_name": repo_id.split("/")[-1],
        "architecture": architecture,
        "base_model_line": base_line,
        "task": spec.name if spec else None,
        "input_format": spec.format if spec else None,
        "lm_coef": config.get("lm_coef", "not recorded"),
        "data_line": source + (f"; {', '.join(limits)}" if limits else ""),
        "min_transformers": MIN_TRANSFORMERS_VERSION,
        "similarity": bool(config.get("similarity")),
        "regression": config.get("problem_type") == "regression",
        "result_names": names,
        "result_rows": [(label, [f"{v[n]:.4f}" if n in v else "" for n in names]) for label, v in rows],
        "baseline": constant,
        "hyperparameters": results.get("hyperparameters") or {},
        "usage": _usage(pipeline_tag, repo_id, spec),
    }


def _usage(pipeline_tag: str | None, repo_id: str, spec: TaskSpec | None) -> str:
    """The card's example: the pipeline of the model's head on an input of its task's format."""
    if pipeline_tag == MULTIPLE_CHOICE_TASK:
        return (
            f'chooser = pipeline("multiple-choice", model="{repo_id}", trust_remote_code=True)\n'
            'chooser("Karen was assigned a roommate ...", answers=["Karen liked her.", "Karen hated pizza."])'
        )
    if pipeline_tag == "text-generation":
        return (
            f'generator = pipeline("text-generation", model="{repo_id}", trust_remote_code=True, '
            "add_special_tokens=False)\n"
            'generator("The book was", max_new_tokens=20)'
        )
    pair = spec is not None and spec.input_format.pair
    example = '{"text": "first sentence", "text_pair": "second sentence"}' if pair else '"A sentence."'
    return (
        f'classifier = pipeline("text-classification", model="{repo_id}", trust_remote_code=True)\n'
        f"classifier({example})"
    )


def model_card(
    model_dir: str | os.PathLike, repo_id: str, base_model: str | None = None, license: str | None = None
) -> str:
    """The README.md of a fine-tuned model: [`card_facts`] rendered into [`CARD_TEMPLATE`] by huggingface_hub's
    `ModelCard.from_template`."""
    facts = card_facts(model_dir, repo_id, base_model, license)
    return str(ModelCard.from_template(facts.pop("card_data"), template_path=CARD_TEMPLATE, **facts))


def push_finetuned(
    output_dir: str | os.PathLike,
    repo_id: str,
    *,
    base_model: str | None = None,
    license: str | None = None,
    private: bool | None = None,
    token: str | None = None,
    endpoint: str | None = None,
    commit_message: str = "Upload fine-tuned GPT-1",
) -> str:
    """Pushes a fine-tuning run's model to the Hub so that it loads without hf_gpt1 installed.

    The model and tokenizer are re-saved from `output_dir` into a staging folder (so checkpoints, logs and GLUE
    submission files stay local): safetensors weights, `configuration_gpt1.py` + `modeling_gpt1.py` with the full
    `auto_map`, the tokenizer, for multiple-choice models `pipelines.py` and `config.custom_pipelines`, the run's
    `all_results.json`, and the card of [`model_card`].

    Args:
        output_dir (`str` or `os.PathLike`): The recipe's output folder (model, tokenizer, results).
        repo_id (`str`): `namespace/name` of the Hub repository (created when absent).
        base_model (`str`, *optional*): The pre-trained model, for the card; default: the run's.
        license (`str`, *optional*): The model's licence, for the card ([`card_facts`]).
        private (`bool`, *optional*): Visibility of a newly created repository.
        token (`str`, *optional*): A write token; default: the logged-in one.
        endpoint (`str`, *optional*): Hub endpoint; default: `HF_ENDPOINT` or huggingface.co.
        commit_message (`str`): The commit's title.

    Returns:
        `str`: The URL of the commit.

    Raises:
        `ValueError`: The folder holds no GPT-1 model, or its tokenizer lacks the GPT-1 special tokens (the pushed
            model could then not build its inputs).
    """
    folder = Path(output_dir)
    _refuse_unfinished(folder)
    config = AutoConfig.from_pretrained(folder)
    architecture = (getattr(config, "architectures", None) or [None])[0]
    if config.model_type != "gpt1" or architecture not in _PIPELINE_TAGS:
        raise ValueError(f"{folder} holds no hf_gpt1 model (model_type {config.model_type!r}, {architecture}).")
    model = getattr(modeling_gpt1, architecture).from_pretrained(folder)
    tokenizer = load_gpt1_tokenizer(folder)
    gpt1_special_token_ids(tokenizer, model.config)

    with tempfile.TemporaryDirectory() as staging:
        if architecture == "GPT1ForMultipleChoice":
            # transformers' own mechanism: writes config.custom_pipelines and copies pipelines.py beside the model
            GPT1MultipleChoicePipeline(model=model, tokenizer=tokenizer).save_pretrained(staging)
        else:
            model.save_pretrained(staging)
            tokenizer.save_pretrained(staging)
        if (folder / RESULTS_FILE).is_file():
            results = _without_local_paths(_read_json(folder / RESULTS_FILE), folder)
            Path(staging, RESULTS_FILE).write_text(json.dumps(results, indent=2, sort_keys=True), encoding="utf-8")
        card = model_card(folder, repo_id, base_model=base_model, license=license)
        Path(staging, "README.md").write_text(card, encoding="utf-8")
        _refuse_leaks(Path(staging), folder)

        api = HfApi(endpoint=endpoint, token=token)
        with hub_access(
            f"pushing to {repo_id}", f"the model in {folder} is unchanged: push again where the Hub is reachable"
        ):
            api.create_repo(repo_id, private=private, exist_ok=True)
            commit = api.upload_folder(repo_id=repo_id, folder_path=staging, commit_message=commit_message)
    return commit.commit_url


def _refuse_unfinished(folder: Path) -> None:
    """A run folder without its final model and results (killed, or still training) is not pushed."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder: give the output folder of a fine-tuning run.")
    if (folder / RUN_FILE).is_file() and not (folder / RESULTS_FILE).is_file():
        raise ValueError(
            f"{folder}: this run did not finish (no {RESULTS_FILE}, its final model is not saved); run its command "
            "again with --resume to finish it, then push."
        )
    if not (folder / "config.json").is_file():
        raise ValueError(f"{folder} holds no saved model (no config.json): give the output folder of a finished run.")


def _without_local_paths(value: Any, folder: Path) -> Any:
    """`all_results.json` as a stranger may read it: each path the run wrote into its folder (predictions, the best
    checkpoint) becomes the name it has inside the pushed run, not the local path."""
    if isinstance(value, dict):
        return {key: _without_local_paths(item, folder) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_local_paths(item, folder) for item in value]
    if isinstance(value, str) and os.sep in value and (folder / Path(value).name).exists():
        return Path(value).name
    return value


def _local_markers(folder: Path) -> list[str]:
    """Strings that would tell a stranger about this machine: its user's home and name, the working folder and the
    run's folder as absolute paths."""
    markers = {str(Path.home()), str(Path.cwd()), str(folder.resolve()), str(folder.absolute())}
    with contextlib.suppress(KeyError, OSError):
        markers.add(f"{os.sep}{getpass.getuser()}{os.sep}")
    return sorted(marker for marker in markers if len(marker.strip(os.sep)) > 1)


def _refuse_leaks(staging: Path, folder: Path) -> None:
    """Refuses a push whose files would publish a local path or user name, listing each (file: what)."""
    markers = _local_markers(folder)
    leaks = [
        f"{path.name}: {marker}"
        for path in sorted(staging.rglob("*"))
        if path.is_file()
        for marker in markers
        if marker.encode() in path.read_bytes()
    ]
    if leaks:
        raise ValueError(
            f"Nothing was pushed: these files would publish local paths or your user name: {'; '.join(leaks)}. "
            f"Remove them from the run's files in {folder} (a config field or a results entry), then push again."
        )


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
    private: bool = field(default=False, metadata={"help": "Create the repository private."})


def main(argv: list[str] | None = None) -> str:
    """`hf-gpt1 push` / `python -m hf_gpt1.tools.hub`: [`push_finetuned`] from the command line."""
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
    url = push_finetuned(
        args.output_dir, args.repo_id, base_model=args.base_model, license=args.license, private=args.private or None
    )
    print(f"Pushed {args.output_dir} to {args.repo_id}: {url}")
    return url


if __name__ == "__main__":  # python -m: the same as the hf-gpt1 command
    from hf_gpt1.commands import module_main

    module_main(__spec__.name)
