# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""transformers' own common model and config tests, run against the GPT1 classes with a GPT-1 model tester.

`ModelTesterMixin` and `ConfigTester` come from the source distribution of the installed transformers version
(tests/transformers_suite.py fetches and caches them); when the package index cannot be reached the module is skipped
with the reason. Every skip the mixin makes must match a GPT-1 reason in SKIP_REASONS (conftest.py appends it to the
report); a skip without one fails, so a new transformers version's new skips are read, not waved through.
"""

import unittest
from unittest import mock

import pytest
import torch
from transformers.models.auto import modeling_auto
from transformers.utils import logging as transformers_logging

from hf_gpt1 import GPT1Config, GPT1LMHeadModel, GPT1Model
from hf_gpt1.modeling_gpt1 import HEADS
from tests import transformers_suite

try:
    modeling_common, configuration_common = transformers_suite.load_suite()
except RuntimeError as error:
    pytest.skip(f"transformers' common tests are unavailable: {error}", allow_module_level=True)

ModelTesterMixin = modeling_common.ModelTesterMixin
ConfigTester = configuration_common.ConfigTester
ids_tensor = modeling_common.ids_tensor

# The mixin picks inputs and labels per head from transformers' auto-class name tables; GPT-1's heads are entered in
# them for the duration of the tests.
HEAD_TABLES = {
    "MODEL_MAPPING_NAMES": "GPT1Model",
    "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES": "GPT1LMHeadModel",
    "MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES": "GPT1ForSequenceClassification",
    "MODEL_FOR_MULTIPLE_CHOICE_MAPPING_NAMES": "GPT1ForMultipleChoice",
}


# The mixin's skip message (a regular expression) → why it does not apply to GPT-1 or cannot run here.
SKIP_REASONS = {
    r"Do not take a cache as input to forward": (
        "the task heads read each input in one pass and keep no cache (GPT1Model and GPT1LMHeadModel take `cache` and "
        "run this test)"
    ),
    r"requires (accelerator|multiple accelerators|MPS|Flash Attention|deepspeed|the kernels library)": (
        "needs a GPU or a library this CPU-only CI lacks; GPT-1 declares SDPA, flash and flex attention support and "
        "these run where the hardware is"
    ),
    r"test is slow": "compile-for-training on an accelerator; the CPU compile path is tested in tests/test_compile.py",
    r"composite|subconfig|does not support SDPA": (
        "a composite-model test; GPT-1 is one text model without sub-configs (its SDPA/eager dispatch passes "
        "test_sdpa_can_dispatch_non_composite_models)"
    ),
    r"RoPE|rope": "GPT-1 has learned absolute position embeddings, no rotary ones",
    r"sparse experts|router_logits|grouped_mm": "GPT-1 is dense: no experts",
    r"sliding window": "GPT-1 attends to its whole causal context",
    r"TP plan": "GPT-1 declares no tensor-parallel plan (117M parameters fit one device; DDP is the scale-out path)",
    r"No conversion found": "GPT-1's parameter names are openai-gpt's, so loading needs no weight-renaming map",
    r"_keep_in_fp32_modules": "GPT-1 keeps no module in float32",
    r"sequence-to-sequence": "GPT-1 is decoder-only",
    r"position embeddings": "GPT-1's position table is fixed by pre-training (n_positions); it is not resized",
}


class GPT1ModelTester:
    """Tiny GPT-1 configs and task-shaped inputs: `<s>`, text ids, then the extract token the heads read (as built by
    hf_gpt1.data.transforms). The special tokens take low ids so that the common tests' clamping of ids to a resized
    vocabulary keeps them."""

    def __init__(self, parent, batch_size=13, seq_length=7, vocab_size=99, num_choices=4, num_labels=3):
        self.parent = parent
        self.batch_size = batch_size
        self.seq_length = seq_length
        self.vocab_size = vocab_size
        self.hidden_size = 32
        self.num_hidden_layers = 2
        self.num_attention_heads = 4
        self.num_choices = num_choices
        self.num_labels = num_labels
        self.is_training = True

    def get_config(self) -> GPT1Config:
        return GPT1Config(
            vocab_size=self.vocab_size,
            n_positions=64,
            n_embd=self.hidden_size,
            n_layer=self.num_hidden_layers,
            n_head=self.num_attention_heads,
            start_token_id=1,
            delimiter_token_id=2,
            extract_token_id=3,
            num_labels=self.num_labels,
        )

    def prepare_config_and_inputs_for_common(self) -> tuple[GPT1Config, dict]:
        config = self.get_config()
        input_ids = 4 + ids_tensor([self.batch_size, self.seq_length], self.vocab_size - 4)
        input_ids[:, 0] = config.start_token_id
        input_ids[:, -1] = config.extract_token_id
        attention_mask = torch.ones_like(input_ids)
        return config, {"input_ids": input_ids, "attention_mask": attention_mask}


class GPT1ModelTest(ModelTesterMixin, transformers_suite.GenerationTesterMixin, unittest.TestCase):
    all_model_classes = tuple(entry.model for entry in HEADS)
    # The mixin runs this check only on models it dates from 2023 on (by the copyright line); GPT-1's init is complete.
    test_can_init_all_missing_weights_before_2023 = True

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls._tables = [mock.patch.dict(getattr(modeling_auto, t), {"gpt1": name}) for t, name in HEAD_TABLES.items()]
        for table in cls._tables:
            table.start()
        # Some tests read transformers' warnings (the loading report), which clients run earlier may have silenced.
        cls._verbosity = transformers_logging.get_verbosity()
        transformers_logging.set_verbosity_warning()

    @classmethod
    def tearDownClass(cls):
        for table in cls._tables:
            table.stop()
        transformers_logging.set_verbosity(cls._verbosity)
        super().tearDownClass()

    def setUp(self):
        self.model_tester = GPT1ModelTester(self)
        self.config_tester = ConfigTester(self, config_class=GPT1Config, n_embd=36)

    def test_config(self):
        self.config_tester.run_common_tests()

    def test_reverse_loading_mapping(self):
        # GPT-1's conversion (Conv1D-layout checkpoints) transposes weights and keeps their names.
        super().test_reverse_loading_mapping(check_keys_were_modified=False)

    def test_inputs_embeds(self):
        # The task heads find the extract token in `input_ids` and so take no `inputs_embeds` (the mixin would skip
        # the whole test at the first class without them); the decoder and the language model take them.
        with mock.patch.object(self, "all_model_classes", (GPT1Model, GPT1LMHeadModel)):
            super().test_inputs_embeds()
