# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The package entry (hf_gpt1/__init__.py): registration with transformers' Auto classes on import, everything that
needs datasets or the training stack loaded only on first use."""

import json
import subprocess
import sys

import pytest

from tests.utils import REPO_ROOT

# What each module may import, checked in one fresh interpreter: each check runs in a forked child of it, at the point
# of the parent's imports it needs (a bare interpreter, then torch and transformers, then hf_gpt1), and reports the
# heavy modules its import added. One interpreter start instead of one per check.
IMPORT_CHECKS = r"""
import json, os, sys, types
HEAVY = ("torch", "transformers", "datasets", "numpy", "accelerate", "evaluate", "pandas", "sklearn", "spacy",
         "matplotlib", "peft", "trl", "onnx")


def child(check):
    read, write = os.pipe()
    if os.fork() == 0:
        os.close(read)
        try:
            result = check()
        except BaseException as err:  # a failed check is a result, not a dead test
            result = f"{type(err).__name__}: {err}"
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.wait()
    return json.loads(b"".join(chunks))


def added_by(action):
    before = set(sys.modules)
    action()
    return sorted({name.split(".")[0] for name in set(sys.modules) - before} & set(HEAVY))


def tasks_alone():  # the package's __init__ kept out of the way: hf_gpt1 an empty package
    sys.modules["hf_gpt1"] = types.ModuleType("hf_gpt1")
    sys.modules["hf_gpt1"].__path__ = ["hf_gpt1"]
    return added_by(lambda: __import__("hf_gpt1.data.tasks"))


def formats_as_remote_code():  # loaded from its file, as transformers' remote-code loader does
    import importlib.util
    spec = importlib.util.spec_from_file_location("formats", "hf_gpt1/formats.py")
    module = sys.modules["formats"] = importlib.util.module_from_spec(spec)
    return added_by(lambda: spec.loader.exec_module(module))


results = {"hf_gpt1.data.tasks": child(tasks_alone), "hf_gpt1.formats (remote code)": child(formats_as_remote_code)}
import torch, transformers
from transformers import AutoTokenizer, Pipeline, PreTrainedModel  # what registering any model costs


def package():
    added = added_by(lambda: __import__("hf_gpt1"))
    import hf_gpt1
    from transformers import AutoConfig
    from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING
    assert AutoConfig.for_model("gpt1").model_type == "gpt1" and hf_gpt1.GPT1Config in TOKENIZER_MAPPING
    hf_gpt1.prepare_dataset  # a lazy name: loads hf_gpt1.data.transforms (and datasets) now
    assert "datasets" in sys.modules
    return added


results["hf_gpt1"] = child(package)
import hf_gpt1
for module in COMMANDS:
    results[module] = child(lambda: added_by(lambda: __import__(module)) + sorted(
        {"transformers.trainer"} & set(sys.modules)))
