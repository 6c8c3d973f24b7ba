# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Module attributes served from elsewhere: public names imported on first use (`lazy_names`), and names that moved,
which the old module keeps answering for one release with a `FutureWarning` naming the new home (`moved_names`)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any

__all__ = ["REMOVED_IN", "lazy_names", "moved_names"]

REMOVED_IN = "0.7"
"""The release that removes the names moved since 0.6.0 (CHANGELOG.md, Deprecated)."""


def moved_names(old: str, homes: Sequence[str], names: Sequence[str] | None = None) -> Callable[[str], Any]:
    """A module `__getattr__` for `old`, whose `names` (default: every public name of `homes`) moved to `homes`:
    each access warns once per place, then returns the object from its new home."""

    def __getattr__(name: str) -> Any:
        for home in homes:
            module = import_module(home)
            if (names is None or name in names) and hasattr(module, name) and not name.startswith("__"):
                warnings.warn(
                    f"{old}.{name} moved to {home}.{name}; the old name is removed in hf_gpt1 {REMOVED_IN}.",
                    FutureWarning,
                    stacklevel=2,
                )
                return getattr(module, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__


def lazy_names(package: str, modules: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """A package `__getattr__` serving the names of `modules` (submodule, relative to `package` -> its public names),
    each imported on first access (so importing the package stays light) and then kept as the package's attribute."""
    homes = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f".{homes[name]}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
