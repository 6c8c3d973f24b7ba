# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Reading the YAML and JSON files a user writes strictly: one meaning per file. The one owner of that reading.

Every JSON or YAML file a user writes or hands over goes through here: argument files, task files, the GLUE server's
scores (`--glue_test_results`), data files and corpora (`.json`, `.jsonl`), the original release's `params_shapes.json`
and encoder. A UTF-8 byte-order mark (some Windows editors write one) is no text. A key given twice is refused (YAML
and JSON keep the last silently); YAML anchors, aliases and explicit tags are refused while the file is parsed, before
anything is built: an alias bomb never expands and a `!!python/...` tag is never constructed. Each refusal is one line
naming the file (and the line where the parser knows it).

The files hf_gpt1 writes for itself (run records, results, checkpoint markers) are read where they are owned.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["DuplicateKeyError", "StrictJSONError", "check_json_keys", "load_strict", "loads_strict", "read_json"]

BYTE_ORDER_MARK = "\ufeff"


class DuplicateKeyError(ValueError):
    """A JSON object that gives `key` twice."""

    def __init__(self, key: str):
        super().__init__(f"{key!r} is given twice; keep one")
        self.key = key


class StrictJSONError(ValueError):
    """A JSON file that is not read: `str()` is the one line naming the file (and the line); `reason` the problem
    alone, for a caller's own message."""

    def __init__(self, path: str | os.PathLike, reason: str, line: int | None = None):
        super().__init__(f"{path}{f':{line}' if line else ''}: {reason}.")
        self.path, self.reason, self.line = Path(path), reason, line


def _unique(pairs: list[tuple[str, Any]]) -> dict:
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKeyError(key)
        seen[key] = value
    return seen


def loads_strict(text: str | bytes) -> Any:
    """`json.loads(text)` with one meaning: a leading byte-order mark is skipped, a key given twice in an object is
    refused.

    Raises:
        `json.JSONDecodeError`: Not JSON (its position, for the caller's message).
        `DuplicateKeyError`: A key given twice.
    """
    if isinstance(text, str):
        text = text.removeprefix(BYTE_ORDER_MARK)
    return json.loads(text, object_pairs_hook=_unique)  # bytes: json detects UTF-8 with or without the mark


def read_json(path: str | os.PathLike) -> Any:
    """The value of a JSON file a user wrote, whatever its name ends with.

    Raises:
        `OSError`: The file cannot be read.
        `StrictJSONError`: Not UTF-8 text, not JSON (the line named) or a key given twice (the key named).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise StrictJSONError(path, f"not UTF-8 text ({err.reason} at byte {err.start}); save it as UTF-8") from None
    try:
        return loads_strict(text)
    except json.JSONDecodeError as err:
        raise StrictJSONError(path, f"not valid JSON ({err.msg})", err.lineno) from None
    except DuplicateKeyError as err:
        raise StrictJSONError(path, str(err)) from None


def check_json_keys(text: str, path: str | os.PathLike) -> None:
    """Refuses a JSON or JSON Lines data file (`text`) that gives a key twice in one object, naming the key (and the
    line of a JSON Lines file). Anything else wrong is left to the reader of the rows, whose message names it.

    Raises:
        `StrictJSONError`: A key given twice.
    """
    try:
        loads_strict(text)  # one document (a list of rows, ...)
        return
    except DuplicateKeyError as err:
        raise StrictJSONError(path, str(err)) from None
    except json.JSONDecodeError:
        pass  # JSON Lines, or not JSON: each line on its own
    for number, line in enumerate(text.removeprefix(BYTE_ORDER_MARK).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            loads_strict(line)
        except DuplicateKeyError as err:
            raise StrictJSONError(path, str(err), number) from None
        except json.JSONDecodeError:
            continue


def load_strict(path: str | os.PathLike) -> Any:
    """The value of a `.json`, `.yaml` or `.yml` file.

    Raises:
        `ValueError`: The file is not valid JSON / YAML, gives a key twice, or uses a YAML anchor, alias or tag; the
            message names the file, the line and the fix.
    """
    path = Path(path)
    if path.suffix == ".json":
        return read_json(path)
    text = path.read_text(encoding="utf-8-sig")  # a byte-order mark (some Windows editors write one) is no text
    return _load_yaml(text, path)


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
