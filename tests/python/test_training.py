"""Training through the module: the same weights, bit for bit, and the same
accuracy as `nodeflow train` on the same configuration and digits; the
callback sees every step and can stop training; evaluate; load_dataset."""
import csv
import json
import re

import numpy as np
import pytest

import nodeflow
from conftest import LENET, ROOT, run_cli, same_bits
from test_gil import counted

def write_idx(path, array):
    """An IDX file of uint8 `array` (docs/training-config.md, "Datasets")."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(
        int(d).to_bytes(4, "big") for d in array.shape)
    path.write_bytes(header + array.astype(np.uint8).tobytes())


def stand_in_digits(n, rng, patterns):
    """n digits of 28x28 bytes: per class a 0/1 pattern with 10% of its
    pixels flipped per digit (learnable, so the accuracy means something)."""
    labels = np.arange(n) % 10
    images = patterns[labels] ^ (rng.random((n, 784)) < 0.1)
    return (images * 255).reshape(n, 28, 28), labels


@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory):
    """A stand-in for the MNIST folder: 2,000 training and 500 test digits in
    the four IDX files of scripts/fetch_mnist.sh (the real 60,000 would make
    this test slow, and they are tested by the main job)."""
    rng = np.random.default_rng(21)
    patterns = rng.random((10, 784)) < 0.3
    folder = tmp_path_factory.mktemp("mnist")
    for prefix, n in (("train", 2000), ("t10k", 500)):
        images, labels = stand_in_digits(n, rng, patterns)
        write_idx(folder / f"{prefix}-images-idx3-ubyte", images)
        write_idx(folder / f"{prefix}-labels-idx1-ubyte", labels)
    return str(folder)


@pytest.fixture(scope="module")
def config():
    """LeNet-5's configuration for one epoch, no progress lines."""
    c = json.loads((ROOT / "examples" / "lenet5.train.json").read_text())
    c.update(epochs=1, log_every=0)
    return c


def test_same_weights_and_accuracy_as_nodeflow_train(mnist_dir, config, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(config))
    out = run_cli("train", LENET, "--config", tmp_path / "config.json", "--data",
                  f"mnist:{mnist_dir}", "-o", tmp_path / "cli.json")
    cli_accuracy = re.search(r"mnist test set \(500 samples\): accuracy ([0-9.]+)%", out).group(1)
    with open(tmp_path / "cli.metrics.csv") as f:
        cli_epochs = list(csv.DictReader(f))

    graph = nodeflow.load(LENET)
    train_x, train_y, test_x, test_y, classes = nodeflow.load_dataset(f"mnist:{mnist_dir}")
    assert train_x.shape == (2000, 1, 28, 28) and test_y.shape == (500,) and classes == 10
    assert train_x.dtype == np.float32 and train_y.dtype == np.int64
    assert set(np.unique(train_x)) == {0.0, 1.0}
    history = nodeflow.Trainer(graph, config).fit(train_x, train_y, test_x, test_y,
                                                  num_classes=classes)

    trained = nodeflow.load(tmp_path / "cli.json")
    for init in graph.initializers:
        assert same_bits(graph.initializer(init.name), trained.initializer(init.name)), init.name
    assert len(history) == len(cli_epochs) == 1
    for key in ("train_loss", "train_accuracy", "test_loss", "test_accuracy"):
        assert f"{history[0][key]:.9g}" == cli_epochs[0][key], key
    assert f"{100 * history[0]['test_accuracy']:.2f}" == cli_accuracy
    evaluation = nodeflow.evaluate(graph, test_x, test_y, num_classes=10, config=config)
    assert evaluation["accuracy"] == history[0]["test_accuracy"]
    assert evaluation["predictions"].shape == (500, 10)


