"""Module.register_forward_hook and register_forward_pre_hook, with PyTorch's semantics: what
the hooks see, what their return values replace, their order, and removal."""

import numpy as np
import pytest

import minigrad as mg
import nn


class Scale(nn.Module):
    """y = a·x + b, with b a keyword argument: enough to see args, kwargs and outputs."""

    def forward(self, x, a=2.0, b=0.0):
        return x * a + b


def test_a_forward_hook_sees_module_args_and_output_and_can_replace_the_output():
    layer, seen = Scale(), []
    x = mg.tensor(np.array([1.0, -2.0]))
    handle = layer.register_forward_hook(lambda m, args, out: seen.append((m, args, out)))
    y = layer(x, 3.0, b=1.0)
    (module, args, output), = seen
    assert module is layer and len(args) == 2 and args[0] is x and args[1] == 3.0
    assert output is y
    np.testing.assert_array_equal(y.numpy(), [4.0, -5.0])
    handle.remove()
    layer.register_forward_hook(lambda m, args, out: out * 10)     # a returned value replaces it
    np.testing.assert_array_equal(layer(x).numpy(), [20.0, -40.0])
    assert len(seen) == 1                                          # the removed hook is gone


def test_hooks_run_in_order_each_seeing_what_the_one_before_returned():
    layer, order = Scale(), []

    def first(m, args, out):
        order.append("first")
        return out + 1

    def second(m, args, out):
        order.append(("second", out.numpy().tolist()))

    layer.register_forward_hook(first)
    layer.register_forward_hook(second)
    out = layer(mg.tensor(np.array([1.0])))
    assert order == ["first", ("second", [3.0])] and out.numpy().tolist() == [3.0]


def test_pre_hooks_can_replace_the_arguments_and_kwargs_hooks_see_keywords():
    layer = Scale()
    x = mg.tensor(np.array([1.0, 2.0]))
    layer.register_forward_pre_hook(lambda m, args: (args[0] * 0 + 5,))
    np.testing.assert_array_equal(layer(x).numpy(), [10.0, 10.0])
    other, seen = Scale(), []
    other.register_forward_pre_hook(lambda m, args, kwargs: (args, {"b": 100.0}),
                                    with_kwargs=True)
    other.register_forward_hook(lambda m, args, kwargs, out: seen.append(dict(kwargs)),
                                with_kwargs=True)
    np.testing.assert_array_equal(other(x, b=1.0).numpy(), [102.0, 104.0])
    assert seen == [{"b": 100.0}]
    bad = Scale()
    bad.register_forward_pre_hook(lambda m, args, kwargs: "nonsense", with_kwargs=True)
    with pytest.raises(RuntimeError, match="Scale: a forward pre-hook with with_kwargs=True"):
        bad(x)


def test_hooks_on_children_fire_inside_a_container_and_handles_work_as_context_managers(rng):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    x = mg.tensor(rng.standard_normal((5, 3)))
    outputs = {}
    with model[1].register_forward_hook(lambda m, a, out: outputs.update(tanh=out.numpy())):
        model(x)
    sd = model.state_dict()
    expected = np.tanh(x.numpy() @ sd["0.weight"].T + sd["0.bias"])   # from the equations
    np.testing.assert_allclose(outputs["tanh"], expected, rtol=1e-12)
    outputs.clear()
    model(x)                                                          # removed on exit
    assert outputs == {}


def test_a_hook_does_not_change_the_gradient_and_a_model_without_hooks_is_unchanged(rng):
    layer = nn.Linear(3, 2).double()
    x = mg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    (g_plain,) = mg.grad(layer(x).sum(), [x])
    layer.register_forward_hook(lambda m, a, out: None)
    (g_hooked,) = mg.grad(layer(x).sum(), [x])
    np.testing.assert_array_equal(g_plain.numpy(), g_hooked.numpy())
    np.testing.assert_allclose(g_plain.numpy(), np.tile(layer.weight.numpy().sum(0), (4, 1)))
