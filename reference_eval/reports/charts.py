"""PNG charts of ``cogbench report``: one colour per model across every chart.

Inputs are plain series (label -> values and intervals) that ``runs_report``
prepares; nothing here reads files. matplotlib is imported where used, with the
Agg backend, so no display is needed. Each ``draw_*`` returns the laid-out
figure (constrained layout, legend below the plot, so neither labels nor legend
squeeze or cover the data; tests read its artists back), and the function of the
same name without ``draw_`` saves it as a PNG.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cogbench.dataset_builders.writes import write_with

PUBLISHED_STYLE = {"linestyle": "--", "linewidth": 1.3, "alpha": 0.9, "markersize": 4}
PUBLISHED_MARKERS = "osD^v"
RUN_MARKERS = "oXsP^Dv*"  # a run's polygon carries its own marker, so runs drawn on one another stay visible
SAME_VALUE = 0.05  # points: series closer than this on every axis are named as drawn on top of each other
TEXT_WIDTH_SHARE = 0.92  # titles, notes and legend labels wrap to this share of the figure width
CHAR_WIDTH_EM = 0.6  # a character's width in units of the font size (wide side of DejaVu Sans)
DPI = 130
LEGEND_ROW_INCHES = 0.22  # the figure grows by this per row of the legend below the plot
LEGEND_CHAR_POINTS, LEGEND_HANDLE_POINTS = 5.0, 40  # width of a legend character (8 pt) and of handle + gaps
MAX_WIDTH_INCHES = 18.0  # wider than a screen: bars get narrower instead
STACK_PANELS_ABOVE = 6  # models beyond which paired panels stack vertically
RADAR_LABEL_RADIUS = 108  # category labels just outside the 0-100 rim


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


def _legend_columns(width: float, labels: Sequence[str]) -> int:
    """As many legend columns as the longest label lets fit across ``width`` inches (8 pt text)."""
    longest = max((len(label) for label in labels), default=1)
    per_column = (longest * LEGEND_CHAR_POINTS + LEGEND_HANDLE_POINTS) / 72
    return max(1, min(len(labels) or 1, int(0.95 * width / per_column)))


def _figure(width: float, height: float, legend: Sequence[str]):
    """A constrained-layout figure, taller by the rows of a legend below the plot."""
    rows = 1 + (-(-len(legend) // _legend_columns(width, legend)) if legend else 0)  # + the footnote
    return _pyplot().figure(figsize=(width, height + LEGEND_ROW_INCHES * rows), layout="constrained")


def _wrap(text: str, width_inches: float, fontsize: float) -> str:
    """``text`` broken into lines that fit ``width_inches`` at ``fontsize``: no text runs past the figure's edges."""
    chars = max(12, int(TEXT_WIDTH_SHARE * width_inches * 72 / (CHAR_WIDTH_EM * fontsize)))
    return "\n".join(textwrap.fill(line, width=chars) or line for line in text.split("\n"))


def _legend_below(fig, handles, labels, note: str = "") -> None:
    """The legend under the plot, in columns, the footnote as its title: nothing squeezes the axes or covers data."""
    if handles or note:
        width = fig.get_figwidth()
        columns = _legend_columns(width, labels)
        label_chars = int((TEXT_WIDTH_SHARE * width * 72 / columns - LEGEND_HANDLE_POINTS) / LEGEND_CHAR_POINTS)
        legend = fig.legend(
            handles,
            [textwrap.fill(label, width=max(12, label_chars)) for label in labels],
            loc="outside lower center",
            ncol=columns,
            fontsize=8,
            frameon=False,
            title=_wrap(note, width, 7.5) if note else None,
            title_fontsize=7.5,
        )
        legend.get_title().set_color("dimgrey")


def coinciding(series: Sequence[Series]) -> list[list[str]]:
    """Groups of two or more series with the same values on every axis: drawn, they lie on top of each other."""

    def same(a: Series, b: Series) -> bool:
        return all(
            (x is None) == (y is None) and (x is None or abs(x - y) < SAME_VALUE) for x, y in zip(a.values, b.values)
        )

    groups: list[list[Series]] = []
    for s in series:
        group = next((g for g in groups if same(g[0], s)), None)
        if group is None:
            groups.append([s])
        else:
            group.append(s)
    return [[_legend_labels([s])[0] for s in g] for g in groups if len(g) > 1]


def coincidence_note(series: Sequence[Series]) -> str:
    """A sentence naming the series drawn on top of each other, or ""."""
    groups = coinciding(series)
    if not groups:
        return ""
    return "Drawn on top of each other (same values): " + "; ".join(" = ".join(g) for g in groups) + "."


