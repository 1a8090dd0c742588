"""Module system: registration, traversal, modes, devices, dtypes, state dicts, repr, scopes."""

import numpy as np
import pytest

import minigrad as mg
import nn


class Block(nn.Module):
    def __init__(self, d=3):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(self.lin(x))


class Net(nn.Module):
    """Two blocks in a ModuleList, an embedding, a buffer and a non-persistent buffer."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 3)
        self.layers = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(3, 2, bias=False)
        self.register_buffer("running", mg.zeros(2))
        self.register_buffer("cache", mg.ones(4), persistent=False)

    def forward(self, idx):
        x = self.emb(idx)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


EXPECTED_NAMES = ["emb.weight",
                  "layers.0.lin.weight", "layers.0.lin.bias", "layers.0.norm.weight",
                  "layers.0.norm.bias",
                  "layers.1.lin.weight", "layers.1.lin.bias", "layers.1.norm.weight",
                  "layers.1.norm.bias",
                  "head.weight"]


# -- Parameter ------------------------------------------------------------------------------

def test_parameter_dtype_rules_and_tensor_behaviour():
    p = nn.Parameter([1.0, 2.0])
    assert p.dtype == np.float32 and p.requires_grad and p.is_leaf
    q = nn.Parameter(np.array([1.0, 2.0]))
    assert q.dtype == np.float64
    assert isinstance(q, mg.Tensor)
    y = mg.tanh(q * 2.0).sum() + (q @ q)
    y.backward()
    expected = 2 * (1 - np.tanh(2 * np.array([1.0, 2.0])) ** 2) + 2 * np.array([1.0, 2.0])
    np.testing.assert_allclose(q.grad.numpy(), expected)
    assert type(q * 2.0) is mg.Tensor          # results of operations are plain tensors


def test_parameter_copies_its_data_and_integer_parameters_do_not_require_grad():
    source = np.zeros(3)
    p = nn.Parameter(source)
    source[0] = 5.0
    assert p.numpy()[0] == 0.0
    assert not nn.Parameter(np.arange(3)).requires_grad


# -- registration and traversal --------------------------------------------------------------

def test_named_parameters_are_dotted_and_in_registration_order():
    net = Net()
    assert [name for name, _ in net.named_parameters()] == EXPECTED_NAMES
    assert len(list(net.parameters())) == len(EXPECTED_NAMES)


def test_shared_parameter_is_listed_once():
    shared = nn.Linear(3, 3)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    names = [name for name, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias"]
    assert len(list(model.parameters())) == 2
    assert model.num_parameters() == 12
    # the state dict lists a shared parameter under every name, as PyTorch
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_children_modules_and_named_modules():
    net = Net()
    assert [name for name, _ in net.named_children()] == ["emb", "layers", "head"]
    assert list(net.children()) == [net.emb, net.layers, net.head]
    modules = list(net.modules())
    assert modules[0] is net
    names = [name for name, _ in net.named_modules()]
    assert names == ["", "emb", "layers", "layers.0", "layers.0.lin", "layers.0.norm",
                     "layers.1", "layers.1.lin", "layers.1.norm", "head"]
    assert modules == [m for _, m in net.named_modules()]


def test_modules_lists_a_shared_submodule_once_where_named_modules_first_meets_it():
    net = Net()
    net.layers[1].lin = net.layers[0].lin             # one Linear in two places
    net.tail = net.layers[0]                          # a whole subtree twice
    expected = [m for _, m in net.named_modules()]
    assert list(net.modules()) == expected
    assert len({id(m) for m in expected}) == len(expected)
    assert [n for n, _ in net.named_modules()] == [
        "", "emb", "layers", "layers.0", "layers.0.lin", "layers.0.norm", "layers.1",
        "layers.1.norm", "head"]


def test_reassigning_an_attribute_replaces_the_registration():
    net = Net()
    net.head = nn.Linear(3, 4)
    assert net.head.out_features == 4
    assert "head.bias" in dict(net.named_parameters())
    with pytest.raises(TypeError, match="Parameter"):
        net.head.weight = mg.zeros(4, 3)
    net.head.bias = None
    assert "head.bias" not in dict(net.named_parameters())
    del net.head
    assert "head" not in dict(net.named_children())


def _attributes_match_registries(module):
    """Every registered name reads back, as an attribute, the registry's object."""
    for registry in (module._parameters, module._buffers, module._modules):
        for name, value in registry.items():
            assert getattr(module, name) is value, name


