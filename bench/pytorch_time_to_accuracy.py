#!/usr/bin/env python3
"""PyTorch's side of bench/time_to_accuracy: the same recipe as the gpulab run (see that script),
data preloaded on the GPU, the training step as bench/pytorch_gpu_epoch.py writes it (fused Adam,
the loss read one step late, --mode compile for torch.compile's CUDA graphs), test accuracy
checked every --eval-every steps and at each epoch end. The host waits for the GPU only at those
checks, and the clock stops there, so evaluations are excluded. Prints the training seconds and
the steps to the first check at or above the target, and ms per step, as one JSON line."""
import argparse
import json
import time

import torch

from pytorch_gpu_epoch import LateLoss, load_mnist, make_optimizer, make_step, normalize, set_precision
from pytorch_step import PyTorchExample


def accuracy(net, images, labels):
    net.eval()
    correct = torch.zeros((), dtype=torch.int64, device=images.device)
    with torch.no_grad():
        for begin in range(0, images.shape[0], 1000):
            logits = net(normalize(images[begin:begin + 1000]))
            correct += (logits.argmax(1) == labels[begin:begin + 1000]).sum()
    net.train()
    return correct.item() / images.shape[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--eval-every", type=int, default=200)
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument("--precision", choices=["fp32", "tf32"], default="fp32")
    parser.add_argument("--mode", choices=["eager", "compile"], default="eager")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    device = torch.device("cuda")
    set_precision(args.precision)
    torch.manual_seed(args.seed)
    images, labels, test_images, test_labels = load_mnist(args.data_dir, device)
    net = PyTorchExample().to(device)
    net.train()
    optimizer = make_optimizer(net, args.lr)
    train_step = make_step(net, optimizer, args.mode)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=args.gamma)
    train_s, step, reached, best = 0.0, 0, None, 0.0
    count = images.shape[0]
    losses = LateLoss()
    torch.cuda.synchronize()
    segment_start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(count, device=device)
        for begin in range(0, count, args.batch):
            index = order[begin:begin + args.batch]
            losses.add(train_step(images[index], labels[index]))
            step += 1
            end_of_epoch = begin + args.batch >= count
            if step % args.eval_every == 0 or end_of_epoch:
                losses.flush()
                torch.cuda.synchronize()
                train_s += time.perf_counter() - segment_start
                acc = accuracy(net, test_images, test_labels)
                best = max(best, acc)
                if acc >= args.target:
                    reached = {"time_to_target_s": train_s, "step_to_target": step,
                               "ms_per_step": 1000 * train_s / step, "epoch": epoch,
                               "test_accuracy": acc}
                    break
                segment_start = time.perf_counter()
        if reached:
            break
        scheduler.step()
    print(json.dumps({"framework": "pytorch-" + args.mode, "version": torch.__version__,
                      "precision": args.precision, "seed": args.seed, "target": args.target,
                      "reached": reached, "best_test_accuracy": best, "steps": step,
                      "train_s": train_s, "ms_per_step": 1000 * train_s / max(step, 1)}))


if __name__ == "__main__":
    main()
