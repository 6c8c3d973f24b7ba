# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""CI's smoke run of the small-scale experiment driver (recipes/experiments/small_scale.py), tiny sizes."""

import importlib.util
import json
import sys

import pytest
import yaml

from tests.utils import REPO_ROOT, shared_data

pytestmark = pytest.mark.slow  # the full tier (scripts/test.sh --all): an experiment run end to end


def load_driver(monkeypatch):
    spec = importlib.util.spec_from_file_location("small_scale", REPO_ROOT / "recipes/experiments/small_scale.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "small_scale", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_smoke_experiment_writes_report_json_and_plots(tmp_path, monkeypatch):
    data_root = shared_data()
    config = yaml.safe_load((REPO_ROOT / "recipes/experiments/smoke.yaml").read_text())
    config.update(output_dir=str(tmp_path / "runs"), data_root=str(data_root), report=str(tmp_path / "RESULTS.md"))
    config_path = tmp_path / "smoke.yaml"
    config_path.write_text(yaml.safe_dump(config))
    driver = load_driver(monkeypatch)
    monkeypatch.setattr(sys, "argv", ["small_scale.py", str(config_path)])
    results = driver.main()

    saved = json.loads((tmp_path / "results" / "smoke.json").read_text())
    assert saved["ablations"].keys() == {"rte", "stsb"}
    for row in saved["ablations"].values():
        assert row.keys() == {"full", "no pre-training", "no aux LM"}
        assert all(cell["n"] == 2 and len(cell["runs"]) == 2 for cell in row.values())
    assert 0 <= saved["ablations"]["rte"]["full"]["mean"] <= 100
    assert [p["layers"] for p in saved["transfer_layers"]["rte"]] == [0, 1, 2]
    assert [p["step"] for p in saved["zero_shot"]] == [0, 4, 8]
    assert saved["pretraining"]["held_out_perplexity"] > 1
    assert results["ablations"] == saved["ablations"]
    report = (tmp_path / "RESULTS.md").read_text()
    assert "| rte | accuracy |" in report and "| stsb | Pearson |" in report
    assert (tmp_path / "results" / "smoke_transfer_layers.png").stat().st_size > 0
    assert (tmp_path / "results" / "smoke_zero_shot.png").stat().st_size > 0
    # A second invocation reuses every finished run (an interrupted experiment resumes where it stopped).
    marker = tmp_path / "runs" / "finetune" / "rte" / "full" / "seed0" / "all_results.json"
    before = marker.stat().st_mtime_ns
    driver.main()
    assert marker.stat().st_mtime_ns == before
