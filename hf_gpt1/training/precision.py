# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The weights' dtype of a training run, and the optimizer that keeps bf16 weights exact: [`MasterWeightOptimizer`].

Under `--bf16` with fp32 weights, autocast casts every weight to bf16 again at every use, every step (on an H200, 16%
of a GPT-1 pre-training step). With bf16 weights the model runs in bf16 without those casts, and the optimizer updates
fp32 master copies, so updates far smaller than a bf16 weight's spacing (a learning rate of 6.25e-5 times Adam's
normalised step is one) still accumulate; the bf16 weights are rounded from the masters after each step.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["MasterWeightOptimizer", "master_weight_optimizer", "weights_dtype"]


def weights_dtype(model_dtype: str | None, bf16: bool, engine: str | None = None) -> str:
    """The `--model_dtype` a run trains in: the one given, else bfloat16 under `--bf16` on a CUDA GPU (fp32 master
    weights in the optimizer) and float32 elsewhere (the CPU's `--bf16` is autocast) or under an `engine` that owns
    mixed precision ([`~hf_gpt1.training.launch.precision_engine`]: FSDP, DeepSpeed), which trains fp32 weights."""
    if engine and model_dtype not in (None, "float32"):
        raise ValueError(
            f"--model_dtype {model_dtype} under {engine}: {engine} keeps fp32 weights and computes in bf16 itself "
            "(--bf16, or mixed_precision: bf16 in the accelerate config); leave --model_dtype out."
        )
    if model_dtype is not None:
        return model_dtype
    return "bfloat16" if bf16 and torch.cuda.is_available() and not engine else "float32"


class MasterWeightOptimizer(torch.optim.Optimizer):
    """An optimizer of fp32 master copies of low-precision parameters.

    `param_groups` are the inner optimizer's (a learning-rate scheduler and gradient clipping see one optimizer);
    each step hands the parameters' gradients to the masters in fp32, steps the inner optimizer on them and rounds the
    masters back into the parameters. The masters are part of `state_dict()`, so a resumed run continues from the exact
    fp32 weights.

    Args:
        params: The model's parameters, or parameter groups (as any optimizer takes them).
        optimizer_cls (`type[torch.optim.Optimizer]`): The inner optimizer (Trainer's choice for `--optim`).
        **kwargs: The inner optimizer's arguments.
    """

    def __init__(self, params, optimizer_cls: type[torch.optim.Optimizer], **kwargs: Any):
        groups = list(params)
        if groups and not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self.params = [p for group in groups for p in group["params"]]
        self.masters = [p.detach().float().clone().requires_grad_(p.requires_grad) for p in self.params]
        by_param = dict(zip(map(id, self.params), self.masters))
        master_groups = [{**group, "params": [by_param[id(p)] for p in group["params"]]} for group in groups]
        self.inner = optimizer_cls(master_groups, **kwargs)
        self.defaults = self.inner.defaults
        self.param_groups = self.inner.param_groups
        self.state = self.inner.state

    @torch.no_grad()
    def step(self, closure=None):
        loss = None if closure is None else closure()
        pairs = [(p, m) for p, m in zip(self.params, self.masters) if p.grad is not None]
        for _, master in pairs:  # fp32 gradient buffers, made once and reused (no allocation per step)
            if master.grad is None:
                master.grad = torch.empty_like(master)
        if pairs:
            torch._foreach_copy_([m.grad for _, m in pairs], [p.grad for p, _ in pairs])
        for param, master in zip(self.params, self.masters):  # a parameter without a gradient is not stepped
            if param.grad is None:
                master.grad = None
        self.inner.step()
        torch._foreach_copy_(self.params, self.masters)  # rounded to the parameters' dtype
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        for param in self.params:
            if set_to_none:
                param.grad = None
            elif param.grad is not None:
                param.grad.zero_()

    def state_dict(self) -> dict[str, Any]:
        return {"inner": self.inner.state_dict(), "masters": [m.detach().clone() for m in self.masters]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.inner.load_state_dict(state_dict["inner"])
        with torch.no_grad():
            for master, saved in zip(self.masters, state_dict["masters"]):
                master.copy_(saved)
            torch._foreach_copy_(self.params, self.masters)


def master_weight_optimizer(args, model: torch.nn.Module) -> tuple[type, dict[str, Any]] | None:
    """`Trainer(optimizer_cls_and_kwargs=...)` for a model with bf16 weights: Trainer's optimizer for `args` on fp32
    masters; None for an fp32 model (Trainer's own optimizer). Under FSDP or DeepSpeed, which swap the optimizer's
    parameters for their shards and keep their own fp32 copies, a bf16 model is refused."""
    from transformers import Trainer

    from .launch import precision_engine

    if not any(p.dtype == torch.bfloat16 for p in model.parameters() if p.requires_grad):
        return None
    engine = precision_engine(args)
    if engine:
        raise ValueError(
            f"A model with bf16 weights under {engine}: {engine} keeps fp32 weights and computes in bf16 itself; "
            "load the model in float32 (leave --model_dtype out) and let the launch's mixed precision cast it."
        )
    optimizer_cls, kwargs = Trainer.get_optimizer_cls_and_kwargs(args, model)
    return MasterWeightOptimizer, {"optimizer_cls": optimizer_cls, **kwargs}
