# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Reading the YAML and JSON files a user writes (argument files, task files) strictly: one meaning per file.

A key given twice is refused (YAML and JSON keep the last silently); YAML anchors, aliases and explicit tags are
refused while the file is parsed, before anything is built: an alias bomb never expands and a `!!python/...` tag is
never constructed. Each refusal is one line naming the file and the line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["load_strict"]


def load_strict(path: str | os.PathLike) -> Any:
    """The value of a `.json`, `.yaml` or `.yml` file.

    Raises:
        `ValueError`: The file is not valid JSON / YAML, gives a key twice, or uses a YAML anchor, alias or tag; the
            message names the file, the line and the fix.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8-sig")  # a byte-order mark (some Windows editors write one) is no text
    if path.suffix == ".json":
        try:
            return json.loads(text, object_pairs_hook=lambda pairs: _unique(pairs, path))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{err.lineno}: not valid JSON ({err.msg}).") from None
    return _load_yaml(text, path)


def _unique(pairs: list[tuple[str, Any]], path: Path) -> dict:
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"{path}: {key!r} is given twice; keep one.")
        seen[key] = value
    return seen


def _load_yaml(text: str, path: Path) -> Any:
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            event = self.peek_event()
            line = event.start_mark.line + 1
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise ValueError(f"{path}:{line}: YAML anchors and aliases (&name, *name) are not read; write values.")
            if getattr(event, "tag", None) is not None:  # written in the file: `!!python/...`, `!!str`, `!x`
                raise ValueError(f"{path}:{line}: YAML tags ({event.tag}) are not read; write a plain value.")
            return super().compose_node(parent, index)

        def construct_mapping(self, node, deep=False):
            keys = [self.construct_object(key, deep=deep) for key, _ in node.value]
            for i, key in enumerate(keys):
                if key in keys[:i]:
                    line = node.value[i][0].start_mark.line + 1
                    raise ValueError(f"{path}:{line}: {key!r} is given twice; keep one.")
            return super().construct_mapping(node, deep=deep)

    try:
        return yaml.load(text, Loader=StrictLoader)  # noqa: S506 - a SafeLoader that also refuses tags and aliases
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ValueError(f"{where}: not valid YAML ({getattr(err, 'problem', None) or err}).") from None