def centre_note(series: Sequence[Series]) -> str:
    """A sentence naming the radar's series at 0 on every axis (their polygon is one dot at the centre), or ""."""
    dots = [
        label
        for s, label in zip(series, _legend_labels(series))
        if any(v is not None for v in s.values) and all(v is None or abs(v) < SAME_VALUE for v in s.values)
    ]
    return f"At 0 on every axis, drawn as one dot at the centre: {', '.join(dots)}." if dots else ""


def interval_note(note: str, series: Sequence[Series]) -> str:
    """The caller's footnote, plus a sentence when a value has no interval (its bar has no whisker)."""
    bare = any(v is not None and not ci for s in series for v, ci in zip(s.values, _intervals(s)))
    if bare and "Whiskers" in note:
        return note + " A bar without a whisker has no interval (one image, or none computed)."
    return note


def _intervals(s: Series) -> list[list[float] | None]:
    return list(s.intervals) + [None] * (len(s.values) - len(s.intervals))


def _legend_labels(series: Sequence[Series]) -> list[str]:
    return [f"{s.label} (published)" if s.published else s.label for s in series]


def _save(fig, path: Path) -> Path:
    """Write the PNG and free the figure."""
    write_with(path, lambda handle: fig.savefig(handle, dpi=DPI, format="png"))
    _pyplot().close(fig)
    return path


def _short(label: str, width: int) -> str:
    """Break a long tick label on spaces into lines of about ``width`` characters."""
    return textwrap.fill(label, width=width, break_long_words=False)


def draw_radar(title: str, categories: Sequence[str], series: Sequence[Series], colours: dict[str, tuple]):
    """Scores per category on a closed polygon, 0-100; published models dashed; labels outside the rim."""
    import numpy as np

    fig = _figure(8.5, 7.2, _legend_labels(series))
    ax = fig.add_subplot(polar=True)
    angles = np.linspace(0, 2 * np.pi, len(categories), endpoint=False).tolist()
    ax.set_theta_offset(np.pi / 2)  # first category at the top, then clockwise
    ax.set_theta_direction(-1)
    for i, s in enumerate(series):
        # A value not scored is a gap in the line (NaN), never a dip to 0; the footnote says so.
        values = [v if v is not None else float("nan") for v in s.values]
        style = (
            {**PUBLISHED_STYLE, "marker": PUBLISHED_MARKERS[i % len(PUBLISHED_MARKERS)]}
            if s.published
            else {"linewidth": 2.2, "marker": RUN_MARKERS[i % len(RUN_MARKERS)], "markersize": 7 - (i % 3)}
        )
        label = f"{s.label} (published)" if s.published else s.label
        ax.plot(angles + angles[:1], values + values[:1], color=colours[s.label], label=label, **style)
        if not s.published and None not in s.values:
            ax.fill(angles + angles[:1], values + values[:1], color=colours[s.label], alpha=0.08)
    ax.set_xticks(angles)
    ax.set_xticklabels([])  # drawn below as texts aligned away from the plot
    for angle, category in zip(angles, categories):
        east, north = np.sin(angle), np.cos(angle)  # on screen, after the offset and clockwise direction
        ax.text(
            angle,
            RADAR_LABEL_RADIUS,
            _short(category, 14),
            fontsize=9,
            clip_on=False,
            ha="center" if abs(east) < 0.3 else ("left" if east > 0 else "right"),
            va="center" if abs(north) < 0.3 else ("bottom" if north > 0 else "top"),
        )
    ax.set_ylim(0, 100)
    ax.set_yticks([20, 40, 60, 80, 100])
    ax.set_yticklabels(["20%", "40%", "60%", "80%", "100%"], fontsize=7, color="grey")
    ax.set_rlabel_position(180 / len(categories))  # between the first two spokes, off every label
    ax.set_title(_wrap(title, fig.get_figwidth(), 12), fontsize=12, pad=34)
    gaps = "A gap in a line: a category not scored." if any(v is None for s in series for v in s.values) else ""
    notes = (coincidence_note(series), centre_note(series), gaps)
    _legend_below(fig, *ax.get_legend_handles_labels(), " ".join(x for x in notes if x))
    return fig


def radar(
    path: Path, title: str, categories: Sequence[str], series: Sequence[Series], colours: dict[str, tuple]
) -> Path:
    return _save(draw_radar(title, categories, series, colours), path)


