"""The report as one self-contained HTML page (the ``report`` extra: jinja2, matplotlib).

Everything is inline: no script, no style sheet, font or picture from the network, so the
page shows the same offline. Sections: the verdict, counts per rule (each linked to its
catalog anchor), the pictures (``_plots``: findings over partitions and offsets, watermarks
per partition, inline SVG), bounded samples with their Kafka coordinates, and the dump's
labelled faults, found and missed. Autoescaping is on: a sample's detail is text, never
markup; only the SVG the kit drew goes in as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ticdc_conformance.suites.report._forms import verdict, what, where
from ticdc_conformance.suites.report._plots import findings_svg, watermarks_svg

__all__ = ["html_page"]


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}: {{ verdict }}</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
.verdict { display: inline-block; padding: .2em .8em; border-radius: .3em; color: #fff;
  font-weight: bold; }
.PASS { background: #2e7d32; } .FAIL { background: #c62828; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.broken td { background: #fdecea; } tr.counted td { background: #fff8e1; }
.yes { color: #2e7d32; font-weight: bold; } .no { color: #c62828; font-weight: bold; }
code { font-size: .95em; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
</style></head>
<body>
<h1>{{ title }}</h1>
<section id="verdict"><p><span class="verdict {{ verdict }}">{{ verdict }}</span>
{{ report.errors or 0 }} error(s), {{ report.warnings or 0 }} warning(s){% if messages %};
{{ messages.read }} messages read, {{ messages.decoded }} decoded, {{ messages.undecodable }}
undecodable (input {{ messages.input }}){% endif %}{% if report.engine %};
engine <code>{{ report.engine }}</code>{% if report.plan %} ({{ report.plan }}){% endif %},
{{ "%.1f"|format(report.seconds or 0) }} s{% endif %}.</p>
{% if inputs %}<p>Input: {% for i in inputs %}<code>{{ i }}</code> {% endfor %}</p>{% endif %}
</section>
<section id="rules"><h2>Counts per rule</h2>
<table><thead><tr><th>rule</th><th>severity</th><th>count</th><th>what it asks</th></tr></thead>
<tbody>{% for r in report.rules %}
<tr class="{% if r.count and r.severity == 'error' %}broken{% elif r.count %}counted{% endif %}">
<td><a href="{{ r.doc }}"><code>{{ r.id }}</code></a></td><td>{{ r.severity }}</td>
<td class="n">{{ r.count }}</td><td>{{ r.description }}</td></tr>{% endfor %}
</tbody></table></section>
<section id="pictures"><h2>Pictures</h2>
{% if findings_svg %}<figure id="findings-picture">{{ findings_svg }}</figure>
{% else %}<p>No finding to draw.</p>{% endif %}
{% if watermarks_svg %}<figure id="watermarks-picture">{{ watermarks_svg }}</figure>
{% else %}<p>The report carries no watermarks to draw.</p>{% endif %}
</section>
<section id="samples"><h2>Samples</h2>
{% for r in sampled %}<h3><code>{{ r.id }}</code>: {{ r.count }} found, {{ r.rows|length }}
shown</h3>
<table><thead><tr><th>where</th><th>what</th></tr></thead><tbody>
{% for s in r.rows %}<tr><td>{{ s.where }}</td><td>{{ s.what }}</td></tr>{% endfor %}
</tbody></table>
{% else %}<p>No finding.</p>{% endfor %}
</section>
<section id="faults"><h2>Labelled faults</h2>
{% if faults %}<p>{{ found }} of {{ faults|length }} labelled fault finding(s) found.</p>
<table><thead><tr><th>fault</th><th>rule</th><th>partition</th><th>offset</th>
<th>commit ts</th><th>found</th></tr></thead><tbody>
{% for f in faults %}<tr><td>{{ f.kind }}</td><td><code>{{ f.rule }}</code></td>
<td class="n">{{ f.partition }}</td>
<td class="n">{{ f.offset if f.offset is not none else "missing" }}</td>
<td class="n">{{ f.commit_ts }}</td><td class="{{ f.found }}">{{ f.found }}</td></tr>{% endfor %}
</tbody></table>
{% else %}<p>The input carries no labelled faults.</p>{% endif %}
</section>
</body></html>
"""


def html_page(
    report: Mapping[str, Any],
    *,
    title: str,
    faults: Sequence[Mapping[str, Any]] = (),
    samples: int = 20,
) -> str:
    """The page; ``ImportError`` without jinja2 or matplotlib (the ``report`` extra)."""
    import jinja2

    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    sampled = [
        {
            "id": r["id"],
            "count": r["count"],
            "rows": [{"where": where(s), "what": what(s)} for s in r["samples"][:samples]],
        }
        for r in report["rules"]
        if r["samples"]
    ]
    inputs = report.get("input")
    shown = {"errors": 0, "warnings": 0, "engine": None, "plan": None, "seconds": 0, **report}
    return environment.from_string(_TEMPLATE).render(
        title=title,
        verdict=verdict(report),
        report=shown,
        messages=report.get("messages"),
        inputs=[inputs] if isinstance(inputs, str) else list(inputs or ()),
        sampled=sampled,
        faults=list(faults),
        found=sum(f["found"] == "yes" for f in faults),
        findings_svg=_markup(findings_svg(report["rules"])),
        watermarks_svg=_markup(watermarks_svg(report.get("watermarks", ()))),
    )


def _markup(svg: str | None) -> object:
    """Our own SVG, inserted unescaped (its text came from matplotlib's escaping writer)."""
    import markupsafe

    return None if svg is None else markupsafe.Markup(svg)  # noqa: S704 - matplotlib's output
