#!/usr/bin/env python3
"""Makes the cross-framework golden data in tests/data/golden: a tiny MNIST-format data set,
PyTorch-initialized weights as safetensors, and the losses PyTorch computes for 20 training steps.
gpulab's tests load the same weights and data and must reproduce the losses.

Run with Debian's python3-torch: /usr/bin/python3 tests/golden/make_golden.py
"""
import json
import os
import struct

import numpy as np
import torch
from torch import nn

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "golden")
MEAN, STD = 0.1307, 0.3081

# Model configs in gpulab's JSON format (the presets, dropout off where noted).
def conv(out, k, pad=0): return {"type": "conv2d", "out_channels": out, "kernel": k, "padding": pad}
def linear(out): return {"type": "linear", "out_features": out}
def pool(): return {"type": "maxpool2d", "kernel": 2, "stride": 2}
def simple(t): return {"type": t}

MODELS = {
    "lenet5": [conv(6, 5, 2), simple("tanh"), pool(), conv(16, 5), simple("tanh"), pool(),
               simple("flatten"), linear(120), simple("tanh"), linear(84), simple("tanh"), linear(10)],
    "pytorch-example": [conv(32, 3), simple("relu"), conv(64, 3), simple("relu"), pool(),
                        simple("flatten"), linear(128), simple("relu"), linear(10)],
}
RECIPES = [  # model, optimizer, lr, momentum, batch, steps
    ("lenet5", "momentum", 0.05, 0.9, 16, 20),
    ("pytorch-example", "adam", 0.001, 0.0, 16, 20),
]


class Net(nn.Module):
    """Builds a gpulab layer list with gpulab's (PyTorch-style) names: conv1, fc1, ..."""

    def __init__(self, layers):
        super().__init__()
        self.order = []
        counters = {}
        channels, size = 1, 28
        features = None
        for spec in layers:
            t = spec["type"]
            prefix = {"conv2d": "conv", "linear": "fc", "maxpool2d": "pool", "relu": "relu",
                      "tanh": "tanh", "flatten": "flatten", "dropout": "dropout"}[t]
            counters[prefix] = counters.get(prefix, 0) + 1
            name = f"{prefix}{counters[prefix]}"
            if t == "conv2d":
                module = nn.Conv2d(channels, spec["out_channels"], spec["kernel"],
                                   padding=spec.get("padding", 0))
                channels = spec["out_channels"]
                size = size + 2 * spec.get("padding", 0) - spec["kernel"] + 1
            elif t == "maxpool2d":
                module = nn.MaxPool2d(2, 2)
                size //= 2
            elif t == "relu":
                module = nn.ReLU()
            elif t == "tanh":
                module = nn.Tanh()
            elif t == "flatten":
                module = nn.Flatten()
                features = channels * size * size
            elif t == "linear":
                module = nn.Linear(features, spec["out_features"])
                features = spec["out_features"]
            setattr(self, name, module)
            self.order.append(name)

    def forward(self, x):
        for name in self.order:
            x = getattr(self, name)(x)
        return x


def write_idx(path, array):
    dims = array.shape
    with open(path, "wb") as f:
        f.write(struct.pack(">BBBB", 0, 0, 0x08, len(dims)))
        for d in dims:
            f.write(struct.pack(">I", d))
        f.write(array.astype(np.uint8).tobytes())


def make_images(count, seed):
    """Noise plus a bright 6x6 square whose place depends on the label: learnable, tiny."""
    rng = np.random.default_rng(seed)
    labels = np.arange(count) % 10
    rng.shuffle(labels)
    images = rng.integers(0, 60, size=(count, 28, 28))
    for i, label in enumerate(labels):
        r, c = 3 + (label // 5) * 12, 2 + (label % 5) * 5
        images[i, r:r + 6, c:c + 6] = 200 + rng.integers(0, 55)
    return images.astype(np.uint8), labels.astype(np.uint8)


def save_safetensors(path, tensors, metadata):
    header = {"__metadata__": metadata}
    offset = 0
    blobs = []
    for name, t in tensors.items():
        data = t.detach().contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def main():
    os.makedirs(OUT, exist_ok=True)
    train_images, train_labels = make_images(64, 1)
    test_images, test_labels = make_images(32, 2)
    write_idx(os.path.join(OUT, "train-images-idx3-ubyte"), train_images)
    write_idx(os.path.join(OUT, "train-labels-idx1-ubyte"), train_labels)
    write_idx(os.path.join(OUT, "t10k-images-idx3-ubyte"), test_images)
    write_idx(os.path.join(OUT, "t10k-labels-idx1-ubyte"), test_labels)

    x_all = (torch.from_numpy(train_images).float().unsqueeze(1) / 255.0 - MEAN) / STD
    y_all = torch.from_numpy(train_labels).long()
    golden = {"torch_version": torch.__version__, "runs": []}
    for model_name, optimizer, lr, momentum, batch, steps in RECIPES:
        torch.manual_seed(0)
        net = Net(MODELS[model_name])
        config = {"name": model_name, "input": [1, 28, 28], "classes": 10, "layers": MODELS[model_name]}
        init_file = f"{model_name}_init.safetensors"
        save_safetensors(os.path.join(OUT, init_file), net.state_dict(),
                         {"format": "pt", "gpulab.model": json.dumps(config)})
        if optimizer == "momentum":
            opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
        else:
            opt = torch.optim.Adam(net.parameters(), lr=lr)
        losses = []
        per_epoch = (len(y_all) + batch - 1) // batch
        for step in range(steps):
            b = step % per_epoch  # shuffle off: file order, every epoch
            x, y = x_all[b * batch:(b + 1) * batch], y_all[b * batch:(b + 1) * batch]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        golden["runs"].append({"model": model_name, "init": init_file, "optimizer": optimizer,
                               "lr": lr, "momentum": momentum, "batch": batch, "losses": losses})
        print(model_name, optimizer, ["%.5f" % v for v in losses[:3]], "...", "%.5f" % losses[-1])
    with open(os.path.join(OUT, "losses.json"), "w") as f:
        json.dump(golden, f, indent=1)


if __name__ == "__main__":
    main()
