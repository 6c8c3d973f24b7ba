# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""GLUE metrics (and the other GPT-1 benchmarks) as a local `evaluate` module.

Load it offline with `evaluate.load("<path to this folder>", "<config>")`, or `hf_gpt1.data.metrics.load_metric(task)`.
`evaluate` copies this file alone into its module cache: it imports from the package absolutely (`hf_gpt1.data.tasks`),
never relatively.
"""

import datasets
import evaluate
import numpy as np

from hf_gpt1.data.scores import METRIC_OUTPUTS, SCORES

_CITATION = """\
@inproceedings{wang2019glue,
  title={{GLUE}: A Multi-Task Benchmark and Analysis Platform for Natural Language Understanding},
  author={Wang, Alex and Singh, Amanpreet and Michael, Julian and Hill, Felix and Levy, Omer and Bowman, Samuel R.},
  booktitle={International Conference on Learning Representations},
  year={2019}
}
"""

_DESCRIPTION = """\
The metrics of the GLUE benchmark, as GLUE defines them: Matthews correlation for CoLA and for the 3-class diagnostic
set AX, Pearson and Spearman correlation for STS-B, F1 (of the positive class) and accuracy for MRPC and QQP,
accuracy for the other GLUE tasks.
Any other task picks a kind: `accuracy` (the other benchmarks of the GPT-1 paper: SNLI, SciTail, Story Cloze, RACE;
SWAG), `accuracy_f1`, `matthews_correlation`, `pearson_spearmanr`, `mse_mae` (errors: lower is better) or
`multi_label` (micro and macro F1 and subset accuracy of label sets, one row of 0/1 per class), or a config of its own
(`hf_gpt1.data.scores`).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: predicted label ids (class ids; choice indices for story_cloze/race/swag), or scores for stsb.
    references: gold label ids, or gold scores for stsb.
Returns:
    cola, ax: {"matthews_correlation"}; stsb: {"pearson", "spearmanr"}; mrpc, qqp: {"accuracy", "f1"};
    the others: {"accuracy"}. All values are floats in the metric's natural range (accuracy and F1 in [0, 1]).
Examples:
    >>> glue = evaluate.load("hf_gpt1/metrics/glue", "mrpc")
    >>> glue.compute(predictions=[0, 1, 1], references=[0, 1, 0])
    {'accuracy': 0.6666666666666666, 'f1': 0.6666666666666666}
"""

# The configs, the scores each returns and how each is computed: hf_gpt1's metric table (the installed hf_gpt1's,
# since evaluate runs a copy of this file from its cache; read at each load, so configs added at run time count).


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Glue(evaluate.Metric):
    """GLUE metrics; the config name picks the task."""

    def _info(self):
        if self.config_name not in METRIC_OUTPUTS:
            raise KeyError(f"Unknown GLUE metric config {self.config_name!r}; valid configs: {list(METRIC_OUTPUTS)}.")
        # float64, and no `format="numpy"` (whose formatter casts floats to float32): scores are not rounded before
        # the correlation.
        real = any(SCORES[name].real_valued for name in METRIC_OUTPUTS[self.config_name])
        value = datasets.Value("float64" if real else "int64")
        if any(SCORES[name].label_sets for name in METRIC_OUTPUTS[self.config_name]):
            value = datasets.Sequence(value)  # multi-label: a row of 0/1 per class for each example
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": value, "references": value}),
            codebase_urls=[],
            reference_urls=["https://gluebenchmark.com/"],
        )

    def _compute(self, predictions, references):
        predictions, references = np.asarray(predictions), np.asarray(references)
        return {name: SCORES[name].compute(predictions, references) for name in METRIC_OUTPUTS[self.config_name]}
