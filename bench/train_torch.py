#!/usr/bin/python3
"""PyTorch 1.13's time for the cases of bench/train_bench: a training step of
64 and inference of 256 of LeNet-5 (examples/lenet5.json) and of the ResNet
example (examples/resnet.json), the same networks, losses and optimizers
(the examples' .train.json), 1 and 2 threads (torch.set_num_threads).
Training is model.train(), forward, loss, backward, optimizer step;
inference is model.eval() under torch.no_grad(), the logits and the loss.
Writes Google Benchmark-style JSON (names BM_<Net><Case>/<threads>, the
mean real time per iteration in ms, as train_bench reports it) for
bench/train_compare.py.

Usage: /usr/bin/python3 bench/train_torch.py OUT.json [--min-time S] [--filter REGEX]
"""
import argparse
import json
import os
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_common import fastest, write_benchmarks  # noqa: E402  (bench/bench_common.py)

EXAMPLES = os.path.join(HERE, "..", "examples")


class LeNet5(nn.Module):
    """examples/lenet5.json: Conv 5x5 pad 2, Relu, MaxPool 2, Conv 5x5, Relu,
    AveragePool 2, Flatten, Gemm 400-120-84-10 with Relu, cross-entropy (mean)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x, label):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.avg_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        logits = self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
        return logits, F.cross_entropy(logits, label)


class ResNet(nn.Module):
    """examples/resnet.json: a stem (Conv 3x3, BatchNormalization, Relu,
    MaxPool 2), a basic block of 16 channels, a block of 64 with stride 2 and
    a 1x1 downsampling branch, GlobalAveragePool, Gemm; the loss is
    0.9 * cross-entropy - 0.1 * mean(log_softmax) (label smoothing)."""

    def __init__(self):
        super().__init__()

        def conv(cin, cout, k=3, stride=1):
            return nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False)

        # ONNX momentum 0.9 (running = 0.9 running + 0.1 batch) is PyTorch's 0.1.
        bn = lambda c: nn.BatchNorm2d(c, eps=1e-5, momentum=0.1)
        self.stem, self.stem_bn = conv(1, 16), bn(16)
        self.b1c1, self.b1n1, self.b1c2, self.b1n2 = conv(16, 16), bn(16), conv(16, 16), bn(16)
        self.b2c1, self.b2n1, self.b2c2, self.b2n2 = conv(16, 64, stride=2), bn(64), conv(64, 64), bn(64)
        self.down, self.down_bn = conv(16, 64, k=1, stride=2), bn(64)
        self.fc = nn.Linear(64, 10)

    def forward(self, x, label):
        x = F.max_pool2d(F.relu(self.stem_bn(self.stem(x))), 2)
        y = F.relu(self.b1n1(self.b1c1(x)))
        x = F.relu(self.b1n2(self.b1c2(y)) + x)
        y = F.relu(self.b2n1(self.b2c1(x)))
        x = F.relu(self.b2n2(self.b2c2(y)) + self.down_bn(self.down(x)))
        logits = self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))
        xent = F.cross_entropy(logits, label)
        loss = 0.9 * xent - 0.1 * F.log_softmax(logits, 1).mean()
        return logits, loss


NETS = {"LeNet5": (LeNet5, "lenet5.train.json"), "ResNet": (ResNet, "resnet.train.json")}


def optimizer_of(model, config_file):
    with open(os.path.join(EXAMPLES, config_file)) as f:
        opt = json.load(f)["optimizer"]
    kind = opt["type"]
    if kind == "sgd":
        return torch.optim.SGD(model.parameters(), lr=opt["lr"], momentum=opt.get("momentum", 0.0),
                               weight_decay=opt.get("weight_decay", 0.0))
    if kind == "adam":
        return torch.optim.Adam(model.parameters(), lr=opt["lr"], weight_decay=opt.get("weight_decay", 0.0))
    if kind == "adamw":
        return torch.optim.AdamW(model.parameters(), lr=opt["lr"], weight_decay=opt.get("weight_decay", 0.0))
    raise SystemExit(f"train_torch.py: no PyTorch optimizer for {kind}")


def batch(n):
    gen = torch.Generator().manual_seed(n)
    return torch.rand(n, 1, 28, 28, generator=gen), torch.arange(n) % 10


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--min-time", type=float, default=0.5)
    parser.add_argument("--filter", default=".")
    args = parser.parse_args()
    results = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for net, (make, config) in NETS.items():
            torch.manual_seed(1)
            model = make()
            optimizer = optimizer_of(model, config)
            x, label = batch(64)

            def step():
                model.train()
                optimizer.zero_grad(set_to_none=True)
                _, loss = model(x, label)
                loss.backward()
                optimizer.step()

            xi, label_i = batch(256)

            def infer():
                model.eval()
                with torch.no_grad():
                    model(xi, label_i)

            for case, fn in (("TrainStep", step), ("Inference", infer)):
                name = f"BM_{net}{case}/{threads}"
                if re.search(args.filter, name):
                    # The mean over one run of at least min_time, after 3 warm-up calls.
                    ms = fastest(fn, 1, args.min_time, warmups=3)
                    results.append({"name": name, "real_time": ms, "time_unit": "ms"})
                    print(f"{name:28s} {ms:8.2f} ms", flush=True)
    write_benchmarks(args.out, {"torch": torch.__version__}, results)


if __name__ == "__main__":
    main()
