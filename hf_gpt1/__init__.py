"""hf_gpt1: GPT-1 (Radford et al. 2018) as a first-class Hugging Face transformers model.

Importing the package registers the `gpt1` model type with transformers' Auto classes.
"""

from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForMultipleChoice,
    AutoModelForSequenceClassification,
)

from .configuration_gpt1 import GPT1Config
from .modeling_gpt1 import (
    GPT1ClassifierOutput,
    GPT1ForMultipleChoice,
    GPT1ForSequenceClassification,
    GPT1LMHeadModel,
    GPT1Model,
    GPT1PreTrainedModel,
)
from .pipelines import GPT1MultipleChoicePipeline, register_pipelines
from .tasks import TASKS, TaskSpec, get_task, load_glue_tsv
from .tokenization_gpt1 import (
    add_gpt1_special_tokens,
    from_openai_gpt_files,
    load_gpt1_tokenizer,
    original_tokenizer,
    train_gpt1_tokenizer,
)
from .transforms import (
    GPT1ClassificationCollator,
    GPT1MultipleChoiceCollator,
    GPT1Preprocessor,
    GPT1SimilarityCollator,
    prepare_dataset,
)

AutoConfig.register(GPT1Config.model_type, GPT1Config, exist_ok=True)
for _auto, _model in (
    (AutoModel, GPT1Model),
    (AutoModelForCausalLM, GPT1LMHeadModel),
    (AutoModelForSequenceClassification, GPT1ForSequenceClassification),
    (AutoModelForMultipleChoice, GPT1ForMultipleChoice),
):
    _auto.register(GPT1Config, _model, exist_ok=True)
    # save_pretrained then copies the modeling code beside the weights (trust_remote_code loading).
    _model.register_for_auto_class(_auto.__name__)
GPT1Config.register_for_auto_class()
register_pipelines()  # pipeline("multiple-choice", model=...)

__version__ = "0.1.0"

__all__ = [
    "TASKS",
    "GPT1ClassificationCollator",
    "GPT1MultipleChoiceCollator",
    "GPT1MultipleChoicePipeline",
    "GPT1Preprocessor",
    "GPT1SimilarityCollator",
    "TaskSpec",
    "add_gpt1_special_tokens",
    "from_openai_gpt_files",
    "get_task",
    "load_glue_tsv",
    "load_gpt1_tokenizer",
    "original_tokenizer",
    "prepare_dataset",
    "train_gpt1_tokenizer",
    "GPT1ClassifierOutput",
    "GPT1Config",
    "GPT1ForMultipleChoice",
    "GPT1ForSequenceClassification",
    "GPT1LMHeadModel",
    "GPT1Model",
    "GPT1PreTrainedModel",
]
