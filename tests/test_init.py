# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The package entry (hf_gpt1/__init__.py): registration with transformers' Auto classes on import, everything that
needs datasets or the training stack loaded only on first use."""

import ast
import logging
import subprocess
import sys

import pytest

from tests.utils import REPO_ROOT

PROBE = """
import sys
import torch, transformers
from transformers import AutoTokenizer, Pipeline, PreTrainedModel  # what registering any model costs
before = set(sys.modules)
import hf_gpt1
added = sorted({name.split(".")[0] for name in set(sys.modules) - before})
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer
from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING
assert AutoConfig.for_model("gpt1").model_type == "gpt1"
assert hf_gpt1.GPT1Config in TOKENIZER_MAPPING and "datasets" not in sys.modules
hf_gpt1.prepare_dataset  # a lazy name: loads hf_gpt1.data.transforms (and datasets) now
assert "datasets" in sys.modules
print(added)
"""


def test_import_registers_the_model_and_loads_nothing_heavy():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    # beyond what transformers' model machinery imports anyway: hf_gpt1, transformers modules it uses and what those
    # import (small standard modules, which vary with the transformers version), none of the heavy packages
    added = set(ast.literal_eval(out.stdout.strip()))
    assert {"hf_gpt1", "transformers"} <= added
    heavy = {"datasets", "accelerate", "evaluate", "pandas", "sklearn", "spacy", "matplotlib", "peft", "trl", "onnx"}
    assert not added & heavy, added & heavy


def test_unknown_attribute_is_an_attribute_error():
    import hf_gpt1

    try:
        hf_gpt1.not_a_name  # noqa: B018
    except AttributeError as err:
        assert "has no attribute 'not_a_name'" in str(err)
    else:
        raise AssertionError("expected an AttributeError")


def test_the_package_declares_one_version_and_no_torch_cap():
    """`pip install hf_gpt1` never replaces a user's newer torch, and setup.py reads `hf_gpt1.__version__`."""
    import re
    import subprocess
    import sys

    import hf_gpt1
    from tests.utils import REPO_ROOT

    out = subprocess.run(
        [sys.executable, "setup.py", "--version"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == hf_gpt1.__version__
    source = (REPO_ROOT / "setup.py").read_text()
    torch_requirement = re.search(r'"torch(?![a-z])([^"]*)"', source)[1]
    assert "<" not in torch_requirement and "==" not in torch_requirement, torch_requirement


def test_every_source_file_carries_the_licence_header():
    """Apache-2.0 (LICENSE), stated in every tracked Python and shell file: remote code copied beside a model
    included."""
    tracked = subprocess.run(
        ["git", "ls-files", "*.py", "*.sh", ".ci/run"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked
    missing = [p for p in tracked if "SPDX-License-Identifier: Apache-2.0" not in (REPO_ROOT / p).read_text()[:300]]
    assert not missing, missing
    assert (REPO_ROOT / "LICENSE").read_text().startswith("Copyright 2026 The hf_gpt1 authors.")


def test_every_public_name_of_the_last_release_still_answers():
    """Every name in a module's `__all__` at the last landing (c80138a; the list is read from its sources into
    tests/fixtures/public_names_c80138a.json) still answers from that module: a name that moved or was replaced
    warns (FutureWarning) naming what to use, for one release."""
    import importlib
    import json
    import warnings

    from tests.utils import REPO_ROOT

    names = json.loads((REPO_ROOT / "tests" / "fixtures" / "public_names_c80138a.json").read_text())
    missing = []
    for module, public in names.items():
        for name in public:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                if not hasattr(importlib.import_module(module), name):
                    missing.append(f"{module}.{name}")
    assert not missing


def test_log_once_warns_and_still_quiets_the_replicas():
    from hf_gpt1.training.results import log_once

    class Replica:
        process_index = 1

        @staticmethod
        def get_process_log_level():
            return 40  # logging.ERROR

    from transformers import logging as transformers_logging

    level = transformers_logging.get_verbosity()
    with pytest.warns(FutureWarning, match="log_once moved to hf_gpt1.training.launch.quiet_replicas"):
        log_once(Replica())
    assert logging.getLogger("hf_gpt1").level == 40 and transformers_logging.get_verbosity() == 40
    logging.getLogger("hf_gpt1").setLevel(logging.NOTSET)
    transformers_logging.set_verbosity(level)
