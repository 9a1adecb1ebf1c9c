#!/usr/bin/env python3
"""PyTorch's side of bench/gpu_vs_pytorch: the pytorch-example model trained on MNIST with the
training set preloaded on the GPU as bytes, each batch gathered and normalized on the device as
gpulab does ((p/255 - 0.1307)/0.3081), written as PyTorch's best users write it: Adam with
fused=True, and the loss read one step late, so the host never waits for the step it has just
launched (gpulab's trainer waits for each step's forward). --mode compile adds
torch.compile(mode="reduce-overhead"): the forward and backward inductor-compiled and replayed as
CUDA graphs. Times the last of --epochs epochs (the first ones warm up, compiling included) and
prints one JSON line."""
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


def make_optimizer(net, lr):
    """Adam with every update in one fused kernel set, where this PyTorch has it."""
    try:
        return torch.optim.Adam(net.parameters(), lr=lr, fused=True)
    except (TypeError, RuntimeError):
        return torch.optim.Adam(net.parameters(), lr=lr)


def make_step(net, optimizer, mode):
    """step(pixels, labels) -> the batch's loss as a device tensor, nothing read back. In compile
    mode the loss is a copy: a CUDA graph's output is overwritten by its next replay, and the
    caller reads it one step later."""

    def loss_of(pixels, labels):
        return F.cross_entropy(net(normalize(pixels)), labels)

    if mode == "compile":
        import torch._dynamo

        # The last batch of an epoch is smaller: a graph of its own, not a dynamic-shape one.
        torch._dynamo.config.automatic_dynamic_shapes = False
        loss_of = torch.compile(loss_of, mode="reduce-overhead")

    def step(pixels, labels):
        optimizer.zero_grad(set_to_none=True)
        if mode == "compile":
            torch.compiler.cudagraph_mark_step_begin()
        loss = loss_of(pixels, labels)
        loss.backward()
        optimizer.step()
        return loss.detach().clone() if mode == "compile" else loss.detach()

    return step


class LateLoss:
    """Sums each step's loss when the next step has been launched: the host stays one step ahead
    of the GPU, as a training loop that logs its loss without stalling does."""

    def __init__(self):
        self.pending, self.total, self.count = None, 0.0, 0

    def add(self, loss):
        self.flush()
        self.pending = loss

    def flush(self):
        if self.pending is not None:
            self.total += self.pending.item()
            self.count += 1
            self.pending = None

    def mean(self):
        self.flush()
        return self.total / max(self.count, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--precision", choices=["fp32", "tf32"], default="fp32")
    parser.add_argument("--mode", choices=["eager", "compile"], default="eager")
    args = parser.parse_args()
    device = torch.device("cuda")
    set_precision(args.precision)
    torch.manual_seed(1)
    images, labels, _, _ = load_mnist(args.data_dir, device)
    net = PyTorchExample().to(device)
    net.train()
    optimizer = make_optimizer(net, 1e-3)
    step = make_step(net, optimizer, args.mode)
    count = images.shape[0]
    epoch_seconds = []
    for epoch in range(args.epochs):
        order = torch.randperm(count, device=device)
        losses = LateLoss()
        steps = 0
        torch.cuda.synchronize()
        epoch_start = time.perf_counter()
        for begin in range(0, count, args.batch):
            index = order[begin:begin + args.batch]
            losses.add(step(images[index], labels[index]))
            steps += 1
        train_loss = losses.mean()  # reads the last loss: the epoch's work is done
        torch.cuda.synchronize()
        epoch_seconds.append(time.perf_counter() - epoch_start)
    epoch_s = epoch_seconds[-1]
    print(json.dumps({"framework": "pytorch-" + args.mode, "version": torch.__version__,
                      "device": torch.cuda.get_device_name(), "model": "pytorch-example",
                      "batch": args.batch, "precision": args.precision,
                      "optimizer": "adam fused" if optimizer.defaults.get("fused") else "adam",
                      "epoch_s": epoch_s, "images_per_second": count / epoch_s,
                      "ms_per_step": 1000 * epoch_s / steps,
                      "warmup_s": sum(epoch_seconds[:-1]), "train_loss": train_loss}))


if __name__ == "__main__":
    main()
