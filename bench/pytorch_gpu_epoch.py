#!/usr/bin/env python3
"""PyTorch eager's side of bench/gpu_vs_pytorch: the pytorch-example model trained on MNIST with
the training set preloaded on the GPU as bytes, each batch gathered and normalized on the device
as gpulab does ((p/255 - 0.1307)/0.3081), Adam, the loss read back every step (as gpulab's
trainer does). Times the last of --epochs epochs and prints one JSON line."""
import argparse
import gzip
import json
import os
import time

import torch
import torch.nn.functional as F

from pytorch_step import PyTorchExample


def read_idx(folder, name):
    """The bytes of an IDX file (raw or .gz), its shape and where its data starts."""
    path = os.path.join(folder, name)
    if os.path.exists(path):
        with open(path, "rb") as f:
            data = f.read()
    else:
        with gzip.open(path + ".gz", "rb") as f:
            data = f.read()
    if data[:3] != b"\0\0\x08":
        raise ValueError(path + ": not an IDX file of unsigned bytes")
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return data, shape, 4 + 4 * dims


def idx_tensor(folder, name, device):
    data, shape, offset = read_idx(folder, name)
    return torch.frombuffer(bytearray(data), dtype=torch.uint8, offset=offset).reshape(shape).to(device)


def load_mnist(folder, device):
    """Train and test images (uint8, on the device) and labels (int64, on the device)."""
    return (idx_tensor(folder, "train-images-idx3-ubyte", device),
            idx_tensor(folder, "train-labels-idx1-ubyte", device).long(),
            idx_tensor(folder, "t10k-images-idx3-ubyte", device),
            idx_tensor(folder, "t10k-labels-idx1-ubyte", device).long())


def normalize(pixels):
    return ((pixels.float() / 255 - 0.1307) / 0.3081).unsqueeze(1)


def set_precision(precision):
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--precision", choices=["fp32", "tf32"], default="fp32")
    args = parser.parse_args()
    device = torch.device("cuda")
    set_precision(args.precision)
    torch.manual_seed(1)
    images, labels, _, _ = load_mnist(args.data_dir, device)
    net = PyTorchExample().to(device)
    net.train()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    count = images.shape[0]
    for epoch in range(args.epochs):
        order = torch.randperm(count, device=device)
        step_ms, loss_sum = [], 0.0
        torch.cuda.synchronize()
        epoch_start = time.perf_counter()
        for begin in range(0, count, args.batch):
            start = time.perf_counter()
            index = order[begin:begin + args.batch]
            x, y = normalize(images[index]), labels[index]
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(net(x), y)
            loss.backward()
            optimizer.step()
            loss_sum += loss.item()  # the host reads every step's loss, as gpulab's trainer
            step_ms.append((time.perf_counter() - start) * 1000)
        epoch_s = time.perf_counter() - epoch_start
    step_ms.sort()
    print(json.dumps({"framework": "pytorch " + torch.__version__, "device": torch.cuda.get_device_name(),
                      "model": "pytorch-example", "batch": args.batch, "precision": args.precision,
                      "epoch_s": epoch_s, "images_per_second": count / epoch_s,
                      "median_step_ms": step_ms[len(step_ms) // 2],
                      "train_loss": loss_sum / len(step_ms)}))


if __name__ == "__main__":
    main()
