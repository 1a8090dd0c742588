"""From a GRU to a Transformer layer, one freed dependency at a time (claims C1, C2 of text 000;
see examples/README.md).

The task (long-range recall with overwrites). A sequence holds P "pair" tokens, each a key k
and a value v written as one token (k, v), then Q "query" tokens ?k. At each query position the
model must answer the value most recently stored under that key, which may be up to P + Q − 1
steps back. Keys repeat, so the answer depends on content (which key) AND order (the latest): a
model blind to order can at best spread its guess over the values stored under the key, and the
script prints that floor ("best without order") next to chance.

The text builds attention from a GRU in steps; each step below is one model, trained the same
way on the same batches, and the table reports each one's held-out loss and accuracy:

    gru           h_t = z_t ⊙ h_{t−1} + (1 − z_t) ⊙ h̃_t                      (nn.GRU)
    gru-softmax   h_t = Σ_{i≤t} α_i h̃_i, α_i ∝ exp(ATT(h̃_i, x_t)): the weights are freed
                  from the gates (the GRU's candidates h̃_i, bilinear ATT)
    free-cand     h_t = Σ_{i≤t} α_i f(x_i), α_i ∝ exp(f(x_i)·f(x_t)): candidates freed too
    qkv           α_i ∝ exp(K f(x_i) · Q f(x_t)), h_t = Σ α_i V f(x_i)    (one head)
    multi-head    N heads, concatenated                                  (causal)
    non-causal    the same over all positions i = 1..T (no mask)
    + position    f(x_i) + p(i), sinusoidal positional encoding
    + ffn         a position-wise feed-forward net after it, with residuals and LayerNorm:
                  a Transformer encoder layer

C1, shown: the GRU's state is a weighted sum of its past candidates,

    h_t = Σ_i [Π_{j=i+1..t} z_j] (1 − z_i) h̃_i + [Π_{j=1..t} z_j] h_0,

so a trained GRU has implicit "attention" weights over past steps. The figure
`implicit_weights.png` draws them (averaged over hidden units) for one held-out sequence next to
the weights of the trained causal single-head attention ("qkv") on the same sequence.

Run:
    python3 examples/gru_to_attention.py               # 8 models × 1500 steps (minutes)
    python3 examples/gru_to_attention.py --quick       # a few seconds
    python3 examples/gru_to_attention.py --resume      # continue from the last checkpoint
"""

from __future__ import annotations

# _common first: it sets the BLAS thread count before NumPy loads
from _common import (Checkpoint, LossBar, as_list, base_parser, parse_args, positive_int,
                     prepare_run, print_outputs, pyplot, resume_source, save_figure,
                     write_metrics)


import numpy as np

import minigrad as mg
import nn
import nn.functional as F

VARIANTS = ("gru", "gru-softmax", "free-cand", "qkv", "multi-head", "non-causal", "+ position",
            "+ ffn")
DESCRIPTIONS = {
    "gru": "GRU",
    "gru-softmax": "GRU candidates, softmax weights (causal)",
    "free-cand": "f(x_i) as key, query and value (causal)",
    "qkv": "separate Q/K/V, 1 head (causal)",
    "multi-head": "multi-head Q/K/V (causal)",
    "non-causal": "multi-head, all positions",
    "+ position": "multi-head, all positions, + sinusoidal PE",
    "+ ffn": "Transformer encoder layer (+ FFN, residual, LayerNorm)",
}


# -- the task -----------------------------------------------------------------------------------

