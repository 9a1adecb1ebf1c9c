#!/usr/bin/env python3
"""Times PyTorch's training step (index a preloaded batch, forward, backward, Adam step) for the
same model and batch as bench/step_bench.cpp, and prints the per-step times as JSON."""
import argparse
import json
import time

import torch
from torch import nn
import torch.nn.functional as F


class PyTorchExample(nn.Module):
    """PyTorch's examples/mnist Net, as gpulab's pytorch-example preset."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = torch.flatten(self.dropout1(x), 1)
        x = self.dropout2(F.relu(self.fc1(x)))
        return self.fc2(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    device = torch.device(args.device)
    count = args.batch * 16
    images = ((torch.randint(0, 256, (count, 1, 28, 28)).float() / 255 - 0.1307) / 0.3081).to(device)
    labels = torch.randint(0, 10, (count,)).to(device)
    net = PyTorchExample().to(device)
    net.train()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    times = []
    for s in range(args.warmup + args.steps):
        b = s % 16
        start = time.perf_counter()
        x, y = images[b * args.batch:(b + 1) * args.batch], labels[b * args.batch:(b + 1) * args.batch]
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        elapsed = (time.perf_counter() - start) * 1000
        if s >= args.warmup:
            times.append(elapsed)
    times.sort()
    print(json.dumps({"framework": "pytorch " + torch.__version__, "device": args.device,
                      "model": "pytorch-example", "batch": args.batch, "threads": args.threads,
                      "steps": args.steps, "median_ms": times[len(times) // 2],
                      "p10_ms": times[len(times) // 10], "p90_ms": times[len(times) * 9 // 10],
                      "mkldnn": torch.backends.mkldnn.is_available()}))


if __name__ == "__main__":
    main()