def _bars(ax, groups: Sequence[str], series: Sequence[Series], colours: dict[str, tuple], labels: bool) -> None:
    """One bar per model in each group, interval whiskers; a missing value is marked, never drawn as 0."""
    import numpy as np

    width = 0.8 / max(len(series), 1)
    x = np.arange(len(groups))
    for i, s in enumerate(series):
        positions = x - 0.4 + width * (i + 0.5)
        heights = [v if v is not None else 0.0 for v in s.values]
        bars = ax.bar(
            positions,
            heights,
            width * 0.92,
            color=colours[s.label],
            label=f"{s.label} (published)" if s.published else s.label,
            hatch="//" if s.published else None,
            alpha=0.55 if s.published else 0.9,
            edgecolor="white" if s.published else None,
        )
        intervals = _intervals(s)
        # A whisker only where there is an interval: none at all (not a flat cap) for a value without one.
        whiskered = [k for k, (v, ci) in enumerate(zip(s.values, intervals)) if ci and v is not None]
        if whiskered:
            ax.errorbar(
                [positions[k] for k in whiskered],
                [s.values[k] for k in whiskered],
                yerr=[
                    [max(s.values[k] - intervals[k][0], 0.0) for k in whiskered],
                    [max(intervals[k][1] - s.values[k], 0.0) for k in whiskered],
                ],
                fmt="none",
                ecolor="black",
                capsize=3,
                linewidth=1,
            )
        for bar, value, ci in zip(bars, s.values, intervals):
            centre = bar.get_x() + bar.get_width() / 2
            if value is None:  # nothing scored: a grey cross on the axis and the words, so it never reads as 0
                ax.plot([centre], [1.5], marker="x", color="dimgrey", markersize=6)
                ax.text(centre, 4, "not scored", ha="center", va="bottom", fontsize=6.5, rotation=90, color="dimgrey")
            elif labels:
                top = ci[1] if ci else value
                ax.text(
                    centre,
                    top + 1,
                    f"{value:.0f}",
                    ha="center",
                    va="bottom",
                    fontsize=7 if len(series) < 8 else 5.5,
                    rotation=0 if len(series) < 8 else 90,
                )
    ax.set_yticks(range(0, 101, 20))  # percentages: no tick above 100 in the headroom for value labels
    ax.set_xticks(x)
    ax.set_xticklabels([_short(g, 12) for g in groups], fontsize=9 if len(groups) < 6 else 8)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def draw_grouped_bars(
    title: str,
    groups: Sequence[str],
    series: Sequence[Series],
    colours: dict[str, tuple],
    ylabel: str = "score (%)",
    note: str = "",
    reference: float | None = None,
):
    """Bars per group (metric or category), one bar per model, 95% interval whiskers; published bars hatched."""
    fig = _figure(
        min(MAX_WIDTH_INCHES, max(7.0, 1.4 + len(groups) * (0.5 + 0.3 * len(series)))), 4.8, _legend_labels(series)
    )
    ax = fig.add_subplot()
    _bars(ax, groups, series, colours, labels=True)
    if reference is not None:
        ax.axhline(reference, color="dimgrey", linestyle="--", linewidth=1)
    ax.set_ylim(0, 112)
    ax.set_ylabel(ylabel)
    ax.set_title(_wrap(title, fig.get_figwidth(), 12), fontsize=12)
    _legend_below(fig, *ax.get_legend_handles_labels(), interval_note(note, series))
    return fig


def grouped_bars(
    path: Path,
    title: str,
    groups: Sequence[str],
    series: Sequence[Series],
    colours: dict[str, tuple],
    ylabel: str = "score (%)",
    note: str = "",
    reference: float | None = None,
) -> Path:
    return _save(draw_grouped_bars(title, groups, series, colours, ylabel, note, reference), path)


def draw_paired_panels(
    title: str,
    groups: Sequence[str],
    panels: Sequence[tuple[str, Sequence[Series]]],
    colours: dict[str, tuple],
    note: str = "",
):
    """Side-by-side bar panels sharing groups and colours (CODIS Acc_p and Acc_q per category)."""
    n_series = max(len(s) for _, s in panels)
    panel_width = max(6.5, 1.0 + len(groups) * (0.4 + 0.12 * n_series))
    stacked = n_series > STACK_PANELS_ABOVE  # many models: panels one above the other, not a very wide strip
    fig = _figure(
        panel_width * (1 if stacked else len(panels)),
        4.8 * (len(panels) if stacked else 1),
        _legend_labels(panels[0][1]),
    )
    axes = fig.subplots(
        len(panels) if stacked else 1, 1 if stacked else len(panels), sharey=True, squeeze=False
    ).ravel()
    for ax, (panel_title, series) in zip(axes, panels):
        _bars(ax, groups, series, colours, labels=False)
        ax.set_title(panel_title, fontsize=11)
        ax.set_ylim(0, 105)
    for ax in axes[:: 1 if stacked else len(axes)]:
        ax.set_ylabel("score (%)")
    fig.suptitle(_wrap(title, fig.get_figwidth(), 12), fontsize=12)
    _legend_below(
        fig, *axes[0].get_legend_handles_labels(), interval_note(note, [s for _, series in panels for s in series])
    )
    return fig


def paired_panels(
    path: Path,
    title: str,
    groups: Sequence[str],
    panels: Sequence[tuple[str, Sequence[Series]]],
    colours: dict[str, tuple],
    note: str = "",
) -> Path:
    return _save(draw_paired_panels(title, groups, panels, colours, note), path)