def test_attribute_reads_follow_every_kind_of_registration_change():
    net = Net()
    for module in net.modules():
        _attributes_match_registries(module)
    lin = net.layers[0].lin
    old_weight = lin.weight
    lin.weight = nn.Parameter(mg.zeros(3, 3))                 # replaced
    assert lin.weight is not old_weight and lin.weight is lin._parameters["weight"]
    lin.bias = None                                           # emptied, still registered
    assert lin.bias is None and "bias" in lin._parameters
    lin.register_parameter("extra", nn.Parameter(mg.ones(2)))
    assert lin.extra is lin._parameters["extra"]
    del lin.extra                                             # deleted: gone as an attribute
    assert not hasattr(lin, "extra") and "extra" not in lin._parameters
    net.register_buffer("running", mg.ones(2))                # a buffer replaced
    assert net.running is net._buffers["running"]
    net.head = nn.Linear(3, 5)                                # a child replaced
    net.add_module("emb", None)                               # a child emptied
    assert net.emb is None and net.head.out_features == 5
    net.layers = nn.Parameter(mg.zeros(1))                    # a child becomes a parameter
    assert "layers" not in net._modules and net.layers is net._parameters["layers"]
    net.head = None
    assert net.head is None
    for module in (net, lin):
        _attributes_match_registries(module)
    with pytest.raises(TypeError, match="Parameter"):
        lin.weight = mg.zeros(3, 3)                           # refused: nothing changes
    assert lin.weight is lin._parameters["weight"]


def test_a_module_that_calls_itself_nests_its_scope_and_restores_it():
    class Repeat(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x, times):
            return self.lin(x) if times == 0 else self(self.lin(x), times - 1)

    model = Repeat()
    y = model(mg.randn(1, 2, requires_grad=True), 2)
    scopes = []
    t = y
    while t._fn is not None:
        scopes.append(t._fn.scope)
        t = t._fn.inputs[0]
    assert scopes == ["Repeat.Repeat.Repeat.lin", "Repeat.Repeat.lin", "Repeat.lin"]
    z = y * 2
    assert z._fn.scope == ""                                  # every scope was left again


def test_forgetting_super_init_is_a_clear_error():
    class Broken(nn.Module):
        def __init__(self):
            self.lin = nn.Linear(2, 2)

    with pytest.raises(RuntimeError, match="super\\(\\).__init__"):
        Broken()


def test_missing_attribute_names_the_module():
    with pytest.raises(AttributeError, match="Linear"):
        nn.Linear(2, 2).nonexistent


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is seq[0]
    x = mg.randn(4, 2)
    np.testing.assert_allclose(seq(x).numpy(), seq[2](seq[1](seq[0](x))).numpy())
    with pytest.raises(IndexError, match="Sequential"):
        seq[3]

    layers = nn.ModuleList([nn.Linear(1, 1)])
    layers.append(nn.Linear(1, 2)).extend([nn.Linear(1, 3)])
    layers.insert(0, nn.Linear(1, 4))
    assert [m.out_features for m in layers] == [4, 1, 2, 3]
    del layers[1]
    assert [m.out_features for m in layers] == [4, 2, 3]
    assert [n for n, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]

    heads = nn.ModuleDict({"a": nn.Linear(1, 1), "b": nn.Tanh()})
    heads["c"] = nn.Linear(1, 2)
    assert list(heads) == ["a", "b", "c"] and "b" in heads
    assert [n for n, _ in heads.named_parameters()] == ["a.weight", "a.bias", "c.weight",
                                                        "c.bias"]


# -- modes, gradients, devices, dtypes ------------------------------------------------------

def test_training_mode_is_default_and_propagates():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5), nn.Sequential(nn.Dropout(0.5)))
    assert all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    x = mg.randn(8, 2)
    np.testing.assert_array_equal(model(x).numpy(), model[0](x).numpy())
    model.train()
    assert all(m.training for m in model.modules())


def test_zero_grad_sets_grads_to_none():
    model = nn.Linear(3, 2)
    model(mg.randn(4, 3)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_zero_grad_without_set_to_none_zeros_the_gradients_that_exist():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 2))
    model[0](mg.randn(4, 3)).sum().backward()                 # the second layer gets none
    model.zero_grad(set_to_none=False)
    first, second = list(model[0].parameters()), list(model[1].parameters())
    for p in first:
        assert p.grad.shape == p.shape and p.grad.dtype == p.dtype and not p.grad.numpy().any()
    assert all(p.grad is None for p in second)
    model.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in first)


def test_to_keeps_parameter_objects_and_returns_self():
    model = Net()
    before = list(model.parameters())
    assert model.to("cpu") is model
    assert all(a is b for a, b in zip(before, model.parameters()))
    if not mg.cuda_available():
        with pytest.raises(RuntimeError, match="cuda"):
            model.to("cuda")


