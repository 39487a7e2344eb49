#!/usr/bin/env python3
"""Expected numbers for tests/unit/test_train_*.cpp.

No PyTorch here: each network below is written out in numpy (float64) with its
backward pass derived by hand, following what PyTorch's autograd computes
(a tensor read by several consumers gets the sum of their gradients; a frozen
module is a detached branch) and PyTorch's documented formulas for SGD, Adam,
BatchNorm and cross-entropy. Operator semantics are ONNX's (Gemm with
transB = 1 is y = x W^T + b, exactly torch.nn.Linear). BatchNormalization
follows ONNX: running = momentum * running + (1 - momentum) * batch_stat with
the biased batch variance (PyTorch: momentum_pt = 1 - momentum, unbiased
variance in running_var; printed alongside for comparison).
Run: python3 training_reference.py
"""
import numpy as np


def fmt(name, a):
    a = np.asarray(a, dtype=np.float64).ravel()
    print(f"{name}: {{{', '.join('%.9g' % v for v in a)}}}")


def log_softmax(z):
    m = z.max(axis=1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=1, keepdims=True))


def xent(z, y):
    """Mean softmax cross-entropy and its gradient with respect to z."""
    lp = log_softmax(z)
    n = z.shape[0]
    loss = -lp[np.arange(n), y].mean()
    dz = np.exp(lp)
    dz[np.arange(n), y] -= 1.0
    return loss, dz / n


# ---------------------------------------------------------------- fan-out ---
X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
Y = np.array([1, 0])
W1 = np.array([[0.2, -0.1, 0.4], [-0.3, 0.5, 0.1], [0.25, 0.15, -0.2], [-0.05, -0.4, 0.3]])
B1 = np.array([0.1, -0.2, 0.05, 0.0])
W2 = np.array([[0.3, -0.2, 0.1, 0.4], [-0.1, 0.25, -0.3, 0.2]])
B2 = np.array([0.05, -0.05])
W3 = np.array([[0.15, 0.1, -0.25, 0.3], [0.2, -0.35, 0.05, -0.1]])


def fanout(w1, b1, w2, b2, w3, frozen_branch=False):
    h = X @ w1.T + b1
    r = np.maximum(h, 0)
    t = np.tanh(h)
    z = r @ w2.T + b2 + t @ w3.T
    loss, dz = xent(z, Y)
    g = {}
    g["W2"] = dz.T @ r
    g["B2"] = dz.sum(axis=0)
    dh = (dz @ w2) * (h > 0)          # through the Relu branch
    if not frozen_branch:
        g["W3"] = dz.T @ t
        dh = dh + (dz @ w3) * (1 - t * t)  # fan-out: h's gradient is the sum of both branches
    g["W1"] = dh.T @ X
    g["B1"] = dh.sum(axis=0)
    g["X"] = dh @ w1
    return loss, z, g


loss, z, g = fanout(W1, B1, W2, B2, W3)
print("== fan-out network")
print("loss: %.9g" % loss)
for k in ("W1", "B1", "W2", "B2", "W3", "X"):
    fmt("grad " + k, g[k])

# One SGD step: lr 0.1, momentum 0.9 (first step: buffer = gradient), weight
# decay 0.01 on the weights W1, W2, W3 only (not on the biases).
params = {"W1": W1, "B1": B1, "W2": W2, "B2": B2, "W3": W3}
decay = {"W1": 0.01, "W2": 0.01, "W3": 0.01, "B1": 0.0, "B2": 0.0}
for k, w in params.items():
    fmt("sgd step " + k, w - 0.1 * (g[k] + decay[k] * w))

# ----------------------------------------------------------------- frozen ---
# The Gemm reading W3 is frozen (training: false): as with a detached branch in
# PyTorch, W3 gets no gradient and sends none back, so h's gradient comes from
# the Relu branch alone. Two Adam steps (lr 0.01, L2 weight decay 0.1 on
# weights) on the same batch; W3 must not change at all (not even by decay).
print("== frozen branch, two Adam steps")
p = {k: v.copy() for k, v in params.items() if k != "W3"}
m = {k: np.zeros_like(v) for k, v in p.items()}
v2 = {k: np.zeros_like(v) for k, v in p.items()}
for t in (1, 2):
    loss, _, g = fanout(p["W1"], p["B1"], p["W2"], p["B2"], W3, frozen_branch=True)
    print("loss at step %d: %.9g" % (t, loss))
    for k in p:
        gk = g[k] + (0.1 * p[k] if k.startswith("W") else 0.0)
        m[k] = 0.9 * m[k] + 0.1 * gk
        v2[k] = 0.999 * v2[k] + 0.001 * gk * gk
        p[k] = p[k] - 0.01 * (m[k] / (1 - 0.9 ** t)) / (np.sqrt(v2[k] / (1 - 0.999 ** t)) + 1e-8)
