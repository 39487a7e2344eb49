"""Writes the example input: one 8x8 image with a bright diagonal, shape (1, 1, 8, 8), float32."""
import sys

import numpy as np

image = np.fromfunction(lambda i, j: np.exp(-((i - j) ** 2) / 4.0) + 0.01 * (i + j), (8, 8))
np.save(sys.argv[1], image.astype(np.float32).reshape(1, 1, 8, 8))
np.save(sys.argv[2], np.ones((1, 1, 4, 4), dtype=np.float32))  # d(loss)/d(pooled) for backward
