"""Tools around a model: converting the original release (`convert`), pushing to the Hub with a model card (`hub`),
zero-shot evaluation (`zero_shot`)."""
