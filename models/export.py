"""Export the trained facelet detector to ONNX (fixed input 1x3x256x256, opset 17)."""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from judgecam.vision.detector_pre import INPUT_SIZE

logger = logging.getLogger(__name__)

INPUT_NAME = "image"
OUTPUT_NAME = "maps"


def export_onnx(model: torch.nn.Module, path: Path, size: int = INPUT_SIZE) -> None:
    """Write `model` (eval mode) as a single self-contained ONNX file."""
    model.eval()
    dummy = torch.zeros(1, 3, size, size)
    torch.onnx.export(
        model,
        (dummy,),
        str(path),
        input_names=[INPUT_NAME],
        output_names=[OUTPUT_NAME],
        opset_version=17,
        dynamo=False,
    )
    import onnx

    checked = onnx.load(str(path))
    onnx.checker.check_model(checked)
    # Keep the weights inside the one file (a separate .data file would escape the hash).
    onnx.save_model(checked, str(path), save_as_external_data=False)


def main(argv: list[str] | None = None) -> int:
    """Export a saved state_dict (`train --checkpoint`) to ONNX with its hash file."""
    import argparse

    from judgecam.models.net import FaceletNet
    from judgecam.models.train import write_hash

    parser = argparse.ArgumentParser(prog="python -m judgecam.models.export")
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--width", type=int, default=24)
    args = parser.parse_args(argv)
    model = FaceletNet(args.width)
    model.load_state_dict(torch.load(args.checkpoint, weights_only=True))
    export_onnx(model, args.out)
    write_hash(args.out)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
