"""Screenshots of the committed report pages for the docs (docs/images/*.png): the top of
the page (scorecard and contents bar), a figure with its checks, a figure switched to linear y over solver time with a hover, and a figure
with an added method beside the papers' and its comparison (``reproduce --with``).

    python scripts/report_screenshots.py [REPORT.html]   # default: the committed page
    python scripts/report_screenshots.py --compare [REPORT.html]   # default: the example's
    (needs chromium: scripts/chromium.sh install)
"""

import sys
import time
from pathlib import Path

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import browser  # noqa: E402  (tests/helpers/browser.py: the headless chromium of the tests)

COMMITTED = ROOT / "results" / "reproduction" / "report.html"
COMPARED = ROOT / "results" / "examples" / "compare_gap_bcfw" / "report.html"
COMPARED_FIGURE = "bcfw_figure2_ocr-suboptimality"   # its figure with the added method
IMAGES = ROOT / "docs" / "images"
CHECKED = "bcfw_figure1abc_ocr"                  # a preset: its first figure and checks
SWITCHED = "casimir_figure2a_ner-primal"          # a figure shown with the switches used


def click(driver, figure, label):
    """Click the figure's menu button ``label``."""
    buttons = driver.find_elements(By.CSS_SELECTOR, f"#{figure} .updatemenu-button")
    button = next(b for b in buttons if b.get_attribute("textContent") == label)
    ActionChains(driver).move_to_element(button).click().perform()
    time.sleep(1)


def compared(page):
    """docs/images/compare-page.png: the example's figure beside its comparison."""
    driver = browser.chromium(width=1400, height=1000)
    try:
        browser.open_page(driver, page)
        row = driver.find_element(By.ID, COMPARED_FIGURE).find_element(
            By.XPATH, "ancestor::div[@class='row']")
        driver.execute_script("arguments[0].scrollIntoView()", row)
        time.sleep(1)
        row.screenshot(str(IMAGES / "compare-page.png"))
    finally:
        driver.quit()
    print(IMAGES / "compare-page.png", f"{(IMAGES / 'compare-page.png').stat().st_size / 1e3:.0f} kB")


def main():
    if browser.missing():
        sys.exit(f"report_screenshots.py: needs {' and '.join(browser.missing())}: "
                 f"{browser.INSTALL}")
    IMAGES.mkdir(parents=True, exist_ok=True)
    if sys.argv[1:2] == ["--compare"]:
        return compared(Path(sys.argv[2]) if len(sys.argv) > 2 else COMPARED)
    driver = browser.chromium(width=1280, height=860)
    try:
        browser.open_page(driver, Path(sys.argv[1]) if len(sys.argv) > 1 else COMMITTED)
        driver.save_screenshot(str(IMAGES / "report-page-scorecard.png"))
        section = driver.find_element(By.ID, f"preset-{CHECKED}")
        driver.execute_script("arguments[0].scrollIntoView()", section)
        time.sleep(1)
        driver.save_screenshot(str(IMAGES / "report-page-checks.png"))
        figure = driver.find_element(By.ID, SWITCHED)
        driver.execute_script("arguments[0].scrollIntoView()", figure)
        click(driver, SWITCHED, "linear y")
        click(driver, SWITCHED, "solver time (s)")
        driver.execute_script("Plotly.Fx.hover(arguments[0], [{curveNumber: 2, pointNumber: 20}])",
                              figure)
        driver.execute_script("arguments[0].scrollIntoView()", figure)   # the clicks scroll
        time.sleep(0.5)
        figure.screenshot(str(IMAGES / "report-page-switches.png"))
    finally:
        driver.quit()
    for name in ("report-page-scorecard.png", "report-page-checks.png",
                 "report-page-switches.png"):
        print(IMAGES / name, f"{(IMAGES / name).stat().st_size / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
