# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The CPU kernels of the training step (hf_gpt1.kernels): the dropout mask, attention with dropout in the inputs'
dtype, and the L1 loss fused with the LM head, each checked against the plain PyTorch composition."""

import pytest
import torch
import torch.nn.functional as F

from hf_gpt1 import kernels


@pytest.mark.parametrize("mode", ["fp32", "bf16", "autocast"])
def test_fused_linear_cross_entropy_matches_plain_loss_and_grads(mode):
    """The fused LM loss (one (M, V) buffer, grads computed in forward) ≡ cross_entropy of the projected logits."""
    dtype = torch.bfloat16 if mode == "bf16" else torch.float32
    hidden = torch.randn(300, 16, dtype=dtype, requires_grad=True)
    weight = (torch.randn(5000, 16) * 0.5).to(dtype).requires_grad_(True)
    targets, token_weights = torch.randint(0, 5000, (300,)), torch.rand(300)
    results = []
    for fn in (
        lambda h, w, t, tw: kernels.linear_cross_entropy(h, [w], t, tw),
        lambda h, w, t, tw: (F.cross_entropy((h @ w.T).float(), t, reduction="none") * tw).sum(),
    ):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mode == "autocast"):
            loss = fn(hidden, weight, targets, token_weights)
        hidden.grad = weight.grad = None
        (0.5 * loss).backward()
        results.append((loss.detach(), hidden.grad, weight.grad))
    (fused, *fused_grads), (plain, *plain_grads) = results
    assert torch.allclose(fused, plain, rtol=1e-6)
    for a, b in zip(fused_grads, plain_grads):
        assert a.dtype == b.dtype
        a, b = a.float(), b.float()
        if mode != "bf16":  # fp32 results: the two sum the chunk products (bf16 under autocast) in different orders
            assert (a - b).abs().max() <= (1e-5 if mode == "fp32" else 1e-4) * b.abs().max()
            continue
        # bf16 results: each is an fp32 sum rounded to bf16 (8 significant bits). Summed in different orders (the
        # kernels and their blocking differ between torch builds), an element at a rounding boundary lands one bf16
        # ulp apart, at most 2⁻⁷ of its magnitude; elements whose sums cancel get the fp32 sums' own bound instead,
        # 1e-4 of the largest (the pre-2.13 torch build measured 2.0e-4 of the largest for one element, one ulp).
        assert ((a - b).abs() <= 2**-7 * b.abs() + 1e-4 * b.abs().max()).all()


def test_cpu_dropout_keeps_each_element_with_probability_1_minus_p_and_rescales():
    x = torch.ones(1_000_000)
    out = kernels.apply_dropout(x, 0.1, training=True)
    kept = out != 0
    assert abs(kept.float().mean().item() - 0.9) < 2e-3  # 6.7 standard deviations of a Binomial(1e6, 0.9) mean
    assert torch.allclose(out[kept], torch.full_like(out[kept], 1 / 0.9))
    assert kernels.apply_dropout(x, 0.1, training=False) is x
    torch.manual_seed(3)
    a = kernels.apply_dropout(x, 0.5, training=True)
    torch.manual_seed(3)
    assert torch.equal(a, kernels.apply_dropout(x, 0.5, training=True))  # seeded like every torch RNG op
    x = torch.randn(64, requires_grad=True)
    out = kernels.apply_dropout(x, 0.3, training=True)
    out.sum().backward()
    assert torch.equal(x.grad, (out != 0) / 0.7)


@pytest.mark.parametrize("p, tolerance", [(0.1, 2e-3), (0.01, 1e-3)])  # two 15-bit halves per draw / one 31-bit draw
def test_cpu_dropout_mask_rate_and_independence(p, tolerance):
    torch.manual_seed(0)
    mask = kernels.cpu_dropout_mask(torch.Size([1000, 1001]), p)  # an odd count: the last draw is half used
    assert mask.shape == (1000, 1001) and mask.dtype == torch.bool
    assert abs(mask.float().mean().item() - p) < tolerance  # > 6 standard deviations of a Binomial(1e6, p) mean
    pairs = mask.flatten()[:1_000_000].view(-1, 2).float()  # the two halves of each 31-bit draw
    assert abs(pairs.prod(1).mean().item() - p * p) < 6 * (p * p / 500_000) ** 0.5  # independent: P(both) = p²
    assert abs(pairs[:, 0].mean().item() - pairs[:, 1].mean().item()) < 2 * tolerance  # both halves drop at rate p


@pytest.mark.parametrize("padded", [False, True])
def test_cpu_dropout_attention_is_eager_attention_with_the_same_mask(padded):
    """The CPU training path equals the eager formula with the dropout mask it drew (re-drawn from the same seed)."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4) for _ in range(3))
    attend = torch.ones(5, 5, dtype=torch.bool).tril()[None, None].repeat(2, 1, 1, 1)  # (B, 1, T, S)
    if padded:
        attend[0, ..., :2] = False  # left padding: keys 0-1 of sequence 0 are never attended (rows 0-1 fully masked)
    torch.manual_seed(1)
    out, _ = kernels.cpu_dropout_attention_forward(None, q, k, v, attend if padded else None, scaling=0.5, dropout=0.3)
    torch.manual_seed(1)
    dropped = kernels.cpu_dropout_mask(torch.Size([2, 3, 5, 5]), 0.3)
    scores = (q @ k.transpose(-1, -2) * 0.5).masked_fill(~attend, torch.finfo(torch.float32).min)
    probs = F.softmax(scores, dim=-1).masked_fill(dropped, 0) / 0.7
    torch.testing.assert_close(out, (probs @ v).transpose(1, 2))


