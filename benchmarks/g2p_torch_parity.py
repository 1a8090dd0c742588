"""Same model, same numbers: g2p.py's GRU + attention model rebuilt in PyTorch from minigrad's
state dict, both trained for 20 steps on the same batches; their losses must agree to float32
tolerance.

The PyTorch model below is written from the model's equations (see GRUAttentionG2P in
g2p.py) with torch.nn.GRU (bidirectional), torch.nn.Linear and torch.nn.Embedding, whose
parameter names are those of minigrad's nn, so one state dict loads into both. Dropout is
off (the two libraries draw different random masks), and so is label smoothing; everything
else is the training step of g2p.py: cross-entropy ignoring padding, gradient-norm clipping at
1, Adam with g2p.py's learning-rate schedule.

The trajectory is written to tests/examples/golden/g2p_torch_trajectory.npz together with the
initial weights and the batches, so that tests/examples/test_g2p.py checks minigrad against
PyTorch's numbers without torch installed.

    pip install torch==2.13.0
    python benchmarks/g2p_torch_parity.py          # prints both trajectories, writes the file
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

import _common  # noqa: E402,F401  (before NumPy: limits BLAS threads)

import argparse  # noqa: E402
import math  # noqa: E402
from dataclasses import asdict, replace  # noqa: E402

import numpy as np  # noqa: E402

import g2p  # noqa: E402
import _seq2seq as seq2seq  # noqa: E402
import minigrad as mg  # noqa: E402
import nn  # noqa: E402

GOLDEN = ROOT / "tests" / "examples" / "golden" / "g2p_torch_trajectory.npz"
STEPS = 20
CONFIG = replace(g2p.Config(), embed_dim=8, enc_hidden=16, enc_layers=2, dec_hidden=16,
                 attention_dim=8, dropout=0.0, batch_size=16, lr=1e-2, warmup=0.1,
                 minutes=0.0, steps=STEPS)


def torch_model(config: g2p.Config, n_letters: int, n_phonemes: int):
    """GRUAttentionG2P's equations in PyTorch, parameters named as in minigrad's model."""
    import torch

    class TorchG2P(torch.nn.Module):
        def __init__(self):
            super().__init__()
            E, He, Hd = config.embed_dim, config.enc_hidden, config.dec_hidden
            self.src_embed = torch.nn.Embedding(n_letters, E)
            self.encoder = torch.nn.GRU(E, He, num_layers=config.enc_layers, batch_first=True,
                                        bidirectional=True)
            self.bridge = torch.nn.Linear(2 * He, Hd)
            self.tgt_embed = torch.nn.Embedding(n_phonemes, E, padding_idx=seq2seq.PAD)
            self.decoder = torch.nn.GRU(E, Hd, batch_first=True)
            if config.attention == "dot":
                self.key_proj = torch.nn.Linear(2 * He, Hd, bias=False)
            else:
                self.attention = torch.nn.Module()
                self.attention.w_q = torch.nn.Linear(Hd, config.attention_dim, bias=False)
                self.attention.w_k = torch.nn.Linear(2 * He, config.attention_dim, bias=False)
                self.attention.v = torch.nn.Linear(config.attention_dim, 1, bias=False)
            self.combine = torch.nn.Linear(Hd + 2 * He, Hd)
            self.out = torch.nn.Linear(Hd, n_phonemes)

        def forward(self, letters, tgt_in):
            states, h_n = self.encoder(self.src_embed(letters))          # (B, S, 2He)
            h0 = torch.tanh(self.bridge(torch.cat([h_n[-2], h_n[-1]], dim=-1)))
            h, _ = self.decoder(self.tgt_embed(tgt_in), h0.unsqueeze(0))  # (B, T, Hd)
            if config.attention == "dot":
                keys = self.key_proj(states)
                scores = h @ keys.transpose(1, 2) / math.sqrt(h.shape[-1])   # (B, T, S)
            else:
                a = self.attention
                scores = a.v(torch.tanh(a.w_q(h).unsqueeze(2)
                                        + a.w_k(states).unsqueeze(1))).squeeze(-1)
            context = torch.softmax(scores, dim=-1) @ states
            attended = torch.tanh(self.combine(torch.cat([h, context], dim=-1)))
            return self.out(attended)

    return TorchG2P()


def first_batches(data: g2p.Data, config: g2p.Config, seed: int) -> list[seq2seq.Batch]:
    """The first STEPS batches of g2p.py's first training epoch."""
    plan = seq2seq.same_length_batches([len(w) for w, _ in data.train_pairs],
                                        config.batch_size,
                             np.random.default_rng([seed, 0]))
    return [seq2seq.make_batch([data.train_pairs[i] for i in index], data.letters, data.phonemes)
            for index in plan[:STEPS]]


