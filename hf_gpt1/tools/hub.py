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
import tempfile
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
from ..training.run_folder import RunFolder

_PIPELINE_TAGS = {entry.model.__name__: entry.pipeline_tag for entry in HEADS if entry.pipeline_tag}

__all__ = ["HUB_LICENSES", "card_facts", "check_license", "hub_snapshot", "model_card", "push_finetuned"]


def _read_json(path: Path) -> dict[str, Any]:  # the model's config (a run's own files: RunFolder)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


# Model ids from before the Hub's organisations, which the Hub still resolves (redirects) to their organisation's repo.
LEGACY_HUB_IDS = {"openai-gpt": "openai-community/openai-gpt"}


def canonical_hub_id(name: str | None) -> str | None:
    """A Hub model id as the Hub resolves it: a legacy id without an organisation ([`LEGACY_HUB_IDS`], or the id the
    Hub answers with when it is reachable) becomes its repository's `org/name`; other names are returned as given."""
    if not name or "/" in name or os.path.exists(name):
        return name
    if name in LEGACY_HUB_IDS:
        return LEGACY_HUB_IDS[name]
    with contextlib.suppress(Exception):  # offline, or no such model: the name stays as it was given
        return HfApi().model_info(name).id
    return name


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


def _evaluated_rows(results: dict[str, Any], data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """The splits a run scored on fewer rows than they hold, each as the model-index names the rows scored: the
    split as `datasets` slices it and the words for its name.

    The rows scored are the labelled ones of the split's first `selected` rows (`--max_eval_samples` chose them; the
    rows without a gold label are then dropped). Every labelled row of the whole split is the split itself
    (`validation`, `, every labelled row: 5 of its 6 rows`), never a slice of as many rows, which would hold an
    unlabelled row and leave a labelled one out; a chosen subset is named as it was chosen (`validation[:5]`,
    `, the first 5 of 6 rows, of which the 4 labelled ones were scored`)."""
    subsets = {}
    limit = data.get("max_eval_samples")
    for split, counts in (results.get("evaluated_rows") or {}).items():
        rows, of = counts["rows"], counts["of"]
        # recorded before `selected` was: the rows --max_eval_samples took, which the run's record holds
        selected = counts.get("selected", min(limit, of) if limit else of)
        labelled = f", of which the {rows} labelled ones were scored" if rows < selected else ""
        if selected < of:
            subsets[split] = (f"{split}[:{selected}]", f", the first {selected} of {of} rows{labelled}")
        elif rows < of:
            subsets[split] = (split, f", every labelled row: {rows} of its {of} rows")
    if limit and "evaluated_rows" not in results:  # a run recorded before the counts were
        for split in results:
            if isinstance(results[split], dict) and any(key.startswith(f"eval_{split}_") for key in results[split]):
                subsets[split] = (f"{split}[:{limit}]", f", at most the first {limit} rows")
    return subsets


# The licences of base models whose licence is known; a card on another base states the licence its own card (in the
# Hugging Face cache) states, else none rather than guess.
BASE_LICENSES = {"openai-community/openai-gpt": "mit"}

# The Hub's licence identifiers (huggingface/hub-docs, docs/hub/repositories-licenses.md, read 2026-11-26, and the
# Llama licences added since); `other` needs a `license_name`.
HUB_LICENSES = frozenset(
    """
    apache-2.0 mit openrail bigscience-openrail-m creativeml-openrail-m bigscience-bloom-rail-1.0 bigcode-openrail-m
    afl-3.0 artistic-2.0 bsl-1.0 bsd bsd-2-clause bsd-3-clause bsd-3-clause-clear c-uda cc cc0-1.0 cc-by-2.0
    cc-by-2.5 cc-by-3.0 cc-by-4.0 cc-by-sa-3.0 cc-by-sa-4.0 cc-by-nc-2.0 cc-by-nc-3.0 cc-by-nc-4.0 cc-by-nd-4.0
    cc-by-nc-nd-3.0 cc-by-nc-nd-4.0 cc-by-nc-sa-2.0 cc-by-nc-sa-3.0 cc-by-nc-sa-4.0 cdla-sharing-1.0
    cdla-permissive-1.0 cdla-permissive-2.0 wtfpl ecl-2.0 epl-1.0 epl-2.0 etalab-2.0 eupl-1.1 agpl-3.0 gfdl gpl
    gpl-2.0 gpl-3.0 lgpl lgpl-2.1 lgpl-3.0 isc lppl-1.3c ms-pl mpl-2.0 odc-by odbl openrail++ osl-3.0 postgresql
    ofl-1.1 ncsa unlicense zlib pddl lgpl-lr deepfloyd-if-license llama2 llama3 llama3.1 llama3.2 llama3.3 llama4
    gemma unknown other
""".split()
)


def check_license(license: str | None, license_name: str | None = None) -> None:
    """Refuses, before anything is created on the Hub, a licence the Hub does not know (it would refuse the card only
    after the repository exists).

    Raises:
        `ValueError`: Not a Hub licence identifier, or `other` without its name; the message names the fix.
    """
    if license is None:
        if license_name is not None:
            raise ValueError("--license_name names a licence of --license other: pass --license other too.")
        return
    if license not in HUB_LICENSES:
        close = sorted(HUB_LICENSES, key=lambda known: -_overlap(known, license.lower()))[:3]
        raise ValueError(
            f"--license {license!r} is not a Hub licence identifier (did you mean {' or '.join(close)}?); for another "
            "licence pass --license other --license_name <its name> and add its text as a LICENSE file."
        )
    if license == "other" and not license_name:
        raise ValueError("--license other needs --license_name (the licence's name, as the Hub shows it).")


def _overlap(a: str, b: str) -> int:
    import difflib

    return difflib.SequenceMatcher(None, a, b.replace(" ", "-")).find_longest_match(0, len(a), 0, len(b)).size


def hub_snapshot(path: str | None) -> tuple[str, str] | None:
    """`(repo_id, commit)` when `path` is a model folder of the Hugging Face cache
    (`models--org--name/snapshots/<sha>`: what `hf-gpt1 reproduce` pins every run to), else None."""
    if not path:
        return None
    parts = Path(path).parts
    if len(parts) < 3 or parts[-2] != "snapshots" or not parts[-3].startswith("models--"):
        return None
    return parts[-3].removeprefix("models--").replace("--", "/"), parts[-1]


def _snapshot_license(path: str) -> str | None:
    """The licence a cached model's own card states (`license:` in its README's metadata), or None."""
    card = Path(path) / "README.md"
    if not card.is_file():
        return None
    with contextlib.suppress(Exception):  # a card that does not parse states nothing
        return ModelCard.load(card).data.to_dict().get("license")
    return None


CARD_TEMPLATE = Path(__file__).with_name("model_card_template.md")
"""The card's text (Jinja, as huggingface_hub's `ModelCard.from_template` renders it); [`card_facts`] fills it."""


def card_facts(
    model_dir: str | os.PathLike,
    repo_id: str,
    base_model: str | None = None,
    license: str | None = None,
    license_name: str | None = None,
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
            it is known ([`BASE_LICENSES`], or the card of a base model read from the Hugging Face cache), else none
            is stated.
        license_name (`str`, *optional*): The licence's name, with `license="other"`.
    """
    folder = Path(model_dir)
    config = _read_json(folder / "config.json")
    run_folder = RunFolder(folder)
    run = run_folder.identity() or {}
    results = run_folder.results() or {}
    data = run.get("data", {})
    base_model = base_model or run.get("model", {}).get("model_name_or_path")
    if base_model == run.get("model", {}).get("model_name_or_path") and "--model_name_or_path" not in run.get(
        "inputs", {}
    ):  # read from the Hub: named as the Hub names it
        base_model = canonical_hub_id(base_model)
    snapshot = hub_snapshot(base_model)
    if snapshot is not None:  # a Hub model read from the cache at a commit: the card names the Hub id
        license = license or BASE_LICENSES.get(snapshot[0]) or _snapshot_license(base_model)
        base_model = snapshot[0]
    task_name = results.get("task") or data.get("task")
    if run_folder.task_file.is_file():  # a task its user registered: declared beside the model
        spec: TaskSpec | None = task_from_file(run_folder.task_file)
    else:
        spec = get_task(task_name) if task_name else None
    architecture = (config.get("architectures") or ["GPT1PreTrainedModel"])[0]
    pipeline_tag = _PIPELINE_TAGS.get(architecture)
    metrics, baselines = _eval_metrics(results)
    hub_base = base_model if snapshot is not None or _is_hub_id(base_model, run) else None

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

    from_hub = spec is not None and spec.hub is not None and source.startswith("the Hub")
    dataset = spec.hub[0] if from_hub else (spec.name if spec else None)  # a Hub id only when the run read it
    evaluated = _evaluated_rows(results, data)
    eval_results = [
        EvalResult(
            task_type=pipeline_tag or "text-classification",
            dataset_type=dataset,
            dataset_name=f"{spec.name} ({split}{evaluated[split][1] if split in evaluated else ''}"
            + (")" if from_hub else f", {source})"),
            dataset_config=spec.hub[1] if from_hub else None,
            dataset_split=evaluated[split][0] if split in evaluated else split,
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
        license_name=license_name,
        base_model=hub_base,
        datasets=[spec.hub[0]] if from_hub else None,
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
    # the label kind says what the call needs to answer for it (a multi-label model: every label's score)
    arguments = spec.labels.pipeline_arguments(spec) if spec is not None else {}
    answer = spec.labels.pipeline_answer(spec) if spec is not None else None
    call = f"classifier({example}{''.join(f', {name}={value!r}' for name, value in arguments.items())})"
    return (
        f'classifier = pipeline("text-classification", model="{repo_id}", trust_remote_code=True)\n'
        + call
        + (f"  # {answer}" if answer else "")
    )


def model_card(
    model_dir: str | os.PathLike,
    repo_id: str,
    base_model: str | None = None,
    license: str | None = None,
    license_name: str | None = None,
) -> str:
    """The README.md of a fine-tuned model: [`card_facts`] rendered into [`CARD_TEMPLATE`] by huggingface_hub's
    `ModelCard.from_template`."""
    facts = card_facts(model_dir, repo_id, base_model, license, license_name)
    return str(ModelCard.from_template(facts.pop("card_data"), template_path=CARD_TEMPLATE, **facts))


def push_finetuned(
    output_dir: str | os.PathLike,
    repo_id: str,
    *,
    base_model: str | None = None,
    license: str | None = None,
    license_name: str | None = None,
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
        license (`str`, *optional*): The model's licence, for the card ([`card_facts`]): a Hub licence identifier
            ([`HUB_LICENSES`]), checked before anything is created.
        license_name (`str`, *optional*): The licence's name, with `license="other"`.
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
    check_license(license, license_name)
    folder = Path(output_dir)
    _refuse_unfinished(folder)
    config = AutoConfig.from_pretrained(folder)
    architecture = (getattr(config, "architectures", None) or [None])[0]
    if config.model_type != "gpt1" or architecture not in _PIPELINE_TAGS:
        raise ValueError(f"{folder} holds no hf_gpt1 model (model_type {config.model_type!r}, {architecture}).")
    _refuse_another_task(folder, config)
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
        if RunFolder(folder).finished:
            results = _without_local_paths(RunFolder(folder).results(), folder)
            RunFolder(staging).results_file.write_text(json.dumps(results, indent=2, sort_keys=True), encoding="utf-8")
        card = model_card(folder, repo_id, base_model=base_model, license=license, license_name=license_name)
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
    run = RunFolder(folder)
    if run.run_file.is_file() and not run.finished:
        raise ValueError(
            f"{folder}: this run did not finish (no {run.results_file.name}, its final model is not saved); run its "
            "command again with --resume to finish it, then push."
        )
    if not (folder / "config.json").is_file():
        raise ValueError(f"{folder} holds no saved model (no config.json): give the output folder of a finished run.")
    run.identity(), run.results()  # read strictly, their shape checked: a damaged one is said before the model loads


def _refuse_another_task(folder: Path, config) -> None:
    """A `task.json` that does not describe the task the model was fine-tuned on (replaced after the run) would give
    the card another task and format: refused, naming both."""
    task_file = RunFolder(folder).task_file
    if not task_file.is_file():
        return
    spec = task_from_file(task_file)
    fine_tuned = (getattr(config, "finetuned_task", None), getattr(config, "input_format", None))
    labels = {int(k): v for k, v in (config.id2label or {}).items()}
    same = (spec.name, spec.format) == fine_tuned and (spec.id2label is None or spec.id2label == labels)
    if not same:
        raise ValueError(
            f"{task_file} describes task {spec.name!r} ({spec.format}, labels {spec.id2label}), but the "
            f"model was fine-tuned on {fine_tuned[0]!r} ({fine_tuned[1]}, labels {labels}): restore the run's "
            "task.json (the one it wrote), then push."
        )


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


if __name__ == "__main__":  # `python -m hf_gpt1.tools.hub` ran the command until 0.6.0: a library runs nothing
    raise SystemExit(
        "error: python -m hf_gpt1.tools.hub was removed in hf_gpt1 0.6.0: run hf-gpt1 push (or "
        "python -m hf_gpt1.commands.push)."
    )
