"""The report page's pictures as inline SVG (the ``report`` extra: matplotlib).

Two pictures, drawn only from the JSON report:

* findings over partitions and offsets: each sampled finding a mark at (offset, partition),
  one colour per rule; a missing record (a broadcast the partition lacks, offset ``null``) is
  drawn left of offset 0 as a cross. Only the report's bounded samples are drawn, so the
  picture says how many of how many it shows.
* commit-ts progress per partition: the watermarks each partition carried (the report's
  ``watermarks``, thinned), as a step line of their physical time (a TSO's upper bits are
  milliseconds since the epoch, ground truth §6.2) against the watermark's rank. A partition
  whose line stops early or lies below the others is where readers wait.

The figures use matplotlib's object interface (no global pyplot state), text kept as text and
no metadata, so each SVG is the same for the same report, needs no font or file at view time,
and carries no address of any kind.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["findings_svg", "watermarks_svg"]

_PHYSICAL_SHIFT = 18
"""A TSO is ``physical_ms << 18 | logical`` (ground truth §6.2)."""

_NAMESPACES = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


def _svg(figure: Figure) -> str:
    """The figure as an ``<svg>`` element for inline HTML (no prolog, no namespace URIs)."""
    import matplotlib as mpl
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    FigureCanvasSVG(figure)
    out = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "ticdc-conformance"}):
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    text = out.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.DOTALL)
    # HTML parses inline SVG without namespaces; xlink:href becomes href
    return _NAMESPACES.sub("", text).replace("xlink:href", "href")


def _figure(height: float) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, height), dpi=96, layout="constrained")
    figure.patch.set_alpha(0)
    return figure


def findings_svg(rules: Sequence[Mapping[str, Any]]) -> str | None:
    """Sampled findings at (offset, partition), a colour per rule; ``None`` without any.

    Samples without Kafka coordinates (a consumer check's table rows) are not drawn.
    """
    sampled = [
        {**r, "samples": [s for s in r["samples"] if s.get("partition") is not None]} for r in rules
    ]
    sampled = [r for r in sampled if r["samples"]]
    if not sampled:
        return None
    partitions = sorted({s["partition"] for r in sampled for s in r["samples"]})
    figure = _figure(1.6 + 0.25 * len(partitions))
    axes = figure.add_subplot()
    shown = total = 0
    offsets = [-1]
    for index, rule in enumerate(sampled):
        colour = f"C{index % 10}"
        shown, total = shown + len(rule["samples"]), total + rule["count"]
        label = f"{rule['id']} ({len(rule['samples'])} of {rule['count']})"
        for marker, size, at in (("o", 28, True), ("x", 48, False)):
            chosen = [s for s in rule["samples"] if (s.get("offset") is not None) == at]
            if chosen:
                xs = [s["offset"] if at else -1 for s in chosen]
                offsets.extend(xs)
                ys = [s["partition"] for s in chosen]
                axes.scatter(xs, ys, marker=marker, s=size, color=colour, label=label)
                label = "_"  # one legend entry per rule
    top = max(offsets)
    axes.set_xlim(-1 - max(1, top // 20), max(top, 0) * 1.05 + 1)
    axes.set_yticks(partitions)
    axes.set_xlabel("offset (× at the left: a missing record)")
    axes.set_ylabel("partition")
    axes.set_title(f"Findings over partitions and offsets: {shown} of {total} shown", fontsize=10)
    axes.grid(visible=True, alpha=0.3)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return _svg(figure)


def watermarks_svg(watermarks: Sequence[Mapping[str, Any]]) -> str | None:
    """Each partition's watermarks as a step line of time over rank; ``None`` without any."""
    series = [w for w in watermarks if w["commit_ts"]]
    if not series:
        return None
    start = min(w["commit_ts"][0] for w in series) >> _PHYSICAL_SHIFT
    figure = _figure(3.2)
    axes = figure.add_subplot()
    for index, w in enumerate(series):
        stamps = w["commit_ts"]
        seen = w["seen"]
        # thinned evenly: the k-th kept watermark stands at rank k·(seen-1)/(kept-1)
        step = (seen - 1) / (len(stamps) - 1) if len(stamps) > 1 else 0
        ranks = [round(k * step) + 1 for k in range(len(stamps))]
        seconds = [((ts >> _PHYSICAL_SHIFT) - start) / 1000 for ts in stamps]
        # wider lines first, so partitions that kept step together all stay visible
        width = 1 + 2.5 * (len(series) - 1 - index) / max(len(series) - 1, 1)
        label = f"{w['topic']}/{w['partition']} ({seen})"
        axes.step(ranks, seconds, where="post", linewidth=width, label=label)
    axes.set_xlabel("watermark (in commit-ts order)")
    axes.set_ylabel("seconds after the first watermark")
    axes.set_title("Commit-ts progress per partition: watermarks", fontsize=10)
    axes.grid(visible=True, alpha=0.3)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return _svg(figure)
