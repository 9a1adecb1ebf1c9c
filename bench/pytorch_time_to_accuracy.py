#!/usr/bin/env python3
"""PyTorch's side of bench/time_to_accuracy: the same recipe as the gpulab run (see that script),
data preloaded on the device, the training step as bench/pytorch_gpu_epoch.py writes it (fused
Adam, the loss read one step late, --mode compile for torch.compile's CUDA graphs), test accuracy
checked every --eval-every steps and at each epoch end. The host waits for the GPU only at those
checks, and the clock stops there, so evaluations are excluded. Prints the training seconds and
the steps to the first check at or above the target, and ms per step, as one JSON line.
--recipe example: pytorch-example, Adam 1e-3, batch 64, StepLR x0.7 per epoch, up to 5 epochs;
--recipe fast: gpulab's fast-mnist preset (FastMnist below) for one epoch under OneCycleLR with
gpulab's onecycle settings (engine/model/optimizer.cpp: max_lr = --lr, pct_start 0.3, cosine,
div_factor 25, final_div_factor 1e4, the momentum not cycled), checked at the epoch's end."""
import argparse
import json
import time

import torch
from torch import nn
import torch.nn.functional as F

from pytorch_gpu_epoch import LateLoss, load_mnist, make_optimizer, make_step, normalize, set_precision
from pytorch_step import PyTorchExample


class FastMnist(nn.Module):
    """gpulab's fast-mnist preset: conv 32@3x3, ReLU, max pool, conv 64@3x3, ReLU, max pool,
    fc 128, ReLU, fc 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc1 = nn.Linear(64 * 5 * 5, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


# Each recipe's model, batch, lr, epochs and test checks; flags given on the command line win.
RECIPES = {
    "example": {"model": PyTorchExample, "batch": 64, "lr": 1e-3, "epochs": 5, "eval_every": 200,
                "schedule": "step"},
    "fast": {"model": FastMnist, "batch": 32, "lr": 2.5e-3, "epochs": 1, "eval_every": 0,
             "schedule": "onecycle"},
}


def make_scheduler(schedule, optimizer, args, steps_per_epoch):
    """StepLR stepped at each epoch's end, or OneCycleLR stepped after every optimizer step."""
    if schedule == "step":
        return torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=args.gamma)
    return torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=steps_per_epoch * args.epochs, pct_start=0.3,
        anneal_strategy="cos", cycle_momentum=False, div_factor=25.0, final_div_factor=1e4)


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
    parser.add_argument("--recipe", choices=sorted(RECIPES), default="example")
    parser.add_argument("--batch", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--eval-every", type=int, help="0: at each epoch's end only")
    parser.add_argument("--device", default="cuda", help="cuda or cpu")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: PyTorch's choice)")
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument("--precision", choices=["fp32", "tf32"], default="fp32")
    parser.add_argument("--mode", choices=["eager", "compile"], default="eager")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    recipe = RECIPES[args.recipe]
    for key in ("batch", "lr", "epochs", "eval_every"):
        if getattr(args, key) is None:
            setattr(args, key, recipe[key])
    device = torch.device(args.device)
    on_gpu = device.type == "cuda"
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    def synchronize():
        if on_gpu:
            torch.cuda.synchronize()

    set_precision(args.precision)
    torch.manual_seed(args.seed)
    images, labels, test_images, test_labels = load_mnist(args.data_dir, device)
    net = recipe["model"]().to(device)
    net.train()
    optimizer = make_optimizer(net, args.lr)
    train_step = make_step(net, optimizer, args.mode)
    count = images.shape[0]
    steps_per_epoch = (count + args.batch - 1) // args.batch
    scheduler = make_scheduler(recipe["schedule"], optimizer, args, steps_per_epoch)
    train_s, step, reached, best = 0.0, 0, None, 0.0
    losses = LateLoss()
    synchronize()
    segment_start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(count, device=device)
        for begin in range(0, count, args.batch):
            index = order[begin:begin + args.batch]
            losses.add(train_step(images[index], labels[index]))
            if recipe["schedule"] == "onecycle":
                scheduler.step()
            step += 1
            end_of_epoch = begin + args.batch >= count
            if (args.eval_every > 0 and step % args.eval_every == 0) or end_of_epoch:
                losses.flush()
                synchronize()
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
        if recipe["schedule"] == "step":
            scheduler.step()
    print(json.dumps({"framework": "pytorch-" + args.mode, "version": torch.__version__,
                      "recipe": args.recipe, "device": args.device,
                      "threads": torch.get_num_threads(), "batch": args.batch, "lr": args.lr,
                      "precision": args.precision, "seed": args.seed, "target": args.target,
                      "reached": reached, "best_test_accuracy": best, "steps": step,
                      "train_s": train_s, "ms_per_step": 1000 * train_s / max(step, 1)}))


if __name__ == "__main__":
    main()
