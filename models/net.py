"""The facelet detector network: a small encoder-decoder with a stride-4 output.

A MobileNet-like encoder (depthwise-separable blocks) down to 1/16 of the input, a light
decoder back up to 1/4 with skip connections, and a 1x1 head: channel 0 a facelet-centre
heatmap (sigmoid inside the graph), channels 1.. the corner offsets (see
`judgecam.vision.detector_post`). About 0.3 M parameters: small enough for a Raspberry Pi 5 core.
"""

from __future__ import annotations

import logging

import torch
from torch import nn

from judgecam.vision.detector_post import HEATMAP_CHANNEL, OUTPUT_CHANNELS

logger = logging.getLogger(__name__)


def conv_bn(inputs: int, outputs: int, stride: int = 1, kernel: int = 3) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(inputs, outputs, kernel, stride, kernel // 2, bias=False),
        nn.BatchNorm2d(outputs),
        nn.ReLU(inplace=True),
    )


def separable(inputs: int, outputs: int, stride: int = 1) -> nn.Sequential:
    """Depthwise 3x3 then pointwise 1x1, each with batch norm and ReLU."""
    return nn.Sequential(
        nn.Conv2d(inputs, inputs, 3, stride, 1, groups=inputs, bias=False),
        nn.BatchNorm2d(inputs),
        nn.ReLU(inplace=True),
        nn.Conv2d(inputs, outputs, 1, bias=False),
        nn.BatchNorm2d(outputs),
        nn.ReLU(inplace=True),
    )


class FaceletNet(nn.Module):
    """(B, 3, S, S) RGB in [0, 1] -> (B, OUTPUT_CHANNELS, S/4, S/4)."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        w = width
        self.stem = nn.Sequential(conv_bn(3, w, 2), separable(w, w))  # 1/2
        self.down4 = nn.Sequential(separable(w, 2 * w, 2), separable(2 * w, 2 * w))  # 1/4
        self.down8 = nn.Sequential(separable(2 * w, 4 * w, 2), separable(4 * w, 4 * w))  # 1/8
        self.down16 = nn.Sequential(
            separable(4 * w, 6 * w, 2), separable(6 * w, 6 * w), separable(6 * w, 6 * w)
        )  # 1/16: context of a whole puzzle face
        self.up8 = separable(6 * w + 4 * w, 4 * w)
        self.up4 = separable(4 * w + 2 * w, 3 * w)
        self.refine = separable(3 * w, 3 * w)
        self.head = nn.Conv2d(3 * w, OUTPUT_CHANNELS, 1)
        with torch.no_grad():  # start with a low heatmap everywhere (few facelets per window)
            assert self.head.bias is not None
            self.head.bias[HEATMAP_CHANNEL] = -4.0

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """Raw outputs: heatmap logits and offsets."""
        s2 = self.stem(x)
        s4 = self.down4(s2)
        s8 = self.down8(s4)
        s16 = self.down16(s8)
        u8 = self.up8(torch.cat([nn.functional.interpolate(s16, scale_factor=2.0), s8], 1))
        u4 = self.up4(torch.cat([nn.functional.interpolate(u8, scale_factor=2.0), s4], 1))
        return self.head(self.refine(u4))  # type: ignore[no-any-return]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.logits(x)
        heat = torch.sigmoid(out[:, HEATMAP_CHANNEL : HEATMAP_CHANNEL + 1])
        return torch.cat([heat, out[:, HEATMAP_CHANNEL + 1 :]], 1)


def parameter_count(model: nn.Module) -> int:
    return sum(int(p.numel()) for p in model.parameters())
