#!/usr/bin/env python3
"""Expected numbers for tests/unit/test_optim*.cpp.

No PyTorch here: these are PyTorch's documented update rules (the pseudo-code
of torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW and the closed forms of
StepLR, MultiStepLR and CosineAnnealingLR) implemented with numpy in float32,
as PyTorch computes for float32 parameters. Run: python3 optimizer_reference.py
"""
import math

import numpy as np

f32 = np.float32
W0 = np.array([0.5, -1.25, 2.0, 0.0], dtype=f32)
GRADS = [np.array(g, dtype=f32) for g in ([0.1, -0.2, 0.3, -0.4],
                                            [-0.05, 0.15, 0.25, 0.5],
                                            [0.2, 0.0, -0.1, 0.05])]


def sgd(lr, momentum=0.0, nesterov=False, weight_decay=0.0, dampening=0.0):
    w = W0.copy()
    buf = None
    for g in GRADS:
        g = g.copy()
        if weight_decay != 0:
            g = g + f32(weight_decay) * w
        if momentum != 0:
            buf = g.copy() if buf is None else f32(momentum) * buf + f32(1 - dampening) * g
            g = g + f32(momentum) * buf if nesterov else buf
        w = w - f32(lr) * g
    return w, buf


def adam(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False, steps=None):
    w = W0.copy()
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    t = 0
    for k, g in enumerate(GRADS):
        if steps is not None and k not in steps:
            continue  # no gradient this step: PyTorch skips the parameter entirely
        t += 1
        g = g.copy()
        if decoupled:
            w = w * f32(1 - lr * weight_decay)
        elif weight_decay != 0:
            g = g + f32(weight_decay) * w
        b1, b2 = betas
        m = f32(b1) * m + f32(1 - b1) * g
        v = f32(b2) * v + f32(1 - b2) * g * g
        mhat = m / f32(1 - b1 ** t)
        vhat = v / f32(1 - b2 ** t)
        w = w - f32(lr) * mhat / (np.sqrt(vhat) + f32(eps))
    return w, m, v


def show(name, arr):
    print(f"{name}: {{{', '.join(repr(float(x)) for x in np.asarray(arr, dtype=f32))}}}")


show("sgd plain lr=0.1", sgd(0.1)[0])
w, buf = sgd(0.1, momentum=0.9)
show("sgd momentum 0.9 w", w)
show("sgd momentum 0.9 buf", buf)
show("sgd nesterov 0.9 wd 0.01", sgd(0.1, momentum=0.9, nesterov=True, weight_decay=0.01)[0])
show("sgd momentum 0.9 wd 0.01", sgd(0.1, momentum=0.9, weight_decay=0.01)[0])
w, m, v = adam(0.01)
show("adam lr=0.01 w", w)
show("adam m", m)
show("adam v", v)
show("adam lr=0.01 wd=0.1 (L2)", adam(0.01, weight_decay=0.1)[0])
show("adamw lr=0.01 wd=0.1", adam(0.01, weight_decay=0.1, decoupled=True)[0])
show("adam lr=0.01 steps 0 and 2 only", adam(0.01, steps={0, 2})[0])
show("adam betas (0.8, 0.99) eps 1e-3 lr 0.05", adam(0.05, betas=(0.8, 0.99), eps=1e-3)[0])

# Schedules: closed forms from the PyTorch documentation, epoch e = 0, 1, ...
lr0 = 0.1
print("StepLR(step_size=3, gamma=0.5):", [lr0 * 0.5 ** (e // 3) for e in range(8)])
print("MultiStepLR(milestones=[2, 5], gamma=0.1):",
      [lr0 * 0.1 ** sum(m <= e for m in (2, 5)) for e in range(7)])
print("CosineAnnealingLR(T_max=10, eta_min=0.001):",
      [0.001 + (lr0 - 0.001) * (1 + math.cos(math.pi * e / 10)) / 2 for e in range(11)])