def minigrad_losses(config: g2p.Config, weights: dict, batches: list, n_letters: int,
                    n_phonemes: int) -> list[float]:
    """g2p.py's own training steps from `weights` on `batches`."""
    model = g2p.GRUAttentionG2P(n_letters, n_phonemes, config)
    model.load_state_dict(weights)
    optimizer = nn.optim.Adam(model.parameters(), lr=config.lr)
    losses = []
    for step, batch in enumerate(batches):
        lr = g2p.learning_rate(config, g2p.run_progress(config, step, 0.0))
        losses.append(g2p.train_step(model, optimizer, (batch.src, batch.tgt_in, batch.tgt_out),
                                     config.clip, "cpu", lr=lr))
    return losses


def torch_losses(config: g2p.Config, weights: dict, batches: list, n_letters: int,
                 n_phonemes: int) -> list[float]:
    import torch
    torch.set_num_threads(1)
    model = torch_model(config, n_letters, n_phonemes)
    model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    losses = []
    for step, batch in enumerate(batches):
        logits = model(torch.tensor(batch.src), torch.tensor(batch.tgt_in))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 torch.tensor(batch.tgt_out).reshape(-1),
                                                 ignore_index=seq2seq.PAD)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        for group in optimizer.param_groups:
            group["lr"] = g2p.learning_rate(config, g2p.run_progress(config, step, 0.0))
        optimizer.step()
        losses.append(loss.item())
    return losses


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=GOLDEN, help=f"default {GOLDEN}")
    args = parser.parse_args(argv)
    data = g2p.Data(*g2p.load_split())
    n_letters, n_phonemes = len(data.letters), len(data.phonemes)
    result = {}
    for attention in ("dot", "additive"):
        config = replace(CONFIG, attention=attention)
        mg.manual_seed(args.seed)
        weights = g2p.GRUAttentionG2P(n_letters, n_phonemes, config).state_dict()
        batches = first_batches(data, config, args.seed)
        ours = minigrad_losses(config, weights, batches, n_letters, n_phonemes)
        theirs = torch_losses(config, weights, batches, n_letters, n_phonemes)
        gap = max(abs(a - b) / abs(b) for a, b in zip(ours, theirs))
        print(f"{attention}: largest relative difference over {STEPS} steps: {gap:.2e}")
        for step, (a, b) in enumerate(zip(ours, theirs), 1):
            print(f"  step {step:2d}  minigrad {a:.7f}  torch {b:.7f}")
        result[attention] = {
            "config": asdict(config), "n_letters": n_letters, "n_phonemes": n_phonemes,
            "weights": weights, "torch_losses": np.array(theirs),
            "minigrad_losses": np.array(ours),
            "batches": [{"letters": b.src.astype(np.int16),
                         "tgt_in": b.tgt_in.astype(np.int16),
                         "tgt_out": b.tgt_out.astype(np.int16)} for b in batches]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    nn.save(result, args.out)
    print(f"written to {args.out}")
    return result


if __name__ == "__main__":
    main()
