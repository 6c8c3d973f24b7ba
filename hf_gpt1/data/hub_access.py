# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The one place that turns "the Hugging Face Hub could not be reached" into a line naming what was asked for, why it
failed (offline mode or no connection) and the local way to do without it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["HubUnreachable", "hub_access"]

# Raised by huggingface_hub, transformers, datasets, httpx and requests when the Hub is not there; matched by name so
# that no client library has to be imported to recognise its error.
_UNREACHABLE = {
    "OfflineModeIsEnabled",
    "LocalEntryNotFoundError",
    "ConnectionError",
    "ConnectError",
    "ConnectTimeout",
    "ReadTimeout",
    "TimeoutException",
}
_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")


class HubUnreachable(OSError):
    """The Hub was needed and could not be reached; the message names the flag or call and the local alternative."""


def _unreachable(err: BaseException) -> bool:
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if any(cls.__name__ in _UNREACHABLE for cls in type(err).__mro__):
            return True
        err = err.__cause__ or err.__context__
    return False


def _reason() -> str:
    offline = [name for name in _OFFLINE_VARIABLES if os.environ.get(name, "").upper() in ("1", "ON", "YES", "TRUE")]
    return f"offline mode: {offline[0]}=1" if offline else "no connection to huggingface.co"


@contextmanager
def hub_access(what: str, fix: str) -> Iterator[None]:
    """Re-raises a failure to reach the Hub inside the block as `HubUnreachable`: "`what`: the Hugging Face Hub cannot
    be reached (`reason`); `fix`." Any other error passes through unchanged."""
    try:
        yield
    except Exception as err:
        if not _unreachable(err):
            raise
        raise HubUnreachable(f"{what}: the Hugging Face Hub cannot be reached ({_reason()}); {fix}.") from err
