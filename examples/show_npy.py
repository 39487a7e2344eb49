"""Prints each .npy file given: name, dtype, shape and values."""
import sys

import numpy as np

np.set_printoptions(precision=4, suppress=True, linewidth=100)
for path in sys.argv[1:]:
    value = np.load(path)
    print(f"{path}: {value.dtype} {list(value.shape)}")
    print(value.squeeze())