print(json.dumps(results))
"""

# The commands' modules, each imported alone after `hf_gpt1`: the table and the tools load no Trainer, and those that
# read no dataset load neither `datasets` nor `evaluate`.
COMMAND_IMPORTS = {
    "hf_gpt1.commands": ("transformers.trainer", "datasets", "evaluate"),
    "hf_gpt1.commands.convert": ("transformers.trainer", "datasets", "evaluate"),
    "hf_gpt1.commands.push": ("transformers.trainer", "datasets", "evaluate"),
    "hf_gpt1.commands.zero_shot": ("transformers.trainer",),
    "hf_gpt1.commands.reproduce": ("transformers.trainer", "evaluate"),
}


def test_each_module_imports_only_what_it_needs():
    """`hf_gpt1.data.tasks` imports neither torch nor transformers; `hf_gpt1/formats.py`, which ships as remote code,
    only the standard library; `import hf_gpt1` registers the model with the Auto classes and loads none of the heavy
    packages (`datasets` only on first use of a lazy name); each command module loads no more than it uses."""
    code = IMPORT_CHECKS.replace("COMMANDS", repr(list(COMMAND_IMPORTS)))
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.splitlines()[-1])
    assert results.pop("hf_gpt1.data.tasks") == []
    assert results.pop("hf_gpt1.formats (remote code)") == []
    # beyond the transformers modules the model uses (and what those import): none of the heavy packages
    assert set(results.pop("hf_gpt1")) <= {"transformers"}, "import hf_gpt1 loaded heavy packages"
    for module, banned in COMMAND_IMPORTS.items():
        assert not set(results[module]) & set(banned), (module, results[module])


def test_unknown_attribute_is_an_attribute_error():
    import hf_gpt1

    try:
        hf_gpt1.not_a_name  # noqa: B018
    except AttributeError as err:
        assert "has no attribute 'not_a_name'" in str(err)
    else:
        raise AssertionError("expected an AttributeError")


def test_the_package_declares_one_version_and_no_torch_cap():
    """`pip install hf_gpt1` never replaces a user's newer torch, and setup.py reads `hf_gpt1.__version__`."""
    import re
    import subprocess

    import hf_gpt1
    from tests.utils import REPO_ROOT

    out = subprocess.run(
        [sys.executable, "setup.py", "--version"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == hf_gpt1.__version__
    source = (REPO_ROOT / "setup.py").read_text()
    torch_requirement = re.search(r'"torch(?![a-z])([^"]*)"', source)[1]
    assert "<" not in torch_requirement and "==" not in torch_requirement, torch_requirement


def test_every_source_file_carries_the_licence_header():
    """Apache-2.0 (LICENSE), stated in every tracked Python and shell file: remote code copied beside a model
    included."""
    tracked = subprocess.run(
        ["git", "ls-files", "*.py", "*.sh", ".ci/run"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked
    missing = [p for p in tracked if "SPDX-License-Identifier: Apache-2.0" not in (REPO_ROOT / p).read_text()[:300]]
    assert not missing, missing
    assert (REPO_ROOT / "LICENSE").read_text().startswith("Copyright 2026 The hf_gpt1 authors.")


# The names of the fixture's modules that 0.6.0 removed, as their FutureWarnings said it would (CHANGELOG.md, Removed).
REMOVED_IN_0_6 = {
    "hf_gpt1.tools.reproduce": {"main"},  # hf_gpt1.commands.reproduce.main
    "hf_gpt1.training.cli": None,  # the whole module: hf_gpt1.commands.command_line, hf_gpt1.training.flags
    "hf_gpt1.training.results": {"log_once"},  # hf_gpt1.training.launch.quiet_replicas
}


def test_every_public_name_before_0_6_answers_unless_0_6_removed_it():
    """Every name in a module's `__all__` before the first release (c80138a; the list is read from its sources into
    tests/fixtures/public_names_c80138a.json) still answers from that module, except those 0.6.0 removed (the
    moved names that warned for one release): those are gone, as a wrong name is."""
    import importlib
    import json

    from tests.utils import REPO_ROOT

    names = json.loads((REPO_ROOT / "tests" / "fixtures" / "public_names_c80138a.json").read_text())
    missing, kept = [], []
    for module, public in names.items():
        removed = REMOVED_IN_0_6.get(module, set())
        if removed is None:
            with pytest.raises(ModuleNotFoundError):
                importlib.import_module(module)
            continue
        for name in public:
            answers = hasattr(importlib.import_module(module), name)
            if name in removed and answers:
                kept.append(f"{module}.{name}")
            elif name not in removed and not answers:
                missing.append(f"{module}.{name}")
    assert not missing and not kept, (missing, kept)


def test_the_changelog_has_a_section_for_this_version():
    """A version bump without its CHANGELOG.md entry fails here: `## [<__version__>] - <YYYY-MM-DD>` with at least one
    of Keep a Changelog's headings under it, below `## [Unreleased]`, and the README links the changelog."""
    import re

    import hf_gpt1

    text = (REPO_ROOT / "CHANGELOG.md").read_text()
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    titles = [section.split("\n", 1)[0] for section in sections]
    assert titles[0] == "[Unreleased]", titles
    version = re.escape(hf_gpt1.__version__)
    ours = [s for s in sections if re.match(rf"\[{version}\] - \d{{4}}-\d{{2}}-\d{{2}}\n", s)]
    assert len(ours) == 1, f"CHANGELOG.md has no section ## [{hf_gpt1.__version__}] - YYYY-MM-DD"
    assert re.search(r"^### (Added|Changed|Deprecated|Removed|Fixed|Security)$", ours[0], re.M), ours[0][:300]
    assert "(CHANGELOG.md)" in (REPO_ROOT / "README.md").read_text()
