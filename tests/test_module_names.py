# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Module attributes served from elsewhere (hf_gpt1.module_names): a moved name answers from its new home with one
FutureWarning naming it, and a lazy name is imported on first use and kept."""

from __future__ import annotations

import sys
import types

import pytest

from hf_gpt1.module_names import REMOVED_IN, lazy_names, moved_names


def test_a_moved_name_answers_from_its_new_home_with_a_warning_naming_it():
    getattr_ = moved_names("hf_gpt1.old_home", ["hf_gpt1.errors"])
    with pytest.warns(FutureWarning) as warned:
        from hf_gpt1.errors import TrainingError

        assert getattr_("TrainingError") is TrainingError
    assert str(warned[0].message) == (
        "hf_gpt1.old_home.TrainingError moved to hf_gpt1.errors.TrainingError; "
        f"the old name is removed in hf_gpt1 {REMOVED_IN}."
    )
    with pytest.raises(AttributeError, match="module 'hf_gpt1.old_home' has no attribute 'nothing'"):
        getattr_("nothing")
    only = moved_names("hf_gpt1.old_home", ["hf_gpt1.errors"], names=["PackingError"])
    with pytest.raises(AttributeError):
        only("TrainingError")  # a name not listed as moved is not served


def test_a_lazy_name_is_imported_on_first_use_and_kept_on_the_package(monkeypatch):
    package = types.ModuleType("lazy_standin")
    package.__path__ = []
    monkeypatch.setitem(sys.modules, "lazy_standin", package)
    monkeypatch.setitem(sys.modules, "lazy_standin.errors", sys.modules["hf_gpt1.errors"])
    getattr_ = lazy_names("lazy_standin", {"errors": ["PackingError"]})
    from hf_gpt1.errors import PackingError

    assert getattr_("PackingError") is PackingError and package.PackingError is PackingError
    with pytest.raises(AttributeError, match="module 'lazy_standin' has no attribute 'TrainingError'"):
        getattr_("TrainingError")
