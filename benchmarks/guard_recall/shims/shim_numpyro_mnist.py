"""numpyro's MNIST loader, without the download: 512 training and 256 test images of random
pixels with random labels, in the loader's own format."""

from __future__ import annotations

import numpy as np
from numpyro.examples import datasets


def _synthetic_mnist() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)

    def split(count: int) -> tuple[np.ndarray, np.ndarray]:
        images = rng.integers(0, 256, size=(count, 28, 28)).astype(np.float32) / np.float32(255)
        return images, rng.integers(0, 10, size=count).astype(np.int8)

    return {"train": split(512), "test": split(256)}


datasets._load_mnist = _synthetic_mnist
