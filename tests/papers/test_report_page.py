"""The interactive pages (issue 33): ``report.html`` of the committed reproduction driven in
a real headless chromium, and ``plot --html`` on a tiny sweep.

The browser tests skip when chromium or chromedriver is missing, except in CI (environment
variable ``CI`` set), where that is a failure."""

import json
import os
import re
import shutil
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from helpers import browser
from helpers.logs import write_logs
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from ssvmbench.cli import main
from ssvmbench.papers import report_page
from ssvmbench.plotting import figures, html, ticks
from ssvmbench.plotting.curves import add_suboptimality, aggregate
from ssvmbench.run.runlog import load_logs

COMMITTED = Path(__file__).resolve().parents[2] / "results" / "reproduction"
PAGE = COMMITTED / "report.html"


@pytest.fixture(scope="module")
def driver():
    """A headless chromium (skip without one, fail in CI)."""
    missing = browser.missing()
    if missing:
        reason = f"needs {' and '.join(missing)}: {browser.INSTALL}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    chromium = browser.chromium()
    yield chromium
    chromium.quit()


@pytest.fixture
def tiny_page(tmp_path, capsys):
    """``plot --html`` of test_plotting's tiny sweep (two solvers, two seeds, two λ)."""
    (tmp_path / "logs").mkdir()
    write_logs(tmp_path / "logs")
    out = tmp_path / "figures"
    assert main(["plot", str(tmp_path / "logs"), "-o", str(out), "--format", "png",
                 "--html"]) == 0
    assert str(out / figures.HTML) in capsys.readouterr().out.split()
    return out / figures.HTML


class _Sources(HTMLParser):
    """Every ``src`` and ``href`` of the page's tags (script bodies are not parsed)."""

    def __init__(self):
        super().__init__()
        self.sources = []

    def handle_starttag(self, tag, attrs):
        self.sources += [(tag, value) for name, value in attrs if name in ("src", "href")]


def remote_sources(path):
    parser = _Sources()
    parser.feed(path.read_text())
    return [(tag, src) for tag, src in parser.sources if src.startswith(("http:", "https:"))]


def test_the_pages_load_nothing_from_the_network(tiny_page):
    """Self-contained: the vendored plotly.js embedded once, no script, style or link from a
    server."""
    assert remote_sources(tiny_page) == [] and remote_sources(PAGE) == []
    bundle = html.PLOTLY_JS.read_text()
    assert "plotly.js (basic - minified)" in bundle[:200]
    for path in (tiny_page, PAGE):
        text = path.read_text()
        assert text.count("data-figure=") >= 2 and text.count(bundle) == 1
    parser = _Sources()
    parser.feed('<script src="https://cdn.plot.ly/plotly.min.js"></script>')
    assert parser.sources == [("script", "https://cdn.plot.ly/plotly.min.js")]   # it can fail


def test_plot_html_draws_the_aggregated_curves_with_seeds_and_every_x(tmp_path):
    """The page's median line is aggregate's median (at :func:`html.thin`'s checkpoints),
    its hover the seeds behind each point, its x switch every logged x axis."""
    (tmp_path / "logs").mkdir()
    write_logs(tmp_path / "logs")
    df = add_suboptimality(load_logs(tmp_path / "logs"))
    drawn = figures.interactive(df, ["suboptimality", "test_error"], "effective_pass",
                                "minmax")
    fig = drawn["suboptimality"]
    assert fig.layout.meta["id"] == "figure-suboptimality"
    stats = aggregate(df, "suboptimality")
    lines = {(trace.name, trace.xaxis): trace for trace in fig.data if trace.mode == "lines"
             and trace.hovertemplate}
    assert sorted(name for name, _ in lines) == ["bcfw", "bcfw", "bcfw-wavg", "bcfw-wavg",
                                                 "ssg"]
    big = stats[(stats["method"] == "bcfw") & (stats["regularization"] == 0.01)]
    line = lines[("bcfw", "x")]                          # the first panel: λ = 0.01
    assert list(line.y) == pytest.approx(list(big["median"]), rel=1e-3)
    seeds = [point[1] for point in line.customdata]
    assert seeds == [2, 2, 2] and [p[1] for p in lines[("bcfw", "x2")].customdata] == [1] * 3
    legend = [trace for trace in fig.data if trace.legendgroup == "bcfw"]
    assert len(legend) == 6 and sum(bool(t.showlegend) for t in legend) == 1
    menus = {button.label: button for menu in fig.layout.updatemenus for button in menu.buttons}
    assert set(menus) == {"log y", "linear y", "log x", "linear x", "effective passes",
                          "oracle calls", "solver time (s)"}
    assert menus["linear y"].args[0]["yaxis2.type"] == "linear"
    calls = menus["oracle calls"].args[0]["x"]          # the page reads x from the hover
    assert [point[calls] for point in line.customdata] == [100, 200, 400]


