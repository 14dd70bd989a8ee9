"""Training tokens per second: our GPT (explicit and fused attention) vs a stack of torch's layers.

    .venv/bin/python benchmarks/bench_transformer.py [--repeats 7] [--threads 1]

Three models of the same size trained on the same random batches in the same run, each step
timed (forward, backward, AdamW step), median over the steps after a warm-up:

- ``ours, fused``: course_lib.transformer.GPT with torch's F.scaled_dot_product_attention;
- ``ours, explicit``: the same weights with softmax(q k^T / sqrt(d)) v written out;
- ``torch layers``: embeddings + nn.TransformerEncoderLayer(norm_first=True, activation="gelu")
  with a causal mask, the decoder-only equivalent of nn.TransformerDecoderLayer (which would
  add a cross-attention that a GPT does not have) + final LayerNorm + linear head.

Prints medians and ratios to the torch stack; machines are shared, so compare the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from course_lib.transformer import GPT, GPTConfig


class TorchStack(nn.Module):
    def __init__(self, c: GPTConfig):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(c.vocab_size, c.d_model), nn.Embedding(c.block_size, c.d_model)
        layer = nn.TransformerEncoderLayer(
            c.d_model, c.n_heads, c.d_ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, c.n_layers, enable_nested_tensor=False)
        self.ln_f, self.lm_head = nn.LayerNorm(c.d_model), nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(c.block_size))

    def forward(self, idx, targets):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
        x = self.blocks(x, mask=self.mask[:T, :T], is_causal=True)
        logits = self.lm_head(self.ln_f(x))
        return logits, nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())


def tokens_per_second(model, batches, warmup=2):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    times = []
    for i, (x, y) in enumerate(batches):
        start = time.perf_counter()
        loss = model(x, y)[1]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return x.numel() / statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed steps per model (after 2 warm-up steps)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    for c, B in [
        (GPTConfig(vocab_size=71, block_size=128, n_layers=4, n_heads=4, d_model=128), 16),
        (GPTConfig(vocab_size=71, block_size=256, n_layers=2, n_heads=4, d_model=64), 16),
    ]:
        g = torch.Generator().manual_seed(0)
        batches = [(torch.randint(0, 71, (B, c.block_size), generator=g),) * 2 for _ in range(args.repeats + 2)]
        torch.manual_seed(0)
        ours = GPT(c)
        results = {}
        # interleave the three models, twice, so a burst of load elsewhere hits all of them
        for _ in range(2):
            for name in ("ours, fused", "ours, explicit", "torch layers"):
                if name == "torch layers":
                    model = TorchStack(c)
                else:
                    model = ours
                    model.fused = name == "ours, fused"
                results.setdefault(name, []).append(tokens_per_second(model, batches))
        med = {k: statistics.median(v) for k, v in results.items()}
        print(f"\n{c.n_layers} layers, C={c.d_model}, {c.n_heads} heads, T={c.block_size}, batch {B}:")
        for name, v in med.items():
            print(f"  {name:15s} {v:9,.0f} tokens/s   x{v / med['torch layers']:.2f} of torch layers")


if __name__ == "__main__":
    main()
