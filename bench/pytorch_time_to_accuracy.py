#!/usr/bin/env python3
"""PyTorch eager's side of bench/time_to_accuracy: the same recipe as the gpulab run (see that
script), data preloaded on the GPU, test accuracy checked every --eval-every steps and at each
epoch end; prints the training seconds (evaluations excluded) to the first check at or above
the target, as one JSON line."""
import argparse
import json
import time

import torch
import torch.nn.functional as F

from pytorch_gpu_epoch import load_mnist, normalize, set_precision
from pytorch_step import PyTorchExample


def accuracy(net, images, labels):
    net.eval()
    correct = 0
    with torch.no_grad():
        for begin in range(0, images.shape[0], 1000):
            logits = net(normalize(images[begin:begin + 1000]))
            correct += (logits.argmax(1) == labels[begin:begin + 1000]).sum().item()
    net.train()
    return correct / images.shape[0]


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
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    device = torch.device("cuda")
    set_precision(args.precision)
    torch.manual_seed(args.seed)
    images, labels, test_images, test_labels = load_mnist(args.data_dir, device)
    net = PyTorchExample().to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=args.gamma)
    train_s, step, reached, best = 0.0, 0, None, 0.0
    count = images.shape[0]
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(count, device=device)
        for begin in range(0, count, args.batch):
            torch.cuda.synchronize()
            start = time.perf_counter()
            index = order[begin:begin + args.batch]
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(net(normalize(images[index])), labels[index])
            loss.backward()
            optimizer.step()
            loss.item()
            train_s += time.perf_counter() - start
            step += 1
            end_of_epoch = begin + args.batch >= count
            if step % args.eval_every == 0 or end_of_epoch:
                acc = accuracy(net, test_images, test_labels)
                best = max(best, acc)
                if acc >= args.target:
                    reached = {"time_to_target_s": train_s, "step_to_target": step,
                               "epoch": epoch, "test_accuracy": acc}
                    break
        scheduler.step()
        if reached:
            break
    print(json.dumps({"framework": "pytorch " + torch.__version__, "precision": args.precision,
                      "target": args.target, "reached": reached, "best_test_accuracy": best,
                      "steps": step, "train_s": train_s}))


if __name__ == "__main__":
    main()