def test_report_writes_the_page_with_each_check_beside_its_figure(tmp_path, capsys):
    """``report`` writes report.html from the traces: per figure the checks.csv rows of its
    y column, per curve its runs (as many as provenance.csv lists), the report's notes."""
    preset = "sap_figure1_ocr"                        # checks on two figures: nnz, accuracy
    shutil.copytree(COMMITTED / preset, tmp_path / preset)
    assert main(["report", str(tmp_path)]) == 0
    assert str(tmp_path / "report.html") in capsys.readouterr().out.split()
    page = (tmp_path / "report.html").read_text()
    checks = pd.read_csv(tmp_path / "checks.csv", keep_default_na=False)
    rows = page.split('<div class="row">')[1:]
    for y in ("test_accuracy", "nnz"):
        row = next(row for row in rows if f'id="{preset}-{y}"' in row)
        shown = re.findall(r'<div class="check" [^>]*data-check="([^"]*)"', row)
        assert [unescape(text) for text in shown] == [
            check for check in checks["check"] if f" in {y}," in check]
    runs = re.findall(r"<summary>\S+: (\d+) runs?</summary>", page)
    assert sum(map(int, runs)) == len(pd.read_csv(tmp_path / preset / "provenance.csv")) > 1
    assert f"Checks: {len(checks)} reproduced" in page and "Compute: " in page
    legend = set(re.findall(r'"name":"([^"]*)"', page))       # the paper's names (preset)
    assert {"SAP", "SAP random order (extra)", "L2-SSVM (BCFW, extra)"} <= legend
    assert "sap-permutation-rho1=0.9" not in legend
    named = re.findall(r'<p class="check-text"><b>Check:</b> (.*?)</p>', page)
    assert len(named) == len(checks) and all("sap-" not in text for text in named)
    assert "SAP" in named[0] and "sap-" in checks["check"][0]
    report = (tmp_path / "report.md").read_text()       # per paper its tally, paper's names
    counts = checks["result"].value_counts()
    assert f"- **SAP**: {counts['reproduced']} reproduced" in report
    summary = report[report.index("| preset | item | check | result |"):]
    table = summary.split("\n\n")[0].splitlines()
    assert len(table) == 2 + len(checks) and "sap-" not in "".join(table)


def test_thin_keeps_the_ends_and_at_most_the_points():
    curve = pd.DataFrame({"effective_pass": range(1, 1001)})
    kept = html.thin(curve, 40)["effective_pass"]
    assert len(kept) <= 40 and kept.iloc[0] == 1 and kept.iloc[-1] == 1000
    assert kept.iloc[1] - kept.iloc[0] < kept.iloc[-1] - kept.iloc[-2]   # dense early
    assert len(html.thin(curve.head(5), 40)) == 5


def test_a_line_style_is_a_plotly_dash():
    assert html.dash("--") == "dash" and html.dash((0, (5, 1, 1, 1))) == "10px,2px,2px,2px"


in_one_browser = pytest.mark.xdist_group("browser")


def _load(driver, path):
    driver.get_log("performance")                          # only this page's requests
    browser.open_page(driver, path)
    return driver


def _requests(driver):
    messages = [json.loads(entry["message"])["message"]
                for entry in driver.get_log("performance")]
    return [m["params"]["request"]["url"] for m in messages
            if m["method"] == "Network.requestWillBeSent"]


@in_one_browser
@pytest.mark.parametrize("which", ["committed", "tiny"])
def test_the_page_loads_without_console_errors_or_network(driver, which, request):
    path = PAGE if which == "committed" else request.getfixturevalue("tiny_page")
    _load(driver, path)
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
    urls = _requests(driver)
    assert urls and all(url.startswith(("file:", "data:")) for url in urls), urls
    resources = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(url.startswith(("file:", "data:")) for url in resources), resources


