"""Plots (matplotlib, an optional extra: ``pip install 'mechdesign[plot]'``).

* :func:`plot_sweep` — the objective against ε for the design, with the baselines' curves;
* :func:`plot_mechanisms` — heat maps of K[x, y], one panel per context;
* :func:`plot_curves` — generic mean ± std curves (benchmarks: EMD against ε).

Without matplotlib each raises a ProblemError (the command line exits with code 2). Strings from
the user (names, labels) are drawn literally: see :func:`literal`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

import numpy as np

from mechdesign.core.errors import ProblemError


def pyplot(purpose: str = "plotting", key: str = "--plot"):
    """matplotlib.pyplot on the Agg backend, or a ProblemError (exit 2) when it is missing."""
    try:
        import matplotlib
    except ImportError:
        raise ProblemError(f"{purpose} needs matplotlib, which is not installed: "
                           "pip install 'mechdesign[plot]'", key=key)
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def literal(text) -> str:
    """``str(text)`` with every ``$`` escaped, so that matplotlib draws it as written.

    matplotlib reads text between unescaped dollar signs as mathtext (``$\\nosuchcmd$`` is a
    parse error). Once every ``$`` is escaped there is no math mode, and outside math mode
    matplotlib draws backslashes as they are and only turns ``\\$`` back into ``$``; a user's
    own ``\\$`` becomes ``\\\\$``, drawn as ``\\$``. So escaping ``$`` alone makes any string literal.
    """
    return str(text).replace("$", r"\$")


def plot_formats() -> dict[str, str]:
    """File extensions matplotlib can save to, with their descriptions."""
    pyplot()
    from matplotlib.backend_bases import FigureCanvasBase

    return FigureCanvasBase.get_supported_filetypes()


def check_plot_path(path, key: str = "--plot") -> str:
    """Refuse, before any work, a plot path that cannot be written or whose extension is not a
    format matplotlib saves (ProblemError naming ``key``)."""
    from mechdesign.design.result import check_output_path

    path = check_output_path(path, key)
    formats = plot_formats()
    ext = os.path.splitext(path)[1][1:].lower()
    if ext not in formats:
        raise ProblemError(f"cannot tell the image format of '{path}' from its extension; expected "
                           f"one of: {', '.join(sorted(formats))}", key=key)
    return path


def _save(fig, path) -> str:
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ProblemError(f"cannot write the plot: no directory '{directory}'", key="--plot")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path


def plot_sweep(sweep_result, path, title: str | None = None) -> str:
    """Objective against ε: the certified design (failed points marked) and each baseline."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    eps = sweep_result.epsilons
    values = sweep_result.objectives
    ok = np.array([p.result.status == "optimal" for p in sweep_result.points])
    ax.plot(eps, values, "o-", color="black", label="optimal design", zorder=3)
    if np.any(~ok):
        ax.plot(eps[~ok], values[~ok], "x", color="red", markersize=9, label="not certified optimal")
    for name, curve in sweep_result.baselines.items():
        ys = np.array([np.nan if c["objective"] is None else c["objective"] for c in curve], dtype=float)
        if np.all(np.isnan(ys)):
            continue
        ax.plot([c["epsilon"] for c in curve], ys, ".--", label=literal(name))
    ax.set_xlabel("ε")
    ax.set_ylabel(literal(sweep_result.objective_kind))
    ax.set_title(literal(title or sweep_result.problem))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    out = _save(fig, path)
    plt.close(fig)
    return out


def plot_mechanisms(mechanisms: Mapping, path, title: str | None = None) -> str:
    """Heat maps of the mechanisms (a Result, or a mapping name -> Mechanism), one per context."""
    plt = pyplot()
    mechs = dict(mechanisms.mechanisms) if hasattr(mechanisms, "mechanisms") else dict(mechanisms)
    if not mechs:
        raise ProblemError("there is no mechanism to plot (the solve produced none)", key="--plot")
    title = title or getattr(mechanisms, "problem", None)
    n = len(mechs)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.0 * cols + 1.0, 3.8 * rows), squeeze=False,
                             layout="constrained")
    top = max(max(float(m.matrix.max()) for m in mechs.values()), 1e-12)
    im = None
    for ax, (name, mech) in zip(axes.ravel(), mechs.items()):
        k = mech.matrix
        im = ax.imshow(k, cmap="viridis", vmin=0.0, vmax=top, aspect="auto", interpolation="nearest")
        ax.set_title(literal(name) if n > 1 or name != "default" else "K[x, y]")
        ax.set_xlabel("output y")
        ax.set_ylabel("input x")
        if k.shape[1] <= 20:
            ax.set_xticks(range(k.shape[1]), [literal(v) for v in mech.outputs.labels], rotation=90,
                          fontsize=7)
        if k.shape[0] <= 20:
            ax.set_yticks(range(k.shape[0]), [literal(v) for v in mech.inputs.labels], fontsize=7)
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.9, label="Pr[y | x]")
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    if title:
        fig.suptitle(literal(title))
    out = _save(fig, path)
    plt.close(fig)
    return out


def plot_curves(x, series: Mapping[str, tuple], path, xlabel: str, ylabel: str,
                title: str | None = None, logy: bool = False) -> str:
    """Mean curves with ± one standard deviation bands; ``series`` maps a label to (mean, std)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    x = np.asarray(x, dtype=float)
    for label, (mean, std) in series.items():
        mean, std = np.asarray(mean, float), np.asarray(std, float)
        ax.plot(x, mean, "o-", label=literal(label), markersize=3)
        ax.fill_between(x, mean - std, mean + std, alpha=0.2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(literal(title))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    out = _save(fig, path)
    plt.close(fig)
    return out
