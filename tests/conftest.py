"""Shared test set-up: offline hub, deterministic seeds, tiny configs and the ../shared/data location."""

import os

# Before transformers/datasets/evaluate are imported anywhere: the Hub is unreachable here, and without these each
# hub call retries for ~23 s before failing.
for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def shared_data(*parts: str) -> Path:
    """Path under ../shared/data, or skip the test with the reason when that real data is absent (a user's clone)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data {path} is absent (it lives in ../shared/data beside the repo, never in it)")
    return path


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running test, excluded from the CI fast suite (-m 'not slow')")
