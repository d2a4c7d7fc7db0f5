"""Measure `plan show` pages in headless Chromium: file size, time to first render, and
the time of a zoom and a pan (Plotly.relayout), for the figures quoted in the README.

    python scripts/show_render.py out/g1k.html out/g10k.html

Time to first render is from navigation start to the end of Plotly.newPlot (the page's
post-script sets window.ganttRendered = performance.now()).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
RELAYOUT_MS = """async ([lo, hi]) => {
  const gd = document.getElementById('gantt');
  const t0 = performance.now();
  await Plotly.relayout(gd, {'xaxis.range': [lo, hi]});
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
}"""


def main(paths: list[str]) -> None:
    print("| page | rectangles | MB | first render s | zoom ms | pan ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for path in paths:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(Path(path).resolve().as_uri())
            page.wait_for_function("window.ganttRendered !== undefined", timeout=300_000)
            first = page.evaluate("window.ganttRendered") / 1000
            bars = page.evaluate(
                "JSON.parse(document.getElementById('gantt-bars').textContent).t.length"
            )
            span = page.evaluate("document.getElementById('gantt')._fullLayout.xaxis.range[1]")
            zoom = page.evaluate(RELAYOUT_MS, [0.4 * span, 0.5 * span])
            pan = page.evaluate(RELAYOUT_MS, [0.45 * span, 0.55 * span])
            mb = Path(path).stat().st_size / 1e6
            print(
                f"| {Path(path).name} | {bars} | {mb:.1f} | {first:.2f} | {zoom:.0f} | {pan:.0f} |"
            )
            page.close()
        browser.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("pages", nargs="+", help="HTML pages written by `plan show`")
    main(ap.parse_args().pages)