for k in ("W1", "B1", "W2", "B2"):
    fmt("adam 2 steps " + k, p[k])

# ------------------------------------------------------- batch normalization ---
print("== BatchNormalization")
BX = np.array([[[0.5, -1.0], [2.0, 0.0]],
               [[1.5, 0.25], [-0.75, 1.0]],
               [[-0.5, 0.75], [0.25, -1.25]]])          # N=3, C=2, L=2
BY = np.array([0, 2, 1])
SCALE = np.array([1.5, 0.5])
SHIFT = np.array([0.1, -0.2])
RMEAN = np.array([0.2, -0.1])
RVAR = np.array([1.0, 2.0])
BW = np.array([[0.1, -0.2, 0.3, 0.05], [-0.15, 0.25, 0.1, -0.3], [0.2, 0.1, -0.1, 0.15]])
EPS = 1e-5
MOMENTUM = 0.9  # ONNX default
mu = BX.mean(axis=(0, 2))
var = BX.var(axis=(0, 2))            # biased
cnt = BX.shape[0] * BX.shape[2]
inv = 1 / np.sqrt(var + EPS)
xhat = (BX - mu[None, :, None]) * inv[None, :, None]
by = SCALE[None, :, None] * xhat + SHIFT[None, :, None]
z = by.reshape(3, 4) @ BW.T
loss, dz = xent(z, BY)
dy = (dz @ BW).reshape(BX.shape)
dscale = (dy * xhat).sum(axis=(0, 2))
dshift = dy.sum(axis=(0, 2))
dxhat = dy * SCALE[None, :, None]
dx = inv[None, :, None] / cnt * (cnt * dxhat - dxhat.sum(axis=(0, 2))[None, :, None]
                                 - xhat * (dxhat * xhat).sum(axis=(0, 2))[None, :, None])
print("loss: %.9g" % loss)
fmt("y", by)
fmt("grad scale", dscale)
fmt("grad B", dshift)
fmt("grad W", dz.T @ by.reshape(3, 4))
fmt("grad X", dx)
fmt("running_mean (ONNX)", MOMENTUM * RMEAN + (1 - MOMENTUM) * mu)
fmt("running_var (ONNX, biased)", MOMENTUM * RVAR + (1 - MOMENTUM) * var)
fmt("running_var (PyTorch momentum 0.1, unbiased)", MOMENTUM * RVAR + (1 - MOMENTUM) * var * cnt / (cnt - 1))
fmt("inference y with the initial running stats",
    SCALE[None, :, None] * (BX - RMEAN[None, :, None]) / np.sqrt(RVAR[None, :, None] + EPS) + SHIFT[None, :, None])

# ------------------------------------------------------------------- toy ---
# 8 points, class 1 when x0 + x1 > 1; Gemm(2->4) Tanh Gemm(4->2), full-batch
# SGD lr 0.1 momentum 0.9, 30 steps.
print("== toy problem")
TX = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0],
               [0.5, 0.2], [0.9, 0.8], [0.1, 0.7], [0.6, 0.7]])
TY = (TX.sum(axis=1) > 1).astype(int)
print("labels:", TY.tolist())
tw = {"W1": np.array([[0.5, -0.3], [0.2, 0.4], [-0.6, 0.1], [0.3, 0.3]]),
      "B1": np.zeros(4),
      "W2": np.array([[0.2, -0.5, 0.3, 0.1], [-0.4, 0.3, 0.2, -0.2]]),
      "B2": np.zeros(2)}


def toy(w):
    h = TX @ w["W1"].T + w["B1"]
    t = np.tanh(h)
    zz = t @ w["W2"].T + w["B2"]
    loss, dzz = xent(zz, TY)
    dh = (dzz @ w["W2"]) * (1 - t * t)
    return loss, {"W2": dzz.T @ t, "B2": dzz.sum(0), "W1": dh.T @ TX, "B1": dh.sum(0)}


buf = {}
losses = []
for step in range(30):
    loss, gg = toy(tw)
    losses.append(loss)
    for k in tw:
        buf[k] = gg[k] if k not in buf else 0.9 * buf[k] + gg[k]
        tw[k] = tw[k] - 0.1 * buf[k]
print("loss of step 1: %.9g" % losses[0])
print("loss of step 30 (before its update): %.9g" % losses[-1])
print("loss after 30 steps: %.9g" % toy(tw)[0])
for k in ("W1", "B1", "W2", "B2"):
    fmt("toy trained " + k, tw[k])