def test_double_and_float_convert_parameters_and_buffers():
    model = Net().double()
    assert all(p.dtype == np.float64 for p in model.parameters())
    assert model.running.dtype == np.float64
    out = model(np.array([[0, 1]]))
    assert out.dtype == np.float64
    model.float()
    assert all(p.dtype == np.float32 for p in model.parameters())


# -- state dicts ------------------------------------------------------------------------------

def test_state_dict_holds_copies_of_parameters_and_persistent_buffers():
    net = Net()
    sd = net.state_dict()
    assert list(sd) == ["running"] + EXPECTED_NAMES     # own entries first, as PyTorch
    assert all(isinstance(v, np.ndarray) for v in sd.values())
    sd["head.weight"][...] = 123.0
    assert not np.any(net.head.weight.numpy() == 123.0)


def test_load_state_dict_round_trip_gives_identical_outputs():
    mg.manual_seed(0)
    a, b = Net(), Net()
    idx = np.array([[0, 3, 4], [1, 1, 2]])
    assert not np.allclose(a(idx).numpy(), b(idx).numpy())
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(a(idx).numpy(), b(idx).numpy())


def test_failed_load_lists_every_problem_and_changes_nothing():
    net = Net()
    before = {k: v.copy() for k, v in net.state_dict().items()}
    sd = Net().state_dict()
    sd["layers.1.lin.weight"] = np.zeros((2, 2))           # shape mismatch
    del sd["emb.weight"]                                      # missing
    sd["layers.7.weight"] = np.zeros(3)                       # unexpected
    with pytest.raises(RuntimeError) as error:
        net.load_state_dict(sd)
    message = str(error.value)
    assert "missing keys: emb.weight" in message
    assert "unexpected keys: layers.7.weight" in message
    assert "layers.1.lin.weight: checkpoint (2, 2), model (3, 3)" in message
    after = net.state_dict()
    for k in before:
        np.testing.assert_array_equal(after[k], before[k])


def test_non_strict_load_reports_and_skips_keys_but_rejects_shape_mismatch():
    net = Net()
    sd = Net().state_dict()
    del sd["head.weight"]
    sd["extra"] = np.zeros(1)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["head.weight"] and result.unexpected_keys == ["extra"]
    np.testing.assert_array_equal(net.emb.weight.numpy(), sd["emb.weight"])
    sd["emb.weight"] = np.zeros((5, 4))
    with pytest.raises(RuntimeError, match="emb.weight"):
        net.load_state_dict(sd, strict=False)


def test_load_keeps_parameter_dtype_unless_assign():
    model = nn.Linear(2, 2)
    sd = {k: v.astype(np.float64) for k, v in model.state_dict().items()}
    model.load_state_dict(sd)
    assert model.weight.dtype == np.float32
    model.load_state_dict(sd, assign=True)
    assert model.weight.dtype == np.float64
    np.testing.assert_array_equal(model.weight.numpy(), sd["weight"])


# -- printing and name scopes -------------------------------------------------------------

def test_repr_shows_the_tree_and_parameter_counts():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    text = repr(model)
    lines = text.splitlines()
    total = (3 * 4 + 4) + (4 * 2 + 2)
    assert lines[0] == f"Sequential(  # {total} params"
    assert lines[1] == "  (0): Linear(in_features=3, out_features=4, bias=True)  # 16 params"
    assert lines[2] == "  (1): ReLU()"
    assert lines[-1] == ")"


def test_operations_are_tagged_with_the_module_path():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    y = model(mg.randn(2, 3))
    assert y._fn.scope == "Sequential.1"
    assert y._fn.inputs[0]._fn.scope == "Sequential.0"

    net = Net()
    out = net(np.array([[1, 2]]))
    assert out._fn.scope == "Net.head"
    norm_out = out._fn.inputs[0]
    assert norm_out._fn.scope == "Net.layers.1.norm"    # the list's name is part of the path
    scopes = set()
    stack = [out]
    while stack:
        t = stack.pop()
        if t._fn is not None:
            scopes.add(t._fn.scope)
            stack.extend(t._fn.inputs)
    assert {"Net.emb", "Net.layers.0.lin", "Net.layers.0.norm", "Net.layers.1.lin"} <= scopes


def test_slicing_a_container_keeps_the_original_scope_names():
    model = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 2))
    head = model[1:]
    y = head(mg.randn(1, 2))
    assert y._fn.scope == "Sequential.2"
    assert model[2].scope_name == "2"


# -- devices --------------------------------------------------------------------------------

