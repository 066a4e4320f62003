"""Weight and time to the first drawn figure of a report page, in headless chromium.

    python scripts/report_timing.py [REPORT.html] [--runs N]   # default: the committed page

Prints the page's bytes (with the files beside it that it loads, if any), the machine's load
average and, per run, the milliseconds from navigation start to the first frame that shows
the first figure drawn (a ``requestAnimationFrame`` loop injected before the page's scripts,
the frame where its ``.main-svg`` is in the document), to the end of the load event and to
the frame with every figure drawn, medians last; the first run starts with a cold cache. Needs chromium
(scripts/chromium.sh install).
"""

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import browser  # noqa: E402  (tests/helpers/browser.py: the headless chromium of the tests)

WATCH = """
window.__firstFigure = null;
window.__allFigures = null;
(function frame() {
  const divs = [...document.querySelectorAll('.plotly-graph-div')];
  const drawn = divs.map(div => div.querySelector('.main-svg') !== null);
  if (window.__firstFigure === null && drawn[0]) window.__firstFigure = performance.now();
  if (document.readyState === 'complete' && drawn.length && drawn.every(Boolean)) {
    window.__allFigures = performance.now();
    return;
  }
  requestAnimationFrame(frame);
})();"""


def first_figure_ms(driver, page):
    """Milliseconds from navigation start to the first frame with the first figure drawn,
    to the end of the load event and to the first frame with every figure drawn."""
    driver.get(page.resolve().as_uri())
    driver.set_script_timeout(60)
    return driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const load = () => performance.getEntriesByType('navigation')[0].loadEventEnd;
        const wait = () => window.__allFigures !== null && load() > 0
            ? done([window.__firstFigure, load(), window.__allFigures]) : setTimeout(wait, 20);
        wait();""")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", nargs="?", type=Path,
                        default=ROOT / "results" / "reproduction" / "report.html")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if browser.missing():
        sys.exit(f"report_timing.py: needs {' and '.join(browser.missing())}: {browser.INSTALL}")
    print(f"{args.page}: {args.page.stat().st_size:,} bytes; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    driver = browser.chromium()
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
        times = [first_figure_ms(driver, args.page) for _ in range(args.runs)]
    finally:
        driver.quit()
    for k, what in enumerate(("first figure drawn", "load event end", "every figure drawn")):
        print(f"{what} (ms):", " ".join(f"{t[k]:.0f}" for t in times),
              f"; median {statistics.median(t[k] for t in times):.0f}")


if __name__ == "__main__":
    main()
