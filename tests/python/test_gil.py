"""The GIL is released while the library computes: a Python thread keeps
counting during run(), forward() and backward(), and
several Python threads run one graph at once."""
import threading

import numpy as np

import nodeflow
from conftest import LENET


class Counter:
    def __init__(self):
        self.count = 0
        self.stop = False
        self.thread = threading.Thread(target=self.loop)

    def loop(self):
        while not self.stop:
            self.count += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()


def counted(call):
    """How far the counter thread got while `call` ran in this thread."""
    with Counter() as c:
        while c.count == 0:  # the thread is running
            pass
        before = c.count
        call()
        return c.count - before


def test_run_and_backward_release_the_gil():
    g = nodeflow.load(LENET)
    image = np.random.default_rng(1).random((256, 1, 28, 28), dtype=np.float32)
    label = np.zeros(256, np.int64)
    # A call that keeps the GIL lets the counter move only at its first bytecodes;
    # released, the counter runs throughout (a few hundred thousand per 0.1 s).
    assert counted(lambda: [g.run(image=image, label=label) for _ in range(3)]) > 10000
    run = g.forward(image=image, label=label)
    assert counted(lambda: g.backward(run, loss=np.float32(1))) > 1000



def test_threads_run_one_graph_at_once():
    g = nodeflow.load(LENET)
    rng = np.random.default_rng(3)
    images = [rng.random((32, 1, 28, 28), dtype=np.float32) for _ in range(4)]
    label = np.zeros(32, np.int64)
    alone = [g.run(image=x, label=label)["logits"] for x in images]
    together = [None] * 4

    def work(k):
        for _ in range(5):
            together[k] = g.run(image=images[k], label=label)["logits"]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(alone, together):
        assert a.tobytes() == b.tobytes()


def test_weight_changes_wait_for_runs_in_flight():
    g = nodeflow.load(LENET)
    x = np.random.default_rng(4).random((32, 1, 28, 28), dtype=np.float32)
    label = np.zeros(32, np.int64)
    biases = [np.zeros(10, np.float32), np.ones(10, np.float32)]
    expected = []
    for b in biases:
        g.set_initializer("fc3.B", b)
        expected.append(g.run(image=x, label=label)["logits"].tobytes())
    results = []

    def work():
        for _ in range(10):
            results.append(g.run(image=x, label=label)["logits"].tobytes())

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for k in range(20):
        g.set_initializer("fc3.B", biases[k % 2])
    for t in threads:
        t.join()
    assert len(results) == 20 and all(r in expected for r in results)  # one bias or the other
