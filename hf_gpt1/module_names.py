# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Module attributes served from elsewhere: public names imported on first use (`lazy_names`). (The names that moved
and warned for one release, `moved_names`, went in 0.6.0 with them: CHANGELOG.md.)"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any

__all__ = ["lazy_names"]


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