def test_load_dataset_reads_an_npy_folder(tmp_path):
    rng = np.random.default_rng(5)
    arrays = {"train_samples": rng.random((6, 3), dtype=np.float32),
              "train_labels": np.array([0, 1, 2, 3, 0, 1]),
              "test_samples": rng.random((2, 3), dtype=np.float32),
              "test_labels": np.array([4, 0])}
    for name, array in arrays.items():
        np.save(tmp_path / f"{name}.npy", array)
    train_x, train_y, test_x, test_y, classes = nodeflow.load_dataset(f"npy:{tmp_path}")
    assert np.array_equal(train_x, arrays["train_samples"])
    assert np.array_equal(train_y, arrays["train_labels"])
    assert np.array_equal(test_x, arrays["test_samples"])
    assert np.array_equal(test_y, arrays["test_labels"])
    assert classes == 5
    np.save(tmp_path / "test_labels.npy", np.array([4.0, 0.0]))
    with pytest.raises(nodeflow.IoError, match="labels must be int64, uint8 or int8"):
        nodeflow.load_dataset(f"npy:{tmp_path}")
    with pytest.raises(nodeflow.Error, match="unknown dataset 'cifar'"):
        nodeflow.load_dataset("cifar")


def small_problem():
    """64 seeded images of LeNet-5's shape and their labels."""
    rng = np.random.default_rng(2)
    return rng.random((64, 1, 28, 28), dtype=np.float32), np.arange(64, dtype=np.int64) % 10


SGD = {"optimizer": {"type": "sgd", "lr": 0.01}, "batch_size": 16, "epochs": 2, "log_every": 0}


def test_callback_sees_every_step_and_false_stops():
    x, y = small_problem()
    seen = []

    def callback(progress):
        seen.append((progress["epoch"], progress["batch"], progress["batches"], progress["step"]))
        return np.bool_(progress["step"] < 6)  # any truth value; None goes on

    trainer = nodeflow.Trainer(nodeflow.load(LENET), json.dumps(SGD))  # JSON text works too
    history = trainer.fit(x, y, x, y, num_classes=10, callback=callback)
    assert seen == [(1, 1, 4, 1), (1, 2, 4, 2), (1, 3, 4, 3), (1, 4, 4, 4), (2, 1, 4, 5),
                    (2, 2, 4, 6)]
    assert trainer.stopped and trainer.steps == 6
    assert [h["epoch"] for h in history] == [1, 2]  # the stopped epoch is evaluated too
    trainer.fit(x, y, x, y, num_classes=10)  # no callback: every step
    assert not trainer.stopped and trainer.steps == 14


def test_callback_exception_propagates():
    x, y = small_problem()

    def callback(progress):
        raise ValueError(f"stop at {progress['step']}")

    trainer = nodeflow.Trainer(nodeflow.load(LENET), SGD)
    with pytest.raises(ValueError, match="^stop at 1$"):
        trainer.fit(x, y, x, y, num_classes=10, callback=callback)
    assert trainer.steps == 1


def test_callback_may_not_use_the_graph_it_trains():
    x, y = small_problem()
    graph = nodeflow.load(LENET)

    def callback(progress):
        graph.initializer("fc3.B")

    with pytest.raises(nodeflow.RunError, match="^graph 'lenet5' is being trained by this thread"):
        nodeflow.Trainer(graph, SGD).fit(x, y, x, y, num_classes=10, callback=callback)


def test_training_releases_the_gil():
    x, y = small_problem()
    trainer = nodeflow.Trainer(nodeflow.load(LENET), SGD)
    assert counted(lambda: trainer.fit(x, y, x, y, num_classes=10)) > 1000


def test_configuration_and_data_errors():
    x, y = small_problem()
    graph = nodeflow.load(LENET)
    with pytest.raises(nodeflow.InvalidConfig, match="optimizer"):
        nodeflow.Trainer(graph, {"optimizer": {"type": "sgd"}})
    with pytest.raises(nodeflow.InvalidConfig):
        nodeflow.Trainer(graph, "{")
    trainer = nodeflow.Trainer(graph, SGD)
    with pytest.raises(nodeflow.ShapeMismatch):
        trainer.fit(x, y[:10], x, y, num_classes=10)
    with pytest.raises(nodeflow.InvalidAttribute):
        trainer.fit(x, y + 10, x, y, num_classes=10)
