# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The collators that apply GPT-1's task input transforms (the paper's Fig. 1, right) to batches, and the
tokenization step that feeds them.

The per-example transforms themselves (`classification`, `entailment`, `similarity`, `multiple_choice`) live in
`hf_gpt1.formats` and are re-exported here. Data flows one way: a [`GPT1Preprocessor`] (run once through
`datasets.map`, cached) turns each row's texts into token-id *segments* without special tokens; a collator then
inserts `_start_` / `_delimiter_` / `_classify_`, truncates to `max_length`, pads on the right and builds the
attention mask and the auxiliary-LM labels. Keeping the special tokens and truncation out of the cached columns means
one tokenization serves any `max_length`.

Batches are `(batch, seq)` for classification and entailment, `(batch, 2, seq)` for similarity (both orderings) and
`(batch, choices, seq)` for multiple choice.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import datasets
import numpy as np
import pyarrow.compute as pc
import torch
from transformers import PreTrainedTokenizerBase

from ..formats import (
    IGNORE_INDEX,
    SPECIAL_TOKEN_FIELDS,
    check_max_length,
    classification,
    entailment,
    input_format,
    multiple_choice,
    similarity,
)
from ..tokenization_gpt1 import NO_LENGTH_LIMIT
from .kinds import input_kind
from .tasks import FORMATS, TaskSpec, get_task

__all__ = [
    "COLLATORS",
    "GPT1ClassificationCollator",
    "GPT1Collator",
    "GPT1MultipleChoiceCollator",
    "GPT1Preprocessor",
    "GPT1SimilarityCollator",
    "classification",
    "collator_for_format",
    "entailment",
    "multiple_choice",
    "prepare_dataset",
    "rows_to_truncate",
    "segment_lengths",
    "similarity",
]

_C = TypeVar("_C", bound="GPT1Collator")

# ---------------------------------------------------------------------------------------------------------------------
# Collators: features with token-id segments -> padded tensors.
# ---------------------------------------------------------------------------------------------------------------------


