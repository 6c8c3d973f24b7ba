# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""transformers' own common tests (`ModelTesterMixin`, `ConfigTester`), loaded from the source distribution of the
installed transformers version.

The two files are fetched from the package index (`pip download --no-binary :all:`) once per version and cached
outside the repository. They import three modules the source distribution does not ship (`tests/exporters`,
`tests/generation`, `tests/utils`); stand-ins take their place, each saying where this project tests what the real
one would.
"""

import importlib
import subprocess
import sys
import tarfile
import tempfile
import types
from pathlib import Path

import transformers

SUITE_FILES = ("test_modeling_common.py", "test_configuration_common.py")
PACKAGE = "transformers_common_tests"


class ExportTesterMixin:
    """Stand-in for transformers' `tests/exporters/test_export.py` mixin (not in the source distribution): GPT-1's
    `torch.export` (dynamic shapes) and ONNX exports are tested against onnxruntime in tests/test_export.py."""


class GenerationTesterMixin:
    """Stand-in for transformers' `tests/generation/test_utils.py` mixin (not in the source distribution): GPT-1's
    generation is tested in tests/test_modeling_gpt1.py and tests/test_pipelines.py."""


# transformers 5's `tests/utils/test_configuration_utils.py`: a non-default value for each argument every config takes.
CONFIG_COMMON_KWARGS = {
    "return_dict": False,
    "output_hidden_states": True,
    "output_attentions": True,
    "dtype": "float16",
    "chunk_size_feed_forward": 5,
    "architectures": ["BertModel"],
    "id2label": {0: "label"},
    "label2id": {"label": "0"},
    "problem_type": "regression",
}


def cache_dir() -> Path:
    return Path.home() / ".cache" / "hf_gpt1" / f"transformers-{transformers.__version__}-tests"


def fetch_suite(timeout: float = 300) -> Path:
    """The folder holding SUITE_FILES for the installed transformers; raises RuntimeError saying why it cannot."""
    folder = cache_dir()
    if all((folder / name).is_file() for name in SUITE_FILES):
        return folder
    version = transformers.__version__
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "--quiet"]
        command += [f"transformers=={version}", "-d", tmp]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the package index did not answer within {timeout:.0f} s") from None
        archives = list(Path(tmp).glob("transformers-*.tar.gz"))
        if done.returncode != 0 or not archives:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"`pip download transformers=={version}` (source) failed: {last}")
        staging = Path(tmp) / "suite"
        staging.mkdir()
        with tarfile.open(archives[0]) as archive:
            for name in SUITE_FILES:
                member = archive.extractfile(f"transformers-{version}/tests/{name}")
                (staging / name).write_bytes(member.read())
        # test_configuration_common runs `direct_transformers_import` on its own folder, which reads an __init__.py.
        (staging / "__init__.py").write_text("")
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            staging.rename(folder)  # whole or not at all; a concurrent fetch that won leaves its copy
        except OSError:
            if not all((folder / name).is_file() for name in SUITE_FILES):
                raise
    return folder


def _module(name: str, **attributes) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    module.__path__ = []  # a package, so that submodules can be registered below it
    return module


def load_suite() -> tuple[types.ModuleType, types.ModuleType]:
    """Imports (test_modeling_common, test_configuration_common) from the fetched files with the stand-ins in place."""
    folder = fetch_suite()
    if PACKAGE not in sys.modules:
        package = _module(PACKAGE)
        package.__path__ = [str(folder)]
        standins = {
            "exporters": _module(f"{PACKAGE}.exporters"),
            "exporters.test_export": _module(f"{PACKAGE}.exporters.test_export", ExportTesterMixin=ExportTesterMixin),
            "generation": _module(f"{PACKAGE}.generation"),
            "generation.test_utils": _module(
                f"{PACKAGE}.generation.test_utils", GenerationTesterMixin=GenerationTesterMixin
            ),
            "utils": _module(f"{PACKAGE}.utils"),
            "utils.test_configuration_utils": _module(
                f"{PACKAGE}.utils.test_configuration_utils", config_common_kwargs=CONFIG_COMMON_KWARGS
            ),
        }
        sys.modules[PACKAGE] = package
        sys.modules.update({f"{PACKAGE}.{name}": module for name, module in standins.items()})
    modeling = importlib.import_module(f"{PACKAGE}.test_modeling_common")
    configuration = importlib.import_module(f"{PACKAGE}.test_configuration_common")
    return modeling, configuration