@in_one_browser
def test_the_page_shows_every_preset_figure_and_every_check(driver):
    """One section per preset in checks.csv with one figure per PNG figure ``plot`` drew
    there (every one drawn, those far below the screen too), and every row of checks.csv
    (check and verdict) beside them."""
    _load(driver, PAGE)
    checks = pd.read_csv(COMMITTED / "checks.csv", keep_default_na=False)
    sections = driver.execute_script("""
        return [...document.querySelectorAll('section[id^="preset-"]')].map(s => [s.id,
            [...s.querySelectorAll('.plotly-graph-div')].filter(d => d.data.length > 0)
                .map(d => d.id),
            [...s.querySelectorAll('.check')].map(c => [c.dataset.check,
                c.querySelector('.verdict').innerText])]);""")
    assert [name for name, _, _ in sections] == [f"preset-{p}" for p in
                                                  checks["preset"].unique()]
    for name, drawn, shown in sections:
        folder = COMMITTED / name.removeprefix("preset-")
        assert sorted(drawn) == sorted(f"{folder.name}-{png.stem}"
                                         for png in folder.glob("*.png")), name
        rows = checks[checks["preset"] == folder.name]
        assert sorted(map(tuple, shown)) == sorted(zip(rows["check"], rows["result"]))


def _click(driver, element):
    ActionChains(driver).move_to_element(element).click().perform()


@in_one_browser
def test_clicking_a_legend_entry_hides_its_curve_and_band(driver):
    _load(driver, PAGE)
    figure = "bcfw_figure1abc_ocr-suboptimality"
    entry = driver.find_elements(By.CSS_SELECTOR, f"#{figure} .legend .traces")[0]
    name = entry.get_attribute("textContent")
    visible = """return document.getElementById(arguments[0]).data
                     .filter(t => t.legendgroup === arguments[1]).map(t => t.visible);"""
    assert "legendonly" not in driver.execute_script(visible, figure, name)
    _click(driver, entry.find_element(By.CSS_SELECTOR, ".legendtoggle"))
    WebDriverWait(driver, 10).until(
        lambda d: set(d.execute_script(visible, figure, name)) == {"legendonly"})
    others = driver.execute_script("""return document.getElementById(arguments[0]).data
        .filter(t => t.legendgroup !== arguments[1]).map(t => t.visible);""", figure, name)
    assert "legendonly" not in others and len(driver.execute_script(visible, figure, name)) > 3


def _button(driver, figure, label):
    buttons = driver.find_elements(By.CSS_SELECTOR, f"#{figure} .updatemenu-button")
    return next(b for b in buttons if b.get_attribute("textContent") == label)


@in_one_browser
def test_the_axis_switches_change_the_axes(driver):
    _load(driver, PAGE)
    figure = "bcfw_figure1abc_ocr-suboptimality"
    layout = "return document.getElementById(arguments[0]).layout"
    assert driver.execute_script(layout, figure)["yaxis3"]["type"] == "log"
    _click(driver, _button(driver, figure, "linear y"))
    WebDriverWait(driver, 10).until(
        lambda d: d.execute_script(layout, figure)["yaxis3"]["type"] == "linear")
    first_x = "return document.getElementById(arguments[0]).data[0].x.slice(0, 3)"
    passes = driver.execute_script(first_x, figure)
    _click(driver, _button(driver, figure, "oracle calls"))
    WebDriverWait(driver, 10).until(
        lambda d: d.execute_script(layout, figure)["xaxis"]["title"]["text"] == "oracle calls")
    assert driver.execute_script(first_x, figure) != passes


EXAMPLE = COMMITTED.parent / "examples" / "compare_gap_bcfw"


@in_one_browser
def test_an_added_method_has_its_colour_in_every_panel_and_its_comparison_beside(driver):
    """The committed example of `reproduce --with` (issue 42): the added method's curves in
    every panel of every figure in one colour no paper curve has, and one comparison card
    per added curve beside each figure."""
    _load(driver, EXAMPLE / "report.html")
    figures = driver.execute_script("""
        return [...document.querySelectorAll('.plotly-graph-div')].map(d => [d.id,
            d.data.filter(t => t.mode === 'lines' && t.name.startsWith('BCFW, gap sampling'))
                  .map(t => [t.xaxis || 'x', t.line.color]),
            d.data.filter(t => t.mode === 'lines' && t.showlegend !== false
                          && !t.name.startsWith('BCFW, gap sampling')).map(t => t.line.color),
            d.closest('.row').querySelectorAll('.comparison').length]);""")
    assert len(figures) == 2
    for name, ours, theirs, cards in figures:
        assert {axis for axis, _ in ours} == {"x", "x2", "x3"}, name      # every panel
        assert len({color for _, color in ours}) == 1 and not {c for _, c in ours} & set(theirs)
        assert cards == 2, name                                   # raw and wavg


