#!/usr/bin/python3
"""PyTorch yardstick for passlab's MobileNetV2 training step (models/mobilenet_v2.h).

The same network (torchvision's MobileNetV2 layout, written out here so that
only Debian's python3-torch is needed; without the classifier's dropout, as
passlab's step), the same step (forward with batch norm in training mode,
softmax cross-entropy against one-hot labels, backward, SGD with momentum
0.9, weight decay 4e-5, learning rate 0.045) and the same sizes. Prints the
median step time of --repeats timed steps after --warmup untimed ones, in
the form `passlab run` prints its own:

    step  median 123.4 ms  (min 120.1, max 130.9; 20 steps, 2 threads)

Usage: mobilenet_step.py [--width-mult 1.0] [--batch 8] [--image-size 64]
                         [--classes 1000] [--threads 2] [--warmup 3] [--repeats 20]
                         [--channels-last]
(passlab's --model-width is the stem's channel count: --width-mult = width / 32.)
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_divisible(v, divisor=8):
    """torchvision's _make_divisible: nearest multiple of 8, at most 10% below v."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def conv_bn(cin, cout, kernel, stride, groups, relu6):
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if relu6:
        layers.append(nn.ReLU6())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [] if expand == 1 else [conv_bn(cin, hidden, 1, 1, 1, True)]
        layers += [conv_bn(hidden, hidden, 3, stride, hidden, True),  # depthwise
                   conv_bn(hidden, cout, 1, 1, 1, False)]             # linear projection
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


# (expansion t, channels c, blocks n, first stride s)
STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


class MobileNetV2(nn.Module):
    def __init__(self, width_mult, classes):
        super().__init__()
        cin = make_divisible(32 * width_mult)
        head = make_divisible(1280 * max(1.0, width_mult))
        layers = [conv_bn(3, cin, 3, 2, 1, True)]
        for t, c, n, s in STAGES:
            cout = make_divisible(c * width_mult)
            for i in range(n):
                layers.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                cin = cout
        layers.append(conv_bn(cin, head, 1, 1, 1, True))
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(head, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--width-mult", type=float, default=1.0)
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
    model = MobileNetV2(a.width_mult, a.classes).train()
    images = torch.rand(a.batch, 3, a.image_size, a.image_size)
    labels = F.one_hot(torch.randint(0, a.classes, (a.batch,)), a.classes).float()
    if a.channels_last:
        model = model.to(memory_format=torch.channels_last)
        images = images.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.045, momentum=0.9, weight_decay=4e-5)

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
