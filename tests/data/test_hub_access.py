# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The one place a Hub that cannot be reached becomes one line (hf_gpt1.data.hub_access): what was asked for, why it
failed, and the local way to do without it; any other error passes through as it is."""

from __future__ import annotations

import pytest

from hf_gpt1.data.hub_access import HubUnreachable, hub_access


class OfflineModeIsEnabled(ConnectionError):
    """Named as huggingface_hub's error is: recognised by its name, as the clients' errors are."""


def test_an_unreachable_hub_is_one_line_naming_the_ask_the_reason_and_the_fix(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnreachable) as raised:
        with hub_access("--model_name_or_path me/model", "give a local folder"):
            raise OfflineModeIsEnabled("offline")
    assert str(raised.value) == (
        "--model_name_or_path me/model: the Hugging Face Hub cannot be reached (offline mode: HF_HUB_OFFLINE=1); "
        "give a local folder."
    )
    assert isinstance(raised.value.__cause__, OfflineModeIsEnabled)


def test_a_failure_caused_by_an_unreachable_hub_is_recognised_through_its_cause(monkeypatch):
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(HubUnreachable, match=r"\(no connection to huggingface.co\); use --local\.$"):
        with hub_access("pull", "use --local"):
            try:
                raise ConnectionError("refused")
            except ConnectionError as err:
                raise OSError("could not load") from err


def test_any_other_error_passes_through_unchanged():
    error = ValueError("not a Hub problem")
    with pytest.raises(ValueError) as raised:
        with hub_access("pull", "use --local"):
            raise error
    assert raised.value is error
