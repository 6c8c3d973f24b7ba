# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Fixtures the data-layer tests share."""

from __future__ import annotations

import pytest


@pytest.fixture
def own_registry(monkeypatch):
    """Tasks declared by a test go into copies of the registries (and scores with `monkeypatch.setitem`)."""
    from hf_gpt1.data import tasks

    for name in ("TASKS", "_BY_NAME"):
        monkeypatch.setattr(tasks, name, dict(getattr(tasks, name)))
