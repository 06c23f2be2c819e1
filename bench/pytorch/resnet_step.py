#!/usr/bin/python3
"""PyTorch yardstick for passlab's ResNet training step (models/resnet.h).

The same network (torchvision's ResNet v1.5 layout, written out here so that
only Debian's python3-torch is needed), the same step (forward with batch
norm in training mode, softmax cross-entropy against one-hot labels,
backward, SGD with momentum 0.9, weight decay 1e-4, learning rate 0.1) and
the same sizes. Prints the median step time of --repeats timed steps after
--warmup untimed ones, in the form `passlab run` prints its own:

    step  median 123.4 ms  (min 120.1, max 130.9; 20 steps, 2 threads)

Usage: resnet_step.py [--depth 18|34|50|101|152] [--batch 8] [--image-size 64]
                      [--classes 1000] [--threads 2] [--warmup 3] [--repeats 20]
                      [--channels-last]
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, width, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, width, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.down = None
        if stride != 1 or cin != width:
            self.down = nn.Sequential(nn.Conv2d(cin, width, 1, stride, bias=False), nn.BatchNorm2d(width))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, width, stride):
        super().__init__()
        out = width * 4
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)  # v1.5: stride here
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.down = None
        if stride != 1 or cin != out:
            self.down = nn.Sequential(nn.Conv2d(cin, out, 1, stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


LAYERS = {18: (BasicBlock, [2, 2, 2, 2]), 34: (BasicBlock, [3, 4, 6, 3]), 50: (Bottleneck, [3, 4, 6, 3]),
          101: (Bottleneck, [3, 4, 23, 3]), 152: (Bottleneck, [3, 8, 36, 3])}


class ResNet(nn.Module):
    def __init__(self, depth, classes):
        super().__init__()
        block, counts = LAYERS[depth]
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for stage, n in enumerate(counts):
            width = 64 << stage
            for i in range(n):
                blocks.append(block(cin, width, 2 if (i == 0 and stage > 0) else 1))
                cin = width * block.expansion
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--depth", type=int, default=18, choices=sorted(LAYERS))
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--channels-last", action="store_true", help="NHWC memory format (passlab's default layout)")
    a = p.parse_args()

    torch.manual_seed(1)
    torch.set_num_threads(a.threads)
    model = ResNet(a.depth, a.classes).train()
    images = torch.rand(a.batch, 3, a.image_size, a.image_size)
    labels = F.one_hot(torch.randint(0, a.classes, (a.batch,)), a.classes).float()
    if a.channels_last:
        model = model.to(memory_format=torch.channels_last)
        images = images.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

    def step():
        opt.zero_grad(set_to_none=True)
        logits = model(images)
        loss = -(labels * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
        loss.backward()
        opt.step()
        return loss

    for _ in range(a.warmup):
        step()
    times = []
    for _ in range(a.repeats):
        t = time.perf_counter()
        step()
        times.append((time.perf_counter() - t) * 1e3)
    print(f"step  median {statistics.median(times):.1f} ms  (min {min(times):.1f}, max {max(times):.1f}; "
          f"{a.repeats} steps, {a.threads} threads)")


if __name__ == "__main__":
    main()