def test_fused_loss_over_several_matrices_normalises_over_all_their_rows():
    """The original's L1 softmax covers tokens, special tokens and positions: targets index the first matrix."""
    hidden = torch.randn(50, 8, requires_grad=True)
    tokens = torch.randn(300, 8, requires_grad=True)
    positions = torch.randn(20, 8, requires_grad=True)
    targets, token_weights = torch.randint(0, 300, (50,)), torch.rand(50)
    fused = kernels.linear_cross_entropy(hidden, [tokens, positions], targets, token_weights)
    fused.backward()
    grads = [t.grad.clone() for t in (hidden, tokens, positions)]
    for t in (hidden, tokens, positions):
        t.grad = None
    plain = (
        F.cross_entropy(hidden @ torch.cat([tokens, positions]).T, targets, reduction="none") * token_weights
    ).sum()
    plain.backward()
    torch.testing.assert_close(fused, plain)
    for got, t in zip(grads, (hidden, tokens, positions)):
        torch.testing.assert_close(got, t.grad, rtol=1e-5, atol=1e-6)
    assert fused > (F.cross_entropy(hidden @ tokens.T, targets, reduction="none") * token_weights).sum()


def test_sdpa_uses_the_cpu_kernel_only_for_cpu_training_with_dropout(monkeypatch):
    calls = []
    monkeypatch.setattr(kernels, "cpu_dropout_attention_forward", lambda *a, **k: calls.append("cpu") or (None, None))
    monkeypatch.setattr(kernels, "_transformers_sdpa", lambda *a, **k: calls.append("sdpa") or (None, None))
    q = torch.randn(1, 2, 3, 4)
    kernels.sdpa_attention_forward(None, q, q, q, None, dropout=0.1, scaling=0.5)
    kernels.sdpa_attention_forward(None, q, q, q, None, dropout=0.0, scaling=0.5)
    assert calls == ["cpu", "sdpa"]


@pytest.mark.parametrize("multiple", [1, 8, 64])
def test_the_blockwise_loss_equals_the_softmax_over_the_concatenated_table(multiple):
    """L1 over the original table as blocks (token rows split at a multiple of `multiple`, position rows) gives the
    loss and gradients of one softmax over the concatenated table, in fp32 to 1e-6, targets in every block included."""
    torch.manual_seed(0)
    hidden = torch.randn(40, 8, dtype=torch.float64).float().requires_grad_(True)
    tokens = torch.randn(101, 8, requires_grad=True)  # 101 rows: 96 aligned to 8 + 5, or 64 + 37
    positions = torch.randn(13, 8, requires_grad=True)
    targets, token_weights = torch.randint(0, 101, (40,)), torch.rand(40)
    targets[:4] = torch.tensor([0, 95, 96, 100])  # both sides of every split
    results = []
    for loss_fn in (
        lambda: kernels.plain_linear_cross_entropy(hidden, [tokens, positions], targets, token_weights, multiple),
        lambda: (
            F.cross_entropy(hidden @ torch.cat([tokens, positions]).T, targets, reduction="none") * token_weights
        ).sum(),
    ):
        loss = loss_fn()
        loss.backward()
        results.append((loss.detach(), *(t.grad.clone() for t in (hidden, tokens, positions))))
        for t in (hidden, tokens, positions):
            t.grad = None
    for blockwise, concatenated in zip(*results):
        assert blockwise.shape == concatenated.shape
        assert (blockwise - concatenated).abs().max() <= 1e-6 * max(1.0, concatenated.abs().max().item())


def _recording_sdpa(seen: list):
    def sdpa(query, key, value, **kwargs):
        seen.append(torch.backends.cuda.cudnn_sdp_enabled())
        return torch.empty_like(query)

    return sdpa


def test_sdpa_off_the_cpu_never_picks_cudnn_attention_and_restores_the_flag(monkeypatch):
    """cuDNN attention builds a graph per new shape on a GPU: our SDPA turns it off for its own call only.
    Meta tensors stand for a GPU's (any device but the CPU takes that path); the CPU is left as it is."""
    seen = []
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", _recording_sdpa(seen))
    assert torch.backends.cuda.cudnn_sdp_enabled()
    for device in ("meta", "cpu"):
        q = torch.empty(1, 2, 3, 4, device=device)
        kernels.sdpa_attention_forward(torch.nn.Module(), q, q, q, None, scaling=0.5)
    assert seen == [False, True]
    assert torch.backends.cuda.cudnn_sdp_enabled()  # restored


def test_sdpa_without_cudnn_traces_in_one_graph_off_the_cpu():
    """Under torch.compile the backend choice goes through `sdpa_kernel`, which the compiler records in its graph."""
    q = torch.empty(1, 2, 3, 4, device="meta")

    def attend(q):
        return kernels.sdpa_attention_forward(torch.nn.Module(), q, q, q, None, scaling=0.5)[0]

    torch._dynamo.reset()
    explanation = torch._dynamo.explain(attend)(q)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert torch.backends.cuda.cudnn_sdp_enabled()
