#!/usr/bin/python3
"""Exports SqueezeNet 1.1 (Iandola et al., torchvision's squeezenet1_1 layout), adapted to
MNIST, to ONNX opset 9 with PyTorch: the file examples/classic/squeezenet_mnist.onnx that
examples/classic/README.md imports and trains.

The adaptation (README.md, "What was adapted"): a 1-channel first convolution (MNIST is
grey), 10 classes, the Fire modules' widths divided by 4 (32x32 inputs are small), MaxPools
with floor rounding (ceil_mode needs opset 10), no ReLU after the classifier convolution and
no Softmax at the end (the loss takes the logits, which may be negative). Weights are
initialized as torchvision's SqueezeNet (biases as PyTorch's default), seeded.

Usage: /usr/bin/python3 examples/classic/export_squeezenet.py [OUT.onnx]   (torch 1.13)"""
import pathlib
import sys

import torch
from torch import nn


class Fire(nn.Module):
    def __init__(self, cin, squeeze, expand):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.expand1x1 = nn.Conv2d(squeeze, expand, 1)
        self.expand3x3 = nn.Conv2d(squeeze, expand, 3, padding=1)

    def forward(self, x):
        x = torch.relu(self.squeeze(x))
        return torch.cat([torch.relu(self.expand1x1(x)), torch.relu(self.expand3x3(x))], 1)


class SqueezeNet11(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, stride=1), nn.ReLU(), nn.MaxPool2d(3, 2),
            Fire(16, 4, 16), Fire(32, 4, 16), nn.MaxPool2d(3, 2),
            Fire(32, 8, 32), Fire(64, 8, 32), nn.MaxPool2d(3, 2),
            Fire(64, 12, 48), Fire(96, 12, 48), Fire(96, 16, 64), Fire(128, 16, 64))
        final = nn.Conv2d(128, classes, 1)
        self.classifier = nn.Sequential(nn.Dropout(0.5), final, nn.AdaptiveAvgPool2d(1))
        # torchvision's initialization of SqueezeNet's weights: Kaiming-uniform, the final
        # convolution N(0, 0.01). The biases keep PyTorch's default (uniform): torchvision's
        # zeros would be identical tensors, which the exporter merges into one initializer.
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "squeezenet_mnist.onnx")
    torch.manual_seed(24)
    model = SqueezeNet11().eval()
    torch.onnx.export(model, torch.zeros(1, 1, 28, 28), str(out), opset_version=9, input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                      do_constant_folding=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
