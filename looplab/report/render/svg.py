"""Hand-written SVG charts: scales, axes, marks, legends; strings out, no dependencies.

A `Chart` is a plot area with a title, axis labels (with units), ticks and a legend;
marks are added in data coordinates. Data marks carry the class `mark` (tests count them
to tell a drawn chart from an empty frame) and a `<title>` child, which browsers show as
a tooltip. Output is deterministic (same data, same bytes).

NaN and infinite values are gaps: a mark at such a point is not drawn (a line breaks
there), and a scale whose domain is not finite falls back to [0, 1].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

from looplab.report.render.scales import LinearScale, LogScale, Scale, fmt_num, fmt_s
from looplab.report.render.scales import all_finite as _finite

__all__ = ["SVG_DEFS", "Chart", "LinearScale", "LogScale", "Scale", "fmt_num", "fmt_s"]


@dataclass
class Chart:
    """One SVG chart; add marks in data coordinates, then `render()`.

    Args:
        name: stable identifier (`data-chart`), used by tests and CSS.
        title: shown above the plot.
        x_label: x-axis label with unit.
        y_label: y-axis label with unit.
    """

    name: str
    title: str
    x_label: str
    y_label: str
    width: int = 560
    height: int = 320
    left: int = 64
    right: int = 16
    top: int = 34
    bottom: int = 46
    x: Scale = field(init=False)
    y: Scale = field(init=False)
    parts: list[str] = field(default_factory=list)
    legend_items: list[tuple[str, str, str, str]] = field(default_factory=list)
    caption: str = ""
    data: dict[str, str] = field(default_factory=dict)
    """Extra `data-*` attributes of the figure (what the interactive layer needs)."""

    def set_scales(
        self,
        x: tuple[float, float],
        y: tuple[float, float],
        *,
        x_log: bool = False,
        y_log: bool = False,
        y_categories: Sequence[str] | None = None,
    ) -> None:
        """Set the data domains (after which marks can be added)."""
        x_range = (self.left, self.width - self.right)
        y_range = (self.height - self.bottom, self.top)
        self.x = (LogScale if x_log else LinearScale)(x[0], x[1], *x_range)
        self.y = (LogScale if y_log else LinearScale)(y[0], y[1], *y_range)
        self._categories = list(y_categories or [])

    @property
    def plot_right(self) -> float:
        """Right edge of the plot area in pixels."""
        return self.width - self.right

    def axes(
        self,
        x_fmt: Callable[[float], str] = fmt_num,
        y_fmt: Callable[[float], str] = fmt_num,
        *,
        y_ticks: bool = True,
    ) -> None:
        """Grid lines, ticks and axis labels."""
        bottom, top = self.height - self.bottom, self.top
        out = self.parts
        for value in self.x.ticks(6):
            px = self.x(value)
            out.append(f'<line class="grid" x1="{px:.1f}" y1="{top}" x2="{px:.1f}" y2="{bottom}"/>')
            out.append(
                f'<text class="tick" x="{px:.1f}" y="{bottom + 14}" text-anchor="middle">'
                f"{escape(x_fmt(value))}</text>"
            )
        if y_ticks:
            for value in self.y.ticks(5):
                py = self.y(value)
                out.append(
                    f'<line class="grid" x1="{self.left}" y1="{py:.1f}" x2="{self.plot_right}" '
                    f'y2="{py:.1f}"/>'
                )
                out.append(
                    f'<text class="tick" x="{self.left - 6}" y="{py + 4:.1f}" text-anchor="end">'
                    f"{escape(y_fmt(value))}</text>"
                )
        out.append(
            f'<line class="axis" x1="{self.left}" y1="{bottom}" x2="{self.plot_right}" '
            f'y2="{bottom}"/><line class="axis" x1="{self.left}" y1="{top}" x2="{self.left}" '
            f'y2="{bottom}"/>'
        )
        mid_x = (self.left + self.plot_right) / 2
        out.append(
            f'<text class="label" x="{mid_x:.1f}" y="{self.height - 8}" text-anchor="middle">'
            f"{escape(self.x_label)}</text>"
        )
        mid_y = (top + bottom) / 2
        out.append(
            f'<text class="label" transform="translate(14,{mid_y:.1f}) rotate(-90)" '
            f'text-anchor="middle">{escape(self.y_label)}</text>'
        )

    def line(
        self,
        points: Sequence[tuple[float, float]],
        color: str,
        tip: str,
        *,
        dash: bool = False,
        width: float = 2.0,
        step: bool = False,
        series: str = "",
    ) -> None:
        """A polyline through data points (`step`: a staircase, as for CDFs)."""
        runs: list[list[str]] = [[]]
        previous_y: float | None = None
        for x, y in points:
            px, py = self.x(x), self.y(y)
            if not _finite(px, py):  # a gap: the line breaks here
                runs.append([])
                previous_y = None
                continue
            if step and previous_y is not None:
                runs[-1].append(f"{px:.1f},{previous_y:.1f}")
            runs[-1].append(f"{px:.1f},{py:.1f}")
            previous_y = py
        style = ' stroke-dasharray="6 4"' if dash else ""
        for coords in (run for run in runs if run):
            self.parts.append(
                f'<polyline class="mark"{_series(series)} fill="none" stroke="{color}" '
                f'stroke-width="{width}"{style} points="{" ".join(coords)}"><title>{escape(tip)}'
                "</title></polyline>"
            )

    def band(
        self,
        lower: Sequence[tuple[float, float]],
        upper: Sequence[tuple[float, float]],
        color: str,
        tip: str,
        *,
        series: str = "",
    ) -> None:
        """A filled band between two series with the same x values."""
        outline = [(x, y) for x, y in (*upper, *reversed(lower)) if _finite(self.x(x), self.y(y))]
        if not outline:
            return
        coords = " ".join(f"{self.x(x):.1f},{self.y(y):.1f}" for x, y in outline)
        self.parts.append(
            f'<polygon class="mark band"{_series(series)} fill="{color}" fill-opacity="0.18" '
            'stroke="none" '
            f'points="{coords}"><title>{escape(tip)}</title></polygon>'
        )

    def dots(
        self,
        points: Sequence[tuple[float, float]],
        color: str,
        tips: Sequence[str],
        *,
        radius: float = 3.5,
        hollow: bool = False,
        series: str = "",
    ) -> None:
        """Circles at data points (hollow: estimated values)."""
        fill = "white" if hollow else color
        css = "mark hollow" if hollow else "mark"
        for (x, y), tip in zip(points, tips, strict=True):
            if not _finite(self.x(x), self.y(y)):
                continue
            self.parts.append(
                f'<circle class="{css}"{_series(series)} cx="{self.x(x):.1f}" '
                f'cy="{self.y(y):.1f}" r="{radius}" '
                f'fill="{fill}" stroke="{color}" stroke-width="1.5"><title>{escape(tip)}'
                "</title></circle>"
            )

    def error_bar(self, x: float, low: float, high: float, color: str, series: str = "") -> None:
        """A vertical interval at x."""
        px = self.x(x)
        y0, y1 = self.y(low), self.y(high)
        if not _finite(px, y0, y1):
            return
        self.parts.append(
            f'<path class="whisker"{_series(series)} stroke="{color}" stroke-width="1.5" '
            'fill="none" '
            f'd="M{px:.1f},{y0:.1f}V{y1:.1f}M{px - 4:.1f},{y0:.1f}h8M{px - 4:.1f},{y1:.1f}h8"/>'
        )

    def hbar(
        self,
        row: float,
        x0: float,
        x1: float,
        color: str,
        tip: str,
        *,
        thickness: float = 0.7,
        hatched: bool = False,
        css: str = "",
        series: str = "",
        attrs: str = "",
    ) -> None:
        """A horizontal bar from x0 to x1 centred on row `row` (row units of the y scale);
        `attrs` are extra attributes of the mark."""
        px0, px1 = self.x(x0), self.x(x1)
        ya, yb = self.y(row - thickness / 2), self.y(row + thickness / 2)
        if not _finite(px0, px1, ya, yb):
            return
        top, height = min(ya, yb), abs(yb - ya)
        width = max(px1 - px0, 0.6)
        fill = "url(#hatch)" if hatched else color
        outline = f' stroke="{color}" stroke-width="1"' if hatched else ""
        extra = f" {css}" if css else ""
        self.parts.append(
            f'<rect class="mark{extra}"{_series(series)}{attrs} x="{px0:.1f}" y="{top:.1f}" '
            f'width="{width:.1f}" '
            f'height="{height:.1f}" fill="{fill}"{outline}><title>{escape(tip)}</title></rect>'
        )
        if hatched:
            self.parts.append(
                f'<rect{_series(series)} x="{px0:.1f}" y="{top:.1f}" width="{width:.1f}" '
                f'height="{height:.1f}" fill="{color}" fill-opacity="0.35" pointer-events="none"/>'
            )

    def vbar(
        self, x: float, y0: float, y1: float, color: str, tip: str, *, series: str = ""
    ) -> None:
        """A vertical bar centred on `x` (0.7 x units wide) from y0 to y1."""
        px0, px1 = self.x(x - 0.35), self.x(x + 0.35)
        ya, yb = self.y(y0), self.y(y1)
        self.parts.append(
            f'<rect class="mark"{_series(series)} x="{px0:.1f}" y="{min(ya, yb):.1f}" '
            f'width="{max(px1 - px0, 0.6):.1f}" height="{max(abs(yb - ya), 0.6):.1f}" '
            f'fill="{color}"><title>{escape(tip)}</title></rect>'
        )

    def row_labels(self, labels: Sequence[str]) -> None:
        """Category names at rows 0..n-1 of the y scale (left of the plot)."""
        for index, label in enumerate(labels):
            self.parts.append(
                f'<text class="tick" x="{self.left - 6}" y="{self.y(index) + 4:.1f}" '
                f'text-anchor="end">{escape(label)}</text>'
            )

    def hline(self, y: float, color: str, tip: str, label: str = "") -> None:
        """A dashed horizontal reference line across the plot."""
        py = self.y(y)
        if not _finite(py):
            return
        self.parts.append(
            f'<line class="mark ref" x1="{self.left}" y1="{py:.1f}" x2="{self.plot_right}" '
            f'y2="{py:.1f}" stroke="{color}" stroke-width="1.5" stroke-dasharray="3 3">'
            f"<title>{escape(tip)}</title></line>"
        )
        if label:
            self.parts.append(
                f'<text class="note" x="{self.plot_right - 4}" y="{py - 5:.1f}" '
                f'text-anchor="end" fill="{color}">{escape(label)}</text>'
            )

    def text(self, x: float, y: float, content: str, anchor: str = "start") -> None:
        """Free text at pixel coordinates."""
        self.parts.append(
            f'<text class="note" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">'
            f"{escape(content)}</text>"
        )

    def legend(self, label: str, color: str, kind: str = "line", series: str = "") -> None:
        """Add a legend entry (`line`, `dash`, `box`, `hatch`, `dot`); `series` names the
        marks it stands for (the interactive layer toggles them from the legend)."""
        self.legend_items.append((label, color, kind, series))

    def render(self) -> str:
        """The chart as `<figure>` with inline SVG and an HTML legend."""
        svg = (
            f'<svg viewBox="0 0 {self.width} {self.height}" width="{self.width}" '
            f'height="{self.height}" role="img" aria-label="{escape(self.title)}" '
            f'xmlns="http://www.w3.org/2000/svg">'
            f'<text class="title" x="8" y="20">{escape(self.title)}</text>'
            + "".join(self.parts)
            + "</svg>"
        )
        legend = "".join(
            f'<span class="key"{_series(series)}{_TOGGLE if series else ""}>'
            f'<i class="sw {kind}" style="--c:{color}"></i>{escape(label)}</span>'
            for label, color, kind, series in self.legend_items
        )
        caption = f"<figcaption>{escape(self.caption)}</figcaption>" if self.caption else ""
        data = "".join(f' data-{k}="{escape(v)}"' for k, v in self.data.items())
        return (
            f'<figure class="chart" data-chart="{escape(self.name)}"{data}>{svg}'
            f'<div class="legend">{legend}</div>{caption}</figure>'
        )


_TOGGLE = ' role="button" tabindex="0" aria-pressed="true"'
"""A legend key that toggles its marks: a button for the keyboard too (report.js)."""


def _series(name: str) -> str:
    """The `data-s` attribute tying a mark to its legend entry (and profile filter)."""
    return f' data-s="{escape(name)}"' if name else ""


SVG_DEFS = (
    '<svg width="0" height="0" style="position:absolute" aria-hidden="true">'
    '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><rect class="hatch-bg" width="6" height="6"/>'
    '<line class="hatch-fg" x1="0" y1="0" x2="0" y2="6" stroke-width="2"/></pattern></defs></svg>'
)
"""Shared SVG definitions (the `hatch` pattern of estimated values), once per page."""
