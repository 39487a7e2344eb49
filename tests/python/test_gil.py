"""The GIL is released while the library computes: a Python thread keeps
counting during run(), forward() and backward()."""
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

