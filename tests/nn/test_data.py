"""nn.utils.data: Dataset, TensorDataset, DataLoader and default_collate."""

import numpy as np
import pytest

import minigrad as mg
from nn.utils.data import DataLoader, Dataset, TensorDataset, default_collate


def test_batches_in_order_with_and_without_drop_last():
    x, y = np.arange(10.0).reshape(5, 2), np.arange(5)
    loader = DataLoader(TensorDataset(x, y), batch_size=2)
    batches = list(loader)
    assert len(loader) == len(batches) == 3
    np.testing.assert_array_equal(batches[0][0].numpy(), x[:2])
    assert batches[0][0].dtype == np.float64 and batches[0][1].dtype == np.int64
    np.testing.assert_array_equal(batches[2][1].numpy(), [4])      # the short last batch
    dropped = DataLoader(TensorDataset(x, y), batch_size=2, drop_last=True)
    assert len(dropped) == 2 and [b[1].numpy().tolist() for b in dropped] == [[0, 1], [2, 3]]


def test_shuffle_with_a_generator_is_reproducible_and_a_permutation():
    data = TensorDataset(np.arange(7))
    first = [b[0].numpy() for b in DataLoader(data, 3, shuffle=True,
                                              generator=np.random.default_rng(4))]
    again = [b[0].numpy() for b in DataLoader(data, 3, shuffle=True,
                                              generator=np.random.default_rng(4))]
    expected = np.random.default_rng(4).permutation(7)
    np.testing.assert_array_equal(np.concatenate(first), expected)
    np.testing.assert_array_equal(np.concatenate(again), expected)
    loader = DataLoader(data, 7, shuffle=True, generator=np.random.default_rng(4))
    epochs = [next(iter(loader))[0].numpy() for _ in range(2)]
    assert not np.array_equal(epochs[0], epochs[1])               # a new order each epoch
    assert sorted(epochs[1].tolist()) == list(range(7))


def test_shuffle_without_a_generator_follows_manual_seed():
    data = TensorDataset(np.arange(20))
    mg.manual_seed(5)
    a = next(iter(DataLoader(data, 20, shuffle=True)))[0].numpy()
    mg.manual_seed(5)
    b = next(iter(DataLoader(data, 20, shuffle=True)))[0].numpy()
    np.testing.assert_array_equal(a, b)
    assert sorted(a.tolist()) == list(range(20)) and a.tolist() != list(range(20))


class Squares(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"x": np.full(2, float(i), np.float32), "n": i, "f": i / 2, "name": f"s{i}"}


def test_default_collate_of_dicts_numbers_and_strings():
    batch = next(iter(DataLoader(Squares(), batch_size=3)))
    assert batch["x"].shape == (3, 2) and batch["x"].dtype == np.float32
    assert batch["n"].dtype == np.int64 and batch["f"].dtype == np.float64   # as PyTorch
    np.testing.assert_array_equal(batch["f"].numpy(), [0.0, 0.5, 1.0])
    assert batch["name"] == ["s0", "s1", "s2"]
    stacked = default_collate([mg.tensor([1.0, 2.0]), mg.tensor([3.0, 4.0])])
    np.testing.assert_array_equal(stacked.numpy(), [[1, 2], [3, 4]])
    assert default_collate([[1, 2.0], [3, 4.0]])[0].numpy().tolist() == [1, 3]


@pytest.mark.parametrize("make, error, match", [
    (lambda d: DataLoader(d, batch_size=0), ValueError, "batch_size must be an int >= 1"),
    (lambda d: DataLoader(d, batch_size=2.0), ValueError, "batch_size"),
    (lambda d: DataLoader(d, shuffle="True"), TypeError, "shuffle must be a bool"),
    (lambda d: DataLoader(d, shuffle=True, generator=3), TypeError, "numpy.random.Generator"),
    (lambda d: TensorDataset(np.zeros(3), np.zeros(4)), ValueError, "same first dimension"),
    (lambda d: list(DataLoader([object()])), TypeError, "collate_fn"),
])
def test_bad_arguments_raise(make, error, match):
    with pytest.raises(error, match=match):
        make(TensorDataset(np.zeros(3)))