def _train_steps(model, device, steps=3):
    opt = nn.optim.Adam(model.parameters(), lr=0.01, weight_decay=0.01)
    idx = mg.tensor(np.array([[0, 3, 4], [1, 1, 2]]), device=device)
    targets = mg.tensor(np.array([[1, 0, 1], [0, 0, 1]]), device=device)
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(idx), targets, label_smoothing=0.1)
        loss.backward()
        nn.clip_grad_norm(model.parameters(), 0.5)
        opt.step()
    return opt


def test_training_on_another_device_matches_the_host(sim_device, tmp_path):
    mg.manual_seed(0)
    host = Net()
    device = Net()
    device.load_state_dict(host.state_dict())
    assert device.to(sim_device) is device
    assert all(p.device == "sim" for p in device.parameters())
    assert device.running.device == "sim"
    _train_steps(host, "cpu")
    opt = _train_steps(device, sim_device)
    for (name, a), (_, b) in zip(host.state_dict().items(), device.state_dict().items()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=name)
    nn.save({"model": device.state_dict(), "optim": opt.state_dict()}, tmp_path / "c.npz")
    back = nn.load(tmp_path / "c.npz")
    fresh = Net().to(sim_device)
    fresh.load_state_dict(back["model"])
    assert fresh.head.weight.device == "sim"
    fresh_opt = nn.optim.Adam(fresh.parameters(), lr=0.01, weight_decay=0.01)
    fresh_opt.load_state_dict(back["optim"])
    assert fresh_opt.state[0]["exp_avg"].shape == (5, 3)
    device.to("cpu")
    assert all(p.device == "cpu" for p in device.parameters())


# -- Module.to(dtype), as PyTorch's --------------------------------------------------------------

@pytest.mark.parametrize("where", [(mg.float64,), ("float64",), (np.float64,), ("cpu", "float64"),
                                   (mg.tensor(np.zeros(2)),)])
def test_module_to_a_dtype_casts_its_floating_parameters(where, rng):
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    params = list(model.parameters())
    model(mg.tensor(rng.standard_normal((5, 3)).astype(np.float32))).sum().backward()
    assert model.to(*where) is model
    assert all(a is b for a, b in zip(model.parameters(), params))   # the same objects
    assert all(p.dtype == np.float64 and p.grad.dtype == np.float64 for p in params)
    x = rng.standard_normal((5, 3))
    w1, b1, w2, b2 = (p.numpy() for p in params)
    expected = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2       # in float64 throughout
    out = model(mg.tensor(x))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    model.to(dtype=mg.float32)
    assert all(p.dtype == np.float32 for p in params)


def test_module_to_a_dtype_keeps_integer_buffers_and_refuses_integer_dtypes():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(2, 2)
            self.register_buffer("steps", mg.tensor(np.array(3, dtype=np.int64)))

    model = Counter().to(mg.float64)
    assert model.linear.weight.dtype == np.float64 and model.steps.dtype == np.int64
    assert model.steps.shape == ()
    with pytest.raises(TypeError, match="Module.to: dtype must be a floating-point dtype"):
        model.to(mg.int64)


def test_module_to_a_dtype_matches_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    ours.to(mg.float64)
    theirs.to(torch.float64)
    assert [str(p.dtype) for p in ours.parameters()] == \
        [str(p.dtype).replace("torch.", "") for p in theirs.parameters()]


def test_parameter_list_and_dict_register_their_parameters():
    class Mixture(nn.Module):
        def __init__(self):
            super().__init__()
            self.scales = nn.ParameterList([nn.Parameter(np.ones(2)), mg.zeros(3)])
            self.biases = nn.ParameterDict({"a": mg.ones(2)})

        def forward(self, x):
            return (x * self.scales[0]).sum() + self.scales[1].sum() + self.biases["a"].sum()

    model = Mixture()
    assert [n for n, _ in model.named_parameters()] == ["scales.0", "scales.1", "biases.a"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in model.parameters())
    model.scales.append(mg.ones(1))
    model.biases["b"] = mg.zeros(1)
    assert len(model.scales) == 3 and list(model.biases) == ["a", "b"] and "b" in model.biases
    model(mg.tensor(np.array([2.0, 3.0]))).backward()
    np.testing.assert_array_equal(model.scales[0].grad.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(model.biases["a"].grad.numpy(), [1.0, 1.0])
    assert set(model.state_dict()) == {"scales.0", "scales.1", "scales.2", "biases.a",
                                       "biases.b"}
    with pytest.raises(TypeError, match="ParameterList: holds Parameters"):
        model.scales.append(3.0)
    with pytest.raises(TypeError, match="ParameterDict: holds Parameters"):
        model.biases["c"] = "x"