def test_a_short_log_x_axis_labels_several_ticks():
    """Decades while three are in view, then 1-2-5, then every digit (a 5-pass axis: 1, 2, 5)."""
    assert ticks.plotly_dtick(0.05, 100) == 1 and ticks.plotly_dtick(1, 5) == "D2"
    assert ticks.plotly_dtick(1, 100) == 1 and ticks.plotly_dtick(20, 50) == "D1"


@in_one_browser
def test_a_short_log_x_axis_shows_several_tick_labels_and_switches_to_linear(driver, tiny_page):
    """The tiny sweep's 4 passes: at least three labelled ticks on the log x axis; the
    "linear x" button makes every x axis linear, "log x" gives the ticks back."""
    _load(driver, tiny_page)
    figure = "figure-suboptimality"
    labels = ("return [...document.querySelectorAll(`#${arguments[0]} .xtick text`)]"
              ".map(t => t.textContent).filter(t => t)")
    assert len(driver.execute_script(labels, figure)) >= 3           # its first panel
    types = ("const g = document.getElementById(arguments[0]); return Object.keys(g.layout)"
             ".filter(k => k.startsWith('xaxis')).map(k => g.layout[k].type)")
    assert set(driver.execute_script(types, figure)) == {"log"}
    _click(driver, _button(driver, figure, "linear x"))
    WebDriverWait(driver, 10).until(
        lambda d: set(d.execute_script(types, figure)) == {"linear"})
    _click(driver, _button(driver, figure, "log x"))
    WebDriverWait(driver, 10).until(lambda d: set(d.execute_script(types, figure)) == {"log"})
    assert len(driver.execute_script(labels, figure)) >= 3


def test_the_scorecard_counts_every_verdict_and_colours_an_unknown_one_neutrally():
    """Verdicts in a fixed order, a new kind of result ("supporting evidence") after them
    with its own class (no colour of the known verdicts: the neutral default), every
    figure linked with one mark per check, a figure without checks with an empty one."""
    checks = pd.DataFrame({"preset": ["a", "a", "a", "b"], "paper": ["P", "P", "P", "Q"],
                           "result": ["supporting evidence", "not reproduced", "reproduced",
                                      "reproduced"], "named": ["x", "y", "z", "w"]})
    assert report_page.tally(checks["result"]) == [
        ("reproduced", 2), ("not reproduced", 1), ("supporting evidence", 1)]
    card = report_page.scorecard(checks, [("a", "P", "Figure 1"), ("b", "Q", "Table 2"),
                                          ("c", "Q", "Table 3")])
    row = card[card.index('data-paper="P"'):card.index('data-paper="Q"')]
    assert re.findall(r'<b class="count">(\d+)</b> ([^<]+)</span>', row) == [
        ("1", "reproduced"), ("1", "not reproduced"), ("1", "supporting evidence")]
    assert 'class="mark v-supporting-evidence"' in row and 'href="#preset-a"' in row
    assert "v-supporting-evidence" not in report_page.STYLE + html.STYLE
    assert card.count('class="mark none"') == 1 and 'href="#preset-c"' in card


def test_the_committed_page_weighs_at_most_3_mb():
    """7.8 MB before the basic plotly.js bundle and the lighter figures (issue 46)."""
    assert PAGE.stat().st_size <= 3_000_000


def _visible_checks(driver, within="main"):
    return driver.execute_script(f"""return [...document.querySelectorAll('{within} .check')]
        .filter(c => c.offsetParent !== null).map(c => c.dataset.verdict);""")


