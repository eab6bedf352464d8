"""PNG charts of ``cogbench report``: one colour per model across every chart.

Inputs are plain series (label -> values and intervals) that ``runs_report``
prepares; nothing here reads files. matplotlib is imported where used, with the
Agg backend, so no display is needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

PUBLISHED_STYLE = {"linestyle": "--", "linewidth": 1.3, "alpha": 0.9, "markersize": 4}
PUBLISHED_MARKERS = "osD^v"
DPI = 130


@dataclass
class Series:
    """One model's values on the chart's categories; ``intervals`` [low, high] per value where known."""

    label: str
    values: list[float | None]
    intervals: list[list[float] | None] = field(default_factory=list)
    published: bool = False


def model_colours(runs: Sequence[str], published: Sequence[str] = ()) -> dict[str, tuple]:
    """A fixed colour per label: runs from one palette, published models from another, so they never collide."""
    import matplotlib

    strong = list(matplotlib.colormaps["tab10"].colors) + list(matplotlib.colormaps["tab20b"].colors)
    muted = list(matplotlib.colormaps["Dark2"].colors)
    colours = {label: strong[i % len(strong)] for i, label in enumerate(dict.fromkeys(runs))}
    for i, label in enumerate(m for m in dict.fromkeys(published) if m not in colours):
        colours[label] = muted[i % len(muted)]
    return colours


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path, note: str = "", right: float = 1.0, top: float = 1.0) -> Path:
    """The end of every chart: an optional footnote, the layout (inside ``right``/``top``), the PNG."""
    if note:
        fig.text(0.01, 0.01, note, fontsize=7.5, color="dimgrey")
    fig.tight_layout(rect=(0, 0.04 if note else 0, right, top))
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    _pyplot().close(fig)
    return path


def radar(path: Path, title: str, categories: Sequence[str], series: Sequence[Series], colours: dict[str, tuple]) -> Path:
    """Scores per category on a closed polygon, 0-100; published models dashed."""
    import numpy as np

    plt = _pyplot()
    angles = np.linspace(0, 2 * np.pi, len(categories), endpoint=False).tolist()
    fig, ax = plt.subplots(figsize=(8.5, 7), subplot_kw={"polar": True})
    for i, s in enumerate(series):
        values = [v if v is not None else 0.0 for v in s.values]
        style = {**PUBLISHED_STYLE, "marker": PUBLISHED_MARKERS[i % len(PUBLISHED_MARKERS)]} if s.published else {"linewidth": 2.2}
        label = f"{s.label} (published)" if s.published else s.label
        ax.plot(angles + angles[:1], values + values[:1], color=colours[s.label], label=label, **style)
        if not s.published:
            ax.fill(angles + angles[:1], values + values[:1], color=colours[s.label], alpha=0.08)
    ax.set_xticks(angles)
    ax.set_xticklabels([c.replace(" ", "\n", 1) if len(c) > 12 else c for c in categories], fontsize=9)
    ax.set_ylim(0, 100)
    ax.set_yticks([20, 40, 60, 80, 100])
    ax.set_yticklabels(["20%", "40%", "60%", "80%", "100%"], fontsize=7, color="grey")
    ax.set_title(title, fontsize=12, pad=22)
    ax.legend(loc="upper left", bbox_to_anchor=(1.08, 1.05), fontsize=8, frameon=False)
    return _save(fig, path)


def grouped_bars(path: Path, title: str, groups: Sequence[str], series: Sequence[Series], colours: dict[str, tuple],
                 ylabel: str = "score (%)", note: str = "", reference: float | None = None) -> Path:
    """Bars per group (metric or category), one bar per model, 95% interval whiskers; published bars hatched."""
    import numpy as np

    plt = _pyplot()
    width = 0.8 / max(len(series), 1)
    fig, ax = plt.subplots(figsize=(max(7.0, 1.2 + len(groups) * (0.45 + 0.32 * len(series))), 4.8))
    x = np.arange(len(groups))
    for i, s in enumerate(series):
        positions = x - 0.4 + width * (i + 0.5)
        heights = [v if v is not None else 0.0 for v in s.values]
        bars = ax.bar(positions, heights, width * 0.92, color=colours[s.label],
                      label=f"{s.label} (published)" if s.published else s.label,
                      hatch="//" if s.published else None, alpha=0.55 if s.published else 0.9,
                      edgecolor="white" if s.published else None)
        if s.intervals:
            lows = [max(v - ci[0], 0.0) if ci and v is not None else 0.0 for v, ci in zip(s.values, s.intervals)]
            highs = [max(ci[1] - v, 0.0) if ci and v is not None else 0.0 for v, ci in zip(s.values, s.intervals)]
            ax.errorbar(positions, heights, yerr=[lows, highs], fmt="none", ecolor="black", capsize=3, linewidth=1)
        tops = [ci[1] if ci else v for v, ci in zip(s.values, s.intervals)] if s.intervals else s.values
        for bar, value, top in zip(bars, s.values, tops):
            ax.text(bar.get_x() + bar.get_width() / 2, 1 if value is None else (top if top is not None else value) + 1,
                    "not scored" if value is None else f"{value:.0f}", ha="center", va="bottom", fontsize=7,
                    rotation=90 if value is None else 0)
    if reference is not None:
        ax.axhline(reference, color="dimgrey", linestyle="--", linewidth=1)
    ax.set_xticks(x)
    ax.set_xticklabels(groups, fontsize=9)
    ax.set_ylim(0, 110)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=12)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, path, note)


def paired_panels(path: Path, title: str, groups: Sequence[str], panels: Sequence[tuple[str, Sequence[Series]]],
                  colours: dict[str, tuple], note: str = "") -> Path:
    """Side-by-side bar panels sharing groups and colours (CODIS Acc_p and Acc_q per category)."""
    import numpy as np

    plt = _pyplot()
    n_series = max(len(s) for _, s in panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.8), sharey=True)
    width = 0.8 / max(n_series, 1)
    x = np.arange(len(groups))
    for ax, (panel_title, series) in zip(np.atleast_1d(axes), panels):
        for i, s in enumerate(series):
            positions = x - 0.4 + width * (i + 0.5)
            heights = [v if v is not None else 0.0 for v in s.values]
            ax.bar(positions, heights, width * 0.92, color=colours[s.label], label=s.label)
            lows = [max(v - ci[0], 0.0) if ci and v is not None else 0.0 for v, ci in zip(s.values, s.intervals)]
            highs = [max(ci[1] - v, 0.0) if ci and v is not None else 0.0 for v, ci in zip(s.values, s.intervals)]
            ax.errorbar(positions, heights, yerr=[lows, highs], fmt="none", ecolor="black", capsize=3, linewidth=1)
        ax.set_xticks(x)
        ax.set_xticklabels([g.replace(" and ", " &\n").replace(" ", "\n", 1) if len(g) > 11 else g for g in groups], fontsize=8.5)
        ax.set_title(panel_title, fontsize=11)
        ax.set_ylim(0, 105)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    np.atleast_1d(axes)[0].set_ylabel("score (%)")
    handles, labels = np.atleast_1d(axes)[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=12)
    return _save(fig, path, note, right=0.86, top=0.95)  # room for the figure legend and title
