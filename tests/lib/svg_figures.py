#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reads a gdx-bench --plot SVG back against the JSON figures it was drawn
from (tests/check/bench_plot.sh, tests/vm/bench_smoke.sh):

    svg_figures.py [--title TEXT] PLOT.svg RUN.json [REF.json ...]

The SVG must parse as XML; every size of every file must be a label under
the panels (64K, 1M: as gdx-bench takes sizes) and a point of its series in
the bandwidth panel (data-gbps: "Gbps") and in the time panel (data-usec:
"median_us", or "seconds" * 1e6 / "iters"); every series must be in the
legend, in a colour of its own; the title must hold TEXT. A series is named
by its file's "label", else "gdx-bench" for RUN and the file's name up to
its first dot for a REF, as gdx-bench names them. Prints what is wrong and
exits 1; exits 0 silently.
"""
import json
import os
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def size_label(n):
    for unit in ("", "K", "M", "G"):
        if n < 1024 or n % 1024 or unit == "G":
            return f"{n}{unit}"
        n //= 1024
    return None


def near(got, want, step):
    """The plot's figure (6 digits) is the file's, printed to step (-j
    prints Gb/s to 1e-4, seconds to 1e-6, medians to 1e-3 us): within half
    a step of it and the plot's own rounding."""
    return got is not None and abs(float(got) - want) <= step / 2 + 1e-5 * abs(want)


def main(argv):
    title = None
    if argv[:1] == ["--title"]:
        title, argv = argv[1], argv[2:]
    plot, files = argv[0], argv[1:]
    wrong = []
    try:
        root = ET.parse(plot).getroot()
    except (ET.ParseError, OSError) as e:
        print(f"{plot} is not well-formed XML: {e}")
        return 1
    texts = {t.get("class"): [] for t in root.iter(SVG + "text")}
    for t in root.iter(SVG + "text"):
        texts[t.get("class")].append(t)
    labels = {int(t.get("data-size")): "".join(t.itertext()) for t in texts.get("size", [])}
    legend = ["".join(t.itertext()) for t in texts.get("legend", [])]
    points = {}
    for c in root.iter(SVG + "circle"):
        if c.get("data-size") is not None:
            points.setdefault(c.get("data-series"), []).append(c)
    colours = set()
    got_title = "".join(texts.get("title", [ET.Element("x")])[0].itertext())
    if title is not None and title not in got_title:
        wrong.append(f"the title {got_title!r} does not hold {title!r}")
    if any(e.tag != SVG + e.tag.rpartition("}")[2] or e.tag.endswith("script") for e in root.iter()):
        wrong.append("an element outside SVG, or a script")
    for i, path in enumerate(files):
        with open(path, encoding="utf-8", errors="replace") as f:
            j = json.load(f)
        name = j.get("label") or ("gdx-bench" if i == 0 else os.path.basename(path).split(".")[0])
        mine = points.get(name, [])
        if name not in legend:
            wrong.append(f"{name!r} is not in the legend {legend}")
        colours |= {c.get("fill") for c in mine}
        if len({c.get("fill") for c in mine}) != 1 or len(colours) != i + 1:
            wrong.append(f"{name!r} has no colour of its own")
        for r in j["results"]:
            size = r["bytes"]
            if labels.get(size) != size_label(size):
                wrong.append(f"size {size}: label {labels.get(size)!r}, want {size_label(size)!r}")
            at = [c for c in mine if int(c.get("data-size")) == size]
            gbps = [c.get("data-gbps") for c in at if c.get("data-gbps") is not None]
            usec = [c.get("data-usec") for c in at if c.get("data-usec") is not None]
            want_us, us_step = r.get("median_us"), 1e-3
            if want_us is None and "seconds" in r:
                want_us, us_step = r["seconds"] * 1e6 / j["iters"], 1 / j["iters"]
            if "Gbps" in r and not (len(gbps) == 1 and near(gbps[0], r["Gbps"], 1e-4)):
                wrong.append(f"{name!r} size {size}: data-gbps {gbps}, want {r['Gbps']}")
            if want_us is not None and not (len(usec) == 1 and near(usec[0], want_us, us_step)):
                wrong.append(f"{name!r} size {size}: data-usec {usec}, want {want_us}")
            p99 = [c.get("data-p99") for c in at if c.get("data-p99") is not None]
            if "p99_us" in r and not (len(p99) == 1 and near(p99[0], r["p99_us"], 1e-3)):
                wrong.append(f"{name!r} size {size}: data-p99 {p99}, want {r['p99_us']}")
    if wrong:
        print("; ".join(wrong[:8]))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