@in_one_browser
def test_the_scorecard_counts_match_checks_csv_and_link_every_section(driver):
    """Per paper the verdicts counted as in checks.csv, one mark per check per figure,
    each linking to its section; the first figure within a screen below the scorecard."""
    _load(driver, PAGE)
    checks = pd.read_csv(COMMITTED / "checks.csv", keep_default_na=False)
    papers = driver.execute_script("""
        return [...document.querySelectorAll('#scorecard tr[data-paper]')].map(r => [
            r.dataset.paper,
            [...r.querySelectorAll('.tally [data-verdict]')].map(v => [v.dataset.verdict,
                Number(v.querySelector('.count').textContent)]),
            [...r.querySelectorAll('a.item')].map(a => [a.hash,
                [...a.querySelectorAll('.mark[data-verdict]')].map(m => m.dataset.verdict)])]);""")
    paper = checks["item"].str.split().str[0]
    assert [name for name, _, _ in papers] == list(dict.fromkeys(paper))
    for name, counts, items in papers:
        ours = checks[paper == name]
        assert dict(counts) == ours["result"].value_counts().to_dict(), name
        for link, marks in items:
            rows = ours[ours["preset"] == link.removeprefix("#preset-")]
            assert marks == list(rows["result"]), link
            assert driver.execute_script("return document.querySelector(arguments[0]) !== null",
                                         link)
    assert sum(len(items) for _, _, items in papers) == checks["preset"].nunique()
    below, top, height = driver.execute_script("""return [
        document.getElementById('scorecard').getBoundingClientRect().bottom,
        document.querySelector('.plotly-graph-div').getBoundingClientRect().top,
        window.innerHeight];""")
    assert top - below < height


@in_one_browser
def test_the_contents_bar_stays_in_view_and_leads_to_every_section(driver):
    _load(driver, PAGE)
    checks = pd.read_csv(COMMITTED / "checks.csv", keep_default_na=False)
    links = driver.execute_script("""return [...document.querySelectorAll(
        '#contents a[href^="#preset-"]')].map(a => a.hash.slice(8));""")
    assert links == list(checks["preset"].unique())
    driver.execute_script("document.getElementById(arguments[0]).scrollIntoView()",
                          f"preset-{links[-1]}")
    box = driver.execute_script("""const r = document.getElementById('contents')
        .getBoundingClientRect(); return [r.top, r.bottom, window.scrollY];""")
    assert box[2] > 10_000 and 0 <= box[0] < 50 and box[1] > 300      # still on screen
    _click(driver, driver.find_element(By.CSS_SELECTOR, f'#contents a[href="#preset-{links[0]}"]'))
    WebDriverWait(driver, 10).until(lambda d: abs(d.execute_script(
        "return document.getElementById(arguments[0]).getBoundingClientRect().top",
        f"preset-{links[0]}")) < 5)


@in_one_browser
def test_the_filter_shows_only_the_checks_that_do_not_hold(driver):
    """The shortcut leaves the not reproduced and not comparable checks (cards and table
    rows) and the sections that have any; "every check" shows them all again."""
    _load(driver, PAGE)
    checks = pd.read_csv(COMMITTED / "checks.csv", keep_default_na=False)
    kept = checks[checks["result"].isin(["not reproduced", "not comparable here"])]
    assert sorted(_visible_checks(driver)) == sorted(checks["result"])
    _click(driver, driver.find_element(By.CSS_SELECTOR, "#contents button[data-only]"))
    WebDriverWait(driver, 10).until(
        lambda d: sorted(_visible_checks(d)) == sorted(kept["result"]))
    sections = driver.execute_script("""return [...document.querySelectorAll(
        'main section[id^="preset-"]')].filter(s => !s.hidden).map(s => s.id.slice(7));""")
    assert sections == list(kept["preset"].unique())
    rows = driver.execute_script("""return [...document.querySelectorAll(
        '#summary tr[data-verdict]')].filter(r => !r.hidden).map(r => r.dataset.verdict);""")
    assert sorted(rows) == sorted(kept["result"])
    box = driver.find_element(By.CSS_SELECTOR, '#contents input[value="not reproduced"]')
    _click(driver, box)                                # untick: not comparable only
    WebDriverWait(driver, 10).until(lambda d: set(_visible_checks(d)) == {"not comparable here"})
    _click(driver, driver.find_elements(By.CSS_SELECTOR, "#contents button[data-only]")[1])
    WebDriverWait(driver, 10).until(lambda d: len(_visible_checks(d)) == len(checks))


@in_one_browser
def test_the_run_tables_fit_a_1400_px_window(driver):
    """Every run table and list opened, nothing is wider than the window (the overrides
    column was a 30-px sliver of a table twice the page's width) and no cell is a sliver."""
    _load(driver, PAGE)
    assert driver.get_window_size()["width"] == 1400
    wide, slivers = driver.execute_script("""
        document.querySelectorAll('details').forEach(d => { d.open = true; });
        return [document.documentElement.scrollWidth - document.documentElement.clientWidth,
                [...document.querySelectorAll('table.runs td')]
                    .filter(td => td.getBoundingClientRect().width < 40).length];""")
    assert wide <= 0 and slivers == 0
    driver.execute_script("document.querySelectorAll('details').forEach(d => { d.open = false; })")