@dataclass
class GPT1Collator(ABC):
    """Base of the GPT-1 collators: shared fields, special-token set-up, padding, LM labels and label checks.

    Subclasses say which token-id sequences one feature becomes (one, both orderings, one per choice).
    """

    start_token_id: int
    delimiter_token_id: int
    extract_token_id: int
    pad_token_id: int
    max_length: int | None = None
    pad_to_multiple_of: int | None = None
    num_labels: int | None = None
    return_lm_labels: bool = True

    # Whether the batch is (batch, seq) rather than (batch, sequences per example, seq).
    _one_sequence_per_example: ClassVar[bool] = False
    # Whether labels index the sequences of each example (multiple choice) rather than classes.
    _labels_index_choices: ClassVar[bool] = False
    _required_keys: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self):
        for name in SPECIAL_TOKEN_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative int, got {value!r}.")
        specials = (self.start_token_id, self.delimiter_token_id, self.extract_token_id)
        if len(set(specials)) != 3:
            raise ValueError(f"start/delimiter/extract token ids must differ, got {specials}.")
        check_max_length(self.max_length, 3)
        if self.pad_to_multiple_of is not None:
            if not isinstance(self.pad_to_multiple_of, int) or self.pad_to_multiple_of < 1:
                raise ValueError(f"pad_to_multiple_of must be a positive int, got {self.pad_to_multiple_of!r}.")
            # Padding past max_length would index position embeddings that do not exist.
            if self.max_length is not None and self.max_length % self.pad_to_multiple_of:
                raise ValueError(
                    f"max_length={self.max_length} is not a multiple of pad_to_multiple_of={self.pad_to_multiple_of}:"
                    " padded batches could exceed max_length."
                )
        if self.num_labels is not None and (not isinstance(self.num_labels, int) or self.num_labels < 1):
            raise ValueError(f"num_labels must be a positive int or None, got {self.num_labels!r}.")

    @classmethod
    def from_tokenizer(cls: type[_C], tokenizer: PreTrainedTokenizerBase, **kwargs: Any) -> _C:
        """Build the collator with the special-token ids of `tokenizer`.

        `max_length` defaults to `tokenizer.model_max_length` when the tokenizer sets a real one. Other keyword
        arguments are passed to the constructor.

        Raises:
            `ValueError`: The tokenizer lacks one of `_start_`, `_delimiter_`, `_classify_`, `<pad>`.
        """
        ids = {}
        vocab = tokenizer.get_vocab()
        for name, token in SPECIAL_TOKEN_FIELDS.items():
            if name == "pad_token_id" and tokenizer.pad_token_id is not None:
                ids[name] = tokenizer.pad_token_id
            elif token in vocab:
                ids[name] = vocab[token]
            else:
                raise ValueError(
                    f"The tokenizer has no {token!r} token. Add GPT-1's special tokens with "
                    "hf_gpt1.tokenization_gpt1.add_gpt1_special_tokens(tokenizer, model)."
                )
        if "max_length" not in kwargs and tokenizer.model_max_length < NO_LENGTH_LIMIT:
            kwargs["max_length"] = tokenizer.model_max_length
        return cls(**ids, **kwargs)

    @classmethod
    def from_config(cls: type[_C], config: Any, **kwargs: Any) -> _C:
        """Build the collator with the special-token ids stored in a `GPT1Config`.

        `max_length` defaults to `config.n_positions` and may not exceed it.

        Raises:
            `ValueError`: The config lacks a special-token id, or `max_length > config.n_positions`.
        """
        ids = {name: getattr(config, name, None) for name in SPECIAL_TOKEN_FIELDS}
        missing = [name for name, value in ids.items() if value is None]
        if missing:
            raise ValueError(
                f"The config has no {missing}; set them from the tokenizer "
                "(hf_gpt1.tokenization_gpt1.add_gpt1_special_tokens(tokenizer, model) does)."
            )
        n_positions = config.n_positions
        max_length = kwargs.setdefault("max_length", n_positions)
        if max_length is None or max_length > n_positions:
            raise ValueError(f"max_length={max_length} must be set and at most config.n_positions={n_positions}.")
        return cls(**ids, **kwargs)

    @abstractmethod
    def _sequences(self, feature: Mapping[str, Any], index: int) -> list[list[int]]:
        """The token-id sequences of one example (one for classification, two for similarity, one per choice)."""

    def _ids(self) -> dict[str, int]:
        return {
            "start_token_id": self.start_token_id,
            "delimiter_token_id": self.delimiter_token_id,
            "extract_token_id": self.extract_token_id,
            "max_length": self.max_length,
        }

    def _get(self, feature: Mapping[str, Any], key: str, index: int) -> Any:
        if key not in feature:
            raise KeyError(
                f"Feature {index} has no {key!r} key (keys present: {sorted(feature)}); {type(self).__name__} needs "
                f"{list(self._required_keys)} holding token ids. Tokenize with "
                "hf_gpt1.data.transforms.prepare_dataset (or GPT1Preprocessor); with transformers.Trainer also set "
                "remove_unused_columns=False so these columns reach the collator."
            )
        return feature[key]

    def __call__(self, features: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        """Collate a list of features into a batch.

        Returns:
            `dict[str, torch.Tensor]`: `input_ids` and `attention_mask` (1 real, 0 padding) of shape `(batch, seq)`
            for classification and `(batch, n, seq)` otherwise, `lm_labels` of the same shape (the input ids with
            -100 at position 0 and on padding) unless `return_lm_labels=False`, and `labels` when the features carry
            one (`labels` or `label` key).
        """
        if len(features) == 0:
            raise ValueError("Cannot collate an empty list of features.")
        per_example = [self._sequences(feature, i) for i, feature in enumerate(features)]
        n_sequences = {len(sequences) for sequences in per_example}
        if len(n_sequences) > 1:
            raise ValueError(
                f"Examples of one batch must have the same number of choices, got {sorted(n_sequences)}; group "
                "examples by their number of choices."
            )
        length = max(len(sequence) for sequences in per_example for sequence in sequences)
        if self.pad_to_multiple_of:
            length = -(-length // self.pad_to_multiple_of) * self.pad_to_multiple_of
        shape = (len(features), n_sequences.pop(), length)
        input_ids = torch.full(shape, self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros(shape, dtype=torch.long)
        for i, sequences in enumerate(per_example):
            for j, sequence in enumerate(sequences):
                input_ids[i, j, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
                attention_mask[i, j, : len(sequence)] = 1
        batch = {"input_ids": input_ids, "attention_mask": attention_mask}
        if self.return_lm_labels:
            # Targets are every real token after `_start_` (delimiter and extract included); the model shifts.
            lm_labels = input_ids.masked_fill(attention_mask == 0, IGNORE_INDEX)
            lm_labels[..., 0] = IGNORE_INDEX
            batch["lm_labels"] = lm_labels
        if self._one_sequence_per_example:
            batch = {key: value.squeeze(1) for key, value in batch.items()}
        labels = self._labels(features, shape[1])
        if labels is not None:
            batch["labels"] = labels
        return batch

    def _labels(self, features: Sequence[Mapping[str, Any]], n_sequences: int) -> torch.Tensor | None:
        key = "labels" if "labels" in features[0] else "label"
        values = [feature.get(key) for feature in features]
        if all(value is None for value in values):
            return None
        if any(value is None for value in values):
            raise ValueError(
                f"Features {[i for i, v in enumerate(values) if v is None]} have no {key!r} while others do; drop "
                "unlabelled rows (prepare_dataset(..., drop_unlabeled=True)) before training."
            )
        if not self._labels_index_choices and any(isinstance(v, (list, tuple)) for v in values):
            # one target per class (a label set as 0/1 per class: multi-label), float as BCE takes it
            for i, value in enumerate(values):
                if (
                    not isinstance(value, (list, tuple))
                    or (self.num_labels is not None and len(value) != self.num_labels)
                    or not all((_is_float(v) or _is_int(v)) and math.isfinite(float(v)) for v in value)
                ):
                    raise ValueError(f"Feature {i}: label {value!r} is not a list of {self.num_labels} class targets.")
            return torch.tensor([[float(v) for v in value] for value in values], dtype=torch.float32)
        regression = not self._labels_index_choices and (
            self.num_labels == 1 or (self.num_labels is None and any(_is_float(v) for v in values))
        )
        if regression:
            for i, value in enumerate(values):
                if not (_is_float(value) or _is_int(value)) or not math.isfinite(float(value)):
                    raise ValueError(f"Feature {i}: regression label {value!r} is not a finite number.")
            return torch.tensor([float(v) for v in values], dtype=torch.float32)
        upper = n_sequences if self._labels_index_choices else self.num_labels
        for i, value in enumerate(values):
            if not _is_int(value) or value < 0 or (upper is not None and value >= upper):
                valid = "a non-negative int" if upper is None else f"an int in [0, {upper})"
                raise ValueError(f"Feature {i}: label {value!r} is not {valid}.")
        return torch.tensor([int(v) for v in values], dtype=torch.long)


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_float(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral))


@dataclass
class GPT1ClassificationCollator(GPT1Collator):
    """Collator for single texts (`<s> a <e>`) and text pairs (`<s> a <$> b <e>`, entailment).

    Each feature holds `segment_a` and, for pairs, `segment_b` (token ids without special tokens), and optionally
    `labels`/`label`. Outputs have shape `(batch, seq)`.

    Args:
        start_token_id, delimiter_token_id, extract_token_id, pad_token_id (`int`): Special-token ids; see
            [`~GPT1Collator.from_tokenizer`] / [`~GPT1Collator.from_config`] to take them from a tokenizer/config.
        max_length (`int`, *optional*): Truncate each sequence to this many tokens (special tokens kept). At most the
            model's `n_positions`.
        pad_to_multiple_of (`int`, *optional*): Pad the sequence length to a multiple of this (tensor cores);
            `max_length` must then be a multiple of it too.
        num_labels (`int`, *optional*): 1 makes labels `float32` (regression); >1 checks ids lie in `[0, num_labels)`.
            `None` picks `float32` for float labels and `int64` otherwise.
        return_lm_labels (`bool`, defaults to `True`): Also return `lm_labels` for the auxiliary LM loss.
    """

    _one_sequence_per_example: ClassVar[bool] = True
    _required_keys: ClassVar[tuple[str, ...]] = ("segment_a", "segment_b (pairs only)")

    def _sequences(self, feature: Mapping[str, Any], index: int) -> list[list[int]]:
        a = self._get(feature, "segment_a", index)
        ids = self._ids()
        if "segment_b" in feature:
            return [entailment(a, feature["segment_b"], **ids)]
        ids.pop("delimiter_token_id")
        return [classification(a, **ids)]


@dataclass
class GPT1SimilarityCollator(GPT1Collator):
    """Collator for similarity tasks: both orderings of each pair, shape `(batch, 2, seq)`.

    Features hold `segment_a`, `segment_b` and optionally `labels`/`label` (`float32` with `num_labels=1`, STS-B).
    Arguments as for [`GPT1ClassificationCollator`].
    """

    _required_keys: ClassVar[tuple[str, ...]] = ("segment_a", "segment_b")

    def _sequences(self, feature: Mapping[str, Any], index: int) -> list[list[int]]:
        a, b = (self._get(feature, key, index) for key in self._required_keys)
        return list(similarity(a, b, **self._ids()))


@dataclass
class GPT1MultipleChoiceCollator(GPT1Collator):
    """Collator for multiple choice: one `<s> context <$> answer <e>` per choice, shape `(batch, choices, seq)`.

    Features hold `context` (token ids), `choices` (a list of token-id lists, the same number for every example of a
    batch), optionally `question` (token ids read after the context and kept whole: RACE) and `labels`/`label`, the
    index of the right choice. All choices of a batch are padded to one length.

    Args:
        segment_cap (`int`, *optional*): Cut the context and each answer to this many tokens first, as the original
            code did (`n_ctx // 2 - 2`, 254 for Story Cloze with 512 positions).
        Other arguments as for [`GPT1ClassificationCollator`]; `num_labels` is ignored, labels are choice indices.
    """

    segment_cap: int | None = None

    _labels_index_choices: ClassVar[bool] = True
    _required_keys: ClassVar[tuple[str, ...]] = ("context", "choices")

    def _sequences(self, feature: Mapping[str, Any], index: int) -> list[list[int]]:
        context, choices = (self._get(feature, key, index) for key in self._required_keys)
        question = feature.get("question", ())
        return multiple_choice(context, choices, question=question, segment_cap=self.segment_cap, **self._ids())


COLLATORS: dict[str, type[GPT1Collator]] = {
    cls.__name__: cls for cls in (GPT1ClassificationCollator, GPT1SimilarityCollator, GPT1MultipleChoiceCollator)
}
"""The collator classes by the name a format row gives ([`~hf_gpt1.formats.InputFormat.collator`])."""


def collator_for_format(format: str) -> type[GPT1Collator]:
    """The collator class of a format ([`~hf_gpt1.formats.InputFormat.collator`]).

    Raises:
        `ValueError`: Unknown format; the message lists the valid ones.
    """
    return COLLATORS[input_format(format).collator]


# ---------------------------------------------------------------------------------------------------------------------
# Tokenization step for datasets.map, and the one-line entry point.
# ---------------------------------------------------------------------------------------------------------------------


@dataclass
class GPT1Preprocessor:
    """A `datasets.map(batched=True, with_indices=True)` function that tokenizes a task's texts into segments.

    Output columns: `segment_a` (+ `segment_b` for pair formats) or `context` + `choices` for multiple choice, all
    token ids without special tokens, and `labels` (label ids; floats for regression; `None` for rows without a gold
    label) when the label column exists. Special tokens, truncation and padding are left to the collator.

    Args:
        tokenizer (`PreTrainedTokenizerBase`): Any transformers tokenizer. Special-token strings inside the text are
            tokenized as plain text (`split_special_tokens=True`), so a literal `_classify_` cannot fake a token.
        task (`TaskSpec`): Which columns to read and how labels are named (see `hf_gpt1.data.tasks`).
    """

    tokenizer: PreTrainedTokenizerBase
    task: TaskSpec

    def _tokenize(self, texts: list[str]) -> list[list[int]]:
        if not texts:
            return []
        encoded = self.tokenizer(texts, add_special_tokens=False, split_special_tokens=True, verbose=False)
        return encoded["input_ids"]

    def _column(self, batch: Mapping[str, list], name: str) -> list:
        if name not in batch:
            raise KeyError(
                f"Task {self.task.name!r} needs column {name!r}, but the dataset has {sorted(batch)}. Rename the "
                "column or pass text_columns=/choice_columns=/label_column= to prepare_dataset."
            )
        return batch[name]

    def _texts(self, batch: Mapping[str, list], name: str, indices: Sequence[int]) -> list[str]:
        texts = self._column(batch, name)
        for text, row in zip(texts, indices):
            if not isinstance(text, str):
                raise TypeError(
                    f"Row {row}, column {name!r}: expected text, got {text!r}. Fill or drop such rows first, e.g. "
                    f"dataset.filter(lambda r: r[{name!r}] is not None)."
                )
        return texts

    def __call__(self, batch: Mapping[str, list], indices: Sequence[int] | None = None) -> dict[str, list]:
        """Tokenize one batch of rows (a dict of columns, as `datasets.map(batched=True)` passes it)."""
        task = self.task
        n_rows = len(next(iter(batch.values())))
        indices = range(n_rows) if indices is None else indices
        out = task.inputs.tokenize(self, batch, indices)  # the kind reads its columns
        if task.label_column in batch:
            labels = []
            for value, row in zip(batch[task.label_column], indices):
                try:
                    labels.append(task.label_to_id(value))
                except ValueError as err:
                    raise ValueError(f"Row {row}, column {task.label_column!r}: {err}") from None
            out["labels"] = labels
        return out

    def _choices(self, batch: Mapping[str, list], indices: Sequence[int]) -> list[list[list[int]]]:
        task = self.task
        columns = [self._column(batch, name) for name in task.choice_columns]
        prefixes = self._texts(batch, task.choice_prefix_column, indices) if task.choice_prefix_column else None
        per_row: list[list[str]] = []
        for i, row in enumerate(indices):
            answers: list[str] = []
            for name, column in zip(task.choice_columns, columns):
                # A list-valued column (RACE's `options`) holds all the answers at once.
                values = column[i] if isinstance(column[i], list) else [column[i]]
                for value in values:
                    if not isinstance(value, str):
                        raise TypeError(f"Row {row}, column {name!r}: expected answer text, got {value!r}.")
                answers.extend(values)
            if prefixes is not None:
                answers = [f"{prefixes[i]} {answer}".strip() for answer in answers]
            per_row.append(answers)
        flat = self._tokenize([answer for answers in per_row for answer in answers])
        out, start = [], 0
        for answers in per_row:
            out.append(flat[start : start + len(answers)])
            start += len(answers)
        return out


def _custom_task(
    dataset: datasets.Dataset,
    format: str,
    text_columns: Sequence[str] | None,
    choice_columns: Sequence[str] | None,
    label_column: str,
    label_names: Sequence[str] | None,
) -> TaskSpec:
    if text_columns is None:
        raise ValueError(f"Format {format!r} needs text_columns=(...) naming the dataset's text columns.")
    feature = dataset.features.get(label_column)
    if label_names is None and isinstance(feature, datasets.ClassLabel):
        label_names = feature.names
    if label_names is None and not input_kind(format).labels_are_choices and feature is not None:
        if not (isinstance(feature, datasets.Value) and feature.dtype.startswith("float")):
            raise ValueError(
                f"Column {label_column!r} ({feature}) is neither a ClassLabel nor float: pass label_names=[...] for "
                "classification (ids index it), or cast it to float32 for regression."
            )
    return TaskSpec(
        name=format,
        format=format,
        text_columns=tuple(text_columns),
        label_names=None if label_names is None else tuple(label_names),
        label_column=label_column,
        choice_columns=tuple(choice_columns or ()),
    )


def prepare_dataset(
    dataset: datasets.Dataset | datasets.IterableDataset,
    tokenizer: PreTrainedTokenizerBase,
    task: str | TaskSpec,
    *,
    text_columns: Sequence[str] | None = None,
    choice_columns: Sequence[str] | None = None,
    label_column: str | None = None,
    label_names: Sequence[str] | None = None,
    drop_unlabeled: bool = False,
    num_proc: int | None = None,
    **collator_kwargs: Any,
) -> tuple[datasets.Dataset | datasets.IterableDataset, GPT1Collator]:
    """Tokenize a dataset for a task and build the matching collator: the one line a Trainer script needs. A
    streamed `IterableDataset` is tokenized as it is read.

    ```python
    train, collator = prepare_dataset(load_dataset("nyu-mll/glue", "rte", split="train"), tokenizer, "rte")
    args = TrainingArguments(..., remove_unused_columns=False)  # keep the segment columns for the collator
    Trainer(model, args, train_dataset=train, data_collator=collator)
    ```

    Args:
        dataset (`datasets.Dataset` or `datasets.IterableDataset`): Rows with the task's columns (Hub names, or as
            [`~hf_gpt1.data.files.load_glue_tsv`]
            produces them).
        tokenizer (`PreTrainedTokenizerBase`): Tokenizer with GPT-1's special tokens added.
        task (`str` or `TaskSpec`): A task name (`"rte"`, `"sst-2"`, ...), a `TaskSpec`, or a bare format
            (`"classification"`, `"entailment"`, `"similarity"`, `"multiple_choice"`) for your own data, which then
            needs `text_columns` (and `choice_columns` for multiple choice).
        text_columns, choice_columns, label_column, label_names: Override the task's columns and label names (when
            your copy names them differently); for a bare format `label_names` defaults to the `ClassLabel` names.
        drop_unlabeled (`bool`): Drop rows without a gold label (SNLI's no-consensus pairs) instead of keeping them
            with `labels=None`, which the collator refuses to mix with labelled rows.
        num_proc (`int`, *optional*): Processes for `datasets.map`.
        collator_kwargs: `max_length`, `pad_to_multiple_of`, `segment_cap`, `return_lm_labels`, ... for the collator
            (see [`GPT1ClassificationCollator`]); `max_length` defaults to `tokenizer.model_max_length`.

    Returns:
        `tuple[datasets.Dataset, collator]`: The tokenized dataset (segment columns, `labels`, `length` — the segment
        tokens, which `group_by_length` batching sorts on — and `idx` when the input has it; the raw columns are
        removed) and the collator for it.
    """
    overrides = {
        "text_columns": None if text_columns is None else tuple(text_columns),
        "choice_columns": None if choice_columns is None else tuple(choice_columns),
        "label_column": label_column,
        "label_names": None if label_names is None else tuple(label_names),
    }
    if isinstance(task, str) and task in FORMATS:
        spec = _custom_task(dataset, task, text_columns, choice_columns, label_column or "label", label_names)
    else:
        spec = dataclasses.replace(get_task(task), **{k: v for k, v in overrides.items() if v is not None})
    # A streamed dataset is tokenized as it is read, in the reading process: no worker processes, no progress bar.
    streaming = isinstance(dataset, datasets.IterableDataset)
    if streaming and num_proc not in (None, 1):
        raise ValueError(
            "num_proc applies to a datasets.Dataset; a streamed IterableDataset is tokenized as it is read."
        )
    options = {} if streaming else {"num_proc": num_proc}
    columns = dataset.column_names if dataset.column_names is not None else list(next(iter(dataset)))
    tokenized = dataset.map(
        GPT1Preprocessor(tokenizer, spec),
        batched=True,
        with_indices=True,
        remove_columns=[name for name in columns if name != "idx"],
        **options,
        **({} if streaming else {"desc": f"Tokenizing {spec.name}"}),
    )
    # Filtered after tokenizing, so that a bad row's error names its row number in the input, not in a filtered copy.
    if drop_unlabeled and spec.label_column in columns:  # the rows have `labels`
        tokenized = tokenized.filter(_has_label, input_columns=["labels"], **options)
    collator_kwargs.setdefault("num_labels", spec.num_labels)
    collator = collator_for_format(spec.format).from_tokenizer(tokenizer, **collator_kwargs)
    return tokenized, collator


def _has_label(label: object) -> bool:
    return label is not None


def segment_lengths(dataset: datasets.Dataset, format: str) -> list[np.ndarray]:
    """Each row's segment lengths in tokens, special tokens excluded: `[text]`, `[a, b]`, or `[context, (question,)
    longest answer]` for multiple choice (every answer's sequence is padded to the longest one's). Read from the
    token columns with Arrow, through a filter's index mapping, without turning rows into Python lists."""
    table = dataset.with_format("arrow")[:]

    def lengths(column) -> np.ndarray:
        return pc.list_value_length(column).to_numpy(zero_copy_only=False).astype(np.int64)

    if "choices" in table.column_names:  # multiple choice: the context, the question, the longest answer
        choices = table["choices"].combine_chunks()
        longest = np.zeros(table.num_rows, dtype=np.int64)
        np.maximum.at(longest, pc.list_parent_indices(choices).to_numpy(), lengths(pc.list_flatten(choices)))
        question = [lengths(table["question"])] if "question" in table.column_names else []
        return [lengths(table["context"]), *question, longest]
    return [lengths(table[name]) for name in ("segment_a", "segment_b") if name in table.column_names]


def rows_to_truncate(dataset: datasets.Dataset, format: str, max_length: int, segment_cap: int | None) -> int:
    """How many rows the collator will shorten: a sequence over `max_length` tokens with the format's special tokens,
    or a segment over `segment_cap`."""
    if dataset.num_rows == 0:
        return 0
    segments = segment_lengths(dataset, format)
    cap = max_length if segment_cap is None else segment_cap
    over_cap = np.logical_or.reduce([segment > cap for segment in segments])
    total = sum(np.minimum(segment, cap) for segment in segments) + input_format(format).special_tokens
    return int((over_cap | (total > max_length)).sum())
