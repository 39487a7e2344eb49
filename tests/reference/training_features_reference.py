#!/usr/bin/env python3
"""Expected numbers for tests/unit/training/test_train_features.cpp, from PyTorch.

The toy network of test_train_loop.cpp (Gemm 2->4, Tanh, Gemm 4->2, mean
softmax cross-entropy; Gemm with transB = 1 is torch.nn.Linear) trained in
float64 by torch.optim with:
  - torch.nn.utils.clip_grad_value_ and clip_grad_norm_ (norm_type 2 and inf)
    between backward and optimizer.step();
  - gradient accumulation: the mean loss of each micro-batch scaled by its
    share of the samples, backward per micro-batch, one step; checked against
    one step on the whole batch;
  - torch.optim.lr_scheduler.ExponentialLR's learning rates.
Run: /usr/bin/python3 training_features_reference.py (torch 1.13).
"""
import torch

torch.set_default_dtype(torch.float64)

X = torch.tensor([[0, 0], [0, 1], [1, 0], [1, 1], [0.5, 0.2], [0.9, 0.8], [0.1, 0.7], [0.6, 0.7]],
                 dtype=torch.float32).double()
Y = torch.tensor([0, 0, 0, 1, 0, 1, 0, 1])
W1 = torch.tensor([0.5, -0.3, 0.2, 0.4, -0.6, 0.1, 0.3, 0.3], dtype=torch.float32).double().reshape(4, 2)
W2 = torch.tensor([0.2, -0.5, 0.3, 0.1, -0.4, 0.3, 0.2, -0.2], dtype=torch.float32).double().reshape(2, 4)


def model():
    fc1 = torch.nn.Linear(2, 4)
    fc2 = torch.nn.Linear(4, 2)
    with torch.no_grad():
        fc1.weight.copy_(W1)
        fc1.bias.zero_()
        fc2.weight.copy_(W2)
        fc2.bias.zero_()
    return fc1, fc2


def loss_of(fc1, fc2, x, y):
    return torch.nn.functional.cross_entropy(fc2(torch.tanh(fc1(x))), y)


def fmt(name, t):
    print(f"{name}: {{{', '.join('%.9g' % v for v in t.detach().reshape(-1).tolist())}}}")


def show(tag, fc1, fc2):
    fmt(tag + " W1", fc1.weight)
    fmt(tag + " B1", fc1.bias)
    fmt(tag + " W2", fc2.weight)
    fmt(tag + " B2", fc2.bias)


def clipped(tag, clip, steps=3):
    fc1, fc2 = model()
    params = [fc1.weight, fc1.bias, fc2.weight, fc2.bias]
    opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        loss_of(fc1, fc2, X, Y).backward()
        clip(params)
        opt.step()
    show(tag, fc1, fc2)


clipped("clip value 0.05", lambda p: torch.nn.utils.clip_grad_value_(p, 0.05))
clipped("clip norm 0.1", lambda p: torch.nn.utils.clip_grad_norm_(p, 0.1))
clipped("clip norm inf 0.02", lambda p: torch.nn.utils.clip_grad_norm_(p, 0.02, norm_type=float("inf")))
clipped("clip value 0.05 then norm 0.06",
        lambda p: (torch.nn.utils.clip_grad_value_(p, 0.05), torch.nn.utils.clip_grad_norm_(p, 0.06)))


def accumulated(tag, pieces, steps=2):
    """SGD (lr 0.5, momentum 0.9), `steps` steps each accumulating the micro-batches `pieces`."""
    fc1, fc2 = model()
    params = [fc1.weight, fc1.bias, fc2.weight, fc2.bias]
    opt = torch.optim.SGD(params, lr=0.5, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        for lo, hi in pieces:
            (loss_of(fc1, fc2, X[lo:hi], Y[lo:hi]) * ((hi - lo) / 8.0)).backward()
        opt.step()
    show(tag, fc1, fc2)


accumulated("accumulate 3+5", [(0, 3), (3, 8)])
accumulated("whole batch 8", [(0, 8)])

fc1, fc2 = model()
opt = torch.optim.SGD(fc1.parameters(), lr=0.2)
sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.7)
lrs = []
for _ in range(5):
    lrs.append(sched.get_last_lr()[0])
    opt.step()
    sched.step()
print("exponential lr0 0.2 gamma 0.7: {%s}" % ", ".join("%.17g" % v for v in lrs))