class RecallTask:
    """Pairs (k, v) as token k·V + v, then queries ?k as token K·V + k; targets −1 elsewhere."""

    def __init__(self, num_keys: int, num_values: int, num_pairs: int, num_queries: int):
        self.K, self.V, self.P, self.Q = num_keys, num_values, num_pairs, num_queries
        self.vocab = num_keys * num_values + num_keys
        self.length = num_pairs + num_queries

    def batch(self, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        """tokens (B, T) int64, targets (B, T) int64 with −1 where nothing is asked."""
        keys = rng.integers(0, self.K, size=(size, self.P))
        values = rng.integers(0, self.V, size=(size, self.P))
        tokens = np.empty((size, self.length), dtype=np.int64)
        targets = np.full((size, self.length), -1, dtype=np.int64)
        tokens[:, :self.P] = keys * self.V + values
        for b in range(size):
            latest = {int(k): int(v) for k, v in zip(keys[b], values[b])}   # later pairs win
            asked = rng.choice(sorted(latest), size=self.Q)
            tokens[b, self.P:] = self.K * self.V + asked
            targets[b, self.P:] = [latest[int(k)] for k in asked]
        return tokens, targets

    def token_text(self, token: int) -> str:
        """A token as text: "k3=5" for the pair (key 3, value 5), "?3" for a query of key 3."""
        if token < self.K * self.V:
            return f"k{token // self.V}={token % self.V}"
        return f"?{token - self.K * self.V}"

    def order_blind_loss(self, tokens: np.ndarray, targets: np.ndarray) -> float:
        """The best loss (nats) of a model that knows which values were stored under the asked
        key but not in which order: it predicts their empirical distribution, so a key stored
        c times, n of them with the answer, costs −log(n/c)."""
        losses = []
        for row, want in zip(tokens, targets):
            for t in range(self.P, self.length):
                key = row[t] - self.K * self.V
                stored = [tok % self.V for tok in row[:self.P] if tok // self.V == key]
                losses.append(-np.log(stored.count(want[t]) / len(stored)))
        return float(np.mean(losses))


# -- the models ---------------------------------------------------------------------------------

class Model(nn.Module):
    """Embedding f → one sequence mixer (a step of the progression) → linear readout."""

    def __init__(self, variant: str, vocab: int, num_values: int, dim: int, heads: int,
                 max_len: int):
        super().__init__()
        self.variant = variant
        self.embed = nn.Embedding(vocab, dim)                                # f
        if variant in ("gru", "gru-softmax"):
            self.gru = nn.GRU(dim, dim, batch_first=True)
        if variant == "gru-softmax":
            self.attention = nn.BilinearAttention(dim, dim)                  # ATT(h̃_i, x_t)
        elif variant == "free-cand":
            self.attention = nn.DotProductAttention(scaled=True)
        elif variant in ("qkv", "multi-head", "non-causal", "+ position"):
            self.attention = nn.MultiHeadAttention(dim, 1 if variant == "qkv" else heads)
        elif variant == "+ ffn":
            self.layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0)
        if variant in ("+ position", "+ ffn"):
            self.position = nn.SinusoidalPositionalEncoding(dim, max_len=max_len)
        self.readout = nn.Linear(dim, num_values)

    @property
    def causal(self) -> bool:
        return self.variant in ("gru", "gru-softmax", "free-cand", "qkv", "multi-head")

    def forward(self, tokens: mg.Tensor) -> tuple[mg.Tensor, mg.Tensor | None]:
        """tokens (B, T) -> logits (B, T, V), attention weights (B, T, T) or None (GRU)."""
        x = self.embed(tokens)                                              # (B, T, E)
        T = x.shape[1]
        mask = nn.causal_mask(T, device=x.device) if self.causal else None  # bool (T, T)
        weights = None
        if self.variant == "gru":
            h, _ = self.gru(x)                                              # (B, T, E)
        elif self.variant == "gru-softmax":
            _, _, gates = self.gru(x, return_gates=True)
            candidates = gates[0].n                                         # h̃_i: (B, T, E)
            h, weights = self.attention(x, candidates, candidates, mask=mask)
        elif self.variant == "free-cand":
            h, weights = self.attention(x, x, x, mask=mask)                 # (B, T, E)
        elif self.variant == "+ ffn":
            h = self.layer(self.position(x))                                # (B, T, E)
        else:
            if self.variant == "+ position":
                x = self.position(x)                                        # f(x_i) + p(i)
            h, weights = self.attention(x, x, x, mask=mask)                 # (B, T, E)
            weights = weights.mean(axis=1)                                  # heads averaged
        return self.readout(h), weights                                     # (B, T, V)


def loss_and_accuracy(logits: mg.Tensor, targets: np.ndarray) -> tuple[mg.Tensor, float]:
    """Cross-entropy (nats) over the query positions only, and the fraction answered right."""
    loss = F.cross_entropy(logits, mg.tensor(targets, device=logits.device), ignore_index=-1)
    asked = targets >= 0
    predicted = logits.numpy().argmax(axis=-1)
    return loss, float((predicted[asked] == targets[asked]).mean())


# -- C1: a GRU's implicit weights over its past candidates --------------------------------------

def gru_implicit_weights(model: Model, tokens: np.ndarray) -> np.ndarray:
    """Weight of candidate i in h_t, averaged over hidden units, for one sequence (T, T).

    Reads the trained GRU's per-step update gates z_t (`return_gates=True`), then
    w[t, i] = mean_h Π_{j=i+1..t} z_j (1 − z_i) for i ≤ t, and 0 above the diagonal.
    """
    with mg.no_grad():
        x = model.embed(mg.tensor(tokens[None], device=model.readout.weight.device))  # (1, T, E)
        _, _, gates = model.gru(x, return_gates=True)
    z = gates[0].z.numpy()[0].astype(np.float64)         # (T, H)
    T = z.shape[0]
    weights = np.zeros((T, T))
    for t in range(T):
        keep = np.ones_like(z[0])                        # Π_{j=i+1..t} z_j, built from i = t down
        for i in range(t, -1, -1):
            weights[t, i] = np.mean(keep * (1 - z[i]))
            keep = keep * z[i]
    return weights


def plot_implicit_weights(gru_w: np.ndarray, attn_w: np.ndarray, task: RecallTask,
                          tokens: np.ndarray, path) -> None:
    labels = [task.token_text(int(token)) for token in tokens]
    figure = mg.viz.attention_map(
        [gru_w, attn_w], labels, labels,
        titles=[r"trained GRU: $\Pi_{j=i+1}^{t}\, z_j\,(1 - z_i)$, mean over hidden units",
                r"trained causal attention (one head): $\alpha_{t,i}$"],
        xlabel="past step i (candidate / key)", ylabel="current step t",
        colorbar_label="weight of step i in the state / output at t",
        suptitle=f"Weights over past steps for one held-out sequence: {task.P} (key, value) "
                 f"pairs left of the dashed line, {task.Q} queries below it")
    for ax in figure.axes[:2]:
        ax.axvline(task.P - 0.5, color="white", lw=0.8, ls="--")
        ax.axhline(task.P - 0.5, color="white", lw=0.8, ls="--")
    save_figure(figure, path)


# -- training -----------------------------------------------------------------------------------

def evaluate(model: Model, task: RecallTask, tokens: np.ndarray, targets: np.ndarray,
             device: str) -> tuple[float, float]:
    model.eval()
    with mg.no_grad():
        logits, _ = model(mg.tensor(tokens, device=device))
        loss, accuracy = loss_and_accuracy(logits, targets)
    model.train()
    return loss.item(), accuracy


def train_variant(variant: str, task: RecallTask, args, out, held_out) -> tuple[Model, dict]:
    """Train one model (resuming from its own checkpoint if asked) and return it and its log."""
    mg.manual_seed(args.seed)                           # every variant starts from the same RNG
    model = Model(variant, task.vocab, task.V, args.dim, args.heads, task.length).to(args.device)
    optimizer = nn.optim.Adam(model.parameters(), lr=args.lr)
    path = out / f"checkpoint_{variant.replace(' ', '').replace('+', 'plus_')}.npz"
    history: list[float] = []
    held_out_curve: dict = {"step": [], "loss": []}      # held-out loss every eval_every steps
    with Checkpoint(path, args, model, optimizer, resume_from=resume_source(args, path),
                    config={"variant": variant}, ignore=("variants",)) as checkpoint:
        state = checkpoint.resume()
        start = int(state.get("step", 0))
        if state:
            history = as_list(state["history"])
            held_out_curve = {"step": [int(s) for s in as_list(state["held_out_step"])],
                              "loss": as_list(state["held_out_loss"])}
        with LossBar(total=args.steps, desc=f"{variant:>11}", initial=start) as bar:
            for step in range(start, args.steps):
                tokens, targets = task.batch(np.random.default_rng([args.seed, step]),
                                             args.batch)
                logits, _ = model(mg.tensor(tokens, device=args.device))
                loss, accuracy = loss_and_accuracy(logits, targets)
                optimizer.zero_grad()
                loss.backward()
                nn.clip_grad_norm(model.parameters(), 1.0)
                optimizer.step()
                history.append(loss.item())
                bar.update(history[-1], acc=accuracy)
                if (step + 1) % args.eval_every == 0 or step == args.steps - 1:
                    held_out_curve["step"].append(step + 1)
                    held_out_curve["loss"].append(evaluate(model, task, *held_out,
                                                           args.device)[0])
                checkpoint.step_end(due=(step + 1) % args.checkpoint_every == 0
                                    or step == args.steps - 1, step=step + 1, history=history,
                                    held_out_step=held_out_curve["step"],
                                    held_out_loss=held_out_curve["loss"])
    loss, accuracy = evaluate(model, task, *held_out, args.device)
    return model, {"description": DESCRIPTIONS[variant], "test_loss": loss,
                   "test_accuracy": accuracy, "first_train_loss": history[0],
                   "final_train_loss": float(np.mean(history[-max(1, len(history) // 10):])),
                   "parameters": sum(p.size for p in model.parameters()),
                   "history": history, "held_out_curve": held_out_curve}


def plot_curves(results: dict, chance: float, order_blind: float, path) -> None:
    """Held-out loss against training step, one curve per step of the derivation, with the
    legend (in words, beside the axes) giving each model's final held-out loss."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(12, 5.2))
    ax.axhline(chance, color="gray", ls=":", lw=1, label=f"chance (ln 8): {chance:.3f}")
    ax.axhline(order_blind, color="black", ls="--", lw=1,
               label=f"best possible without order: {order_blind:.3f}")
    colours = pyplot().get_cmap("viridis")(np.linspace(0.0, 0.92, len(results)))
    for colour, (variant, r) in zip(colours, results.items()):
        curve = r["held_out_curve"]
        ax.plot(curve["step"], curve["loss"], "o-", ms=3, color=colour,
                label=f"{DESCRIPTIONS[variant]}: {r['test_loss']:.3f}")
    ax.set(xlabel="training step", ylabel="held-out loss (nats per query)",
           title="From a GRU to a Transformer layer on long-range recall")
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              title="model: final held-out loss", title_fontsize=9, frameon=False)
    ax.grid(alpha=0.3)
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> dict:
    parser = base_parser(__doc__, default_out="runs/gru_to_attention")
    parser.add_argument("--steps", type=positive_int, default=1500, help="training steps per model")
    parser.add_argument("--batch", type=positive_int, default=32)
    parser.add_argument("--dim", type=int, default=32, help="embedding / hidden size E = H")
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--keys", type=int, default=8, help="distinct keys K")
    parser.add_argument("--values", type=int, default=8, help="distinct values V")
    parser.add_argument("--pairs", type=int, default=24, help="(key, value) tokens per sequence")
    parser.add_argument("--queries", type=int, default=8, help="query tokens per sequence")
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate")
    parser.add_argument("--test-size", type=int, default=512, help="held-out sequences")
    parser.add_argument("--checkpoint-every", type=positive_int, default=200)
    parser.add_argument("--eval-every", type=positive_int, default=100,
                        help="held-out loss every k steps (the curves of losses.png)")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS,
                        metavar="VARIANT", help=f"subset of {', '.join(VARIANTS)}")
    args = parse_args(parser, argv, steps=40, batch=48, lr=1e-2, test_size=64,
                      pairs=12, queries=4, eval_every=10)
    out = prepare_run(args)

    task = RecallTask(args.keys, args.values, args.pairs, args.queries)
    held_out = task.batch(np.random.default_rng([args.seed, 10**9]), args.test_size)
    models, results = {}, {}
    for variant in args.variants:
        models[variant], results[variant] = train_variant(variant, task, args, out, held_out)

    chance = float(np.log(args.values))
    order_blind = task.order_blind_loss(*held_out)
    print(f"\nheld-out loss on {args.test_size} sequences (T = {task.length}; chance = ln "
          f"{args.values} = {chance:.3f} nats; best possible without order = {order_blind:.3f})")
    print(f"  {'variant':<12} {'what it is':<56} {'loss':>7} {'acc':>6} {'params':>7}")
    for variant, r in results.items():
        print(f"  {variant:<12} {r['description']:<56} {r['test_loss']:7.3f} "
              f"{r['test_accuracy']:6.3f} {r['parameters']:7d}")
    plot_curves(results, chance, order_blind, out / "losses.png")

    if "gru" in models and "qkv" in models:
        tokens = held_out[0][0]
        gru_w = gru_implicit_weights(models["gru"], tokens)
        models["qkv"].eval()
        with mg.no_grad():
            _, attn_w = models["qkv"](mg.tensor(tokens[None], device=args.device))
        plot_implicit_weights(gru_w, attn_w.numpy()[0], task, tokens,
                              out / "implicit_weights.png")

    metrics = {"task": {"keys": args.keys, "values": args.values, "pairs": args.pairs,
                        "queries": args.queries, "length": task.length,
                        "chance_loss": chance, "order_blind_loss": order_blind,
                        "steps": args.steps},
               "variants": {v: {k: x for k, x in r.items()
                                if k not in ("history", "held_out_curve")}
                            for v, r in results.items()},
               "histories": {v: r["history"] for v, r in results.items()},
               "held_out_curves": {v: r["held_out_curve"] for v, r in results.items()}}
    write_metrics(out, metrics, args)
    print_outputs(out)
    return metrics


if __name__ == "__main__":
    main()
