"""Screenshots of the committed report page for the docs (docs/images/report-page-*.png):
a figure with its checks, and a figure switched to linear y over solver time with a hover.

    python scripts/report_screenshots.py [REPORT.html]   # default: the committed page
    (needs chromium: scripts/chromium.sh install)
"""

import sys
import time
from pathlib import Path

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import browser  # noqa: E402  (tests/browser.py: the headless chromium of the tests)

COMMITTED = ROOT / "results" / "reproduction" / "report.html"
IMAGES = ROOT / "docs" / "images"
CHECKED = "bcfw_figure1abc_ocr"                  # a preset: its first figure and checks
SWITCHED = "casimir_figure2a_ner-primal"          # a figure shown with the switches used


def click(driver, figure, label):
    """Click the figure's menu button ``label``."""
    buttons = driver.find_elements(By.CSS_SELECTOR, f"#{figure} .updatemenu-button")
    button = next(b for b in buttons if b.get_attribute("textContent") == label)
    ActionChains(driver).move_to_element(button).click().perform()
    time.sleep(1)


def main():
    if browser.missing():
        sys.exit(f"report_screenshots.py: needs {' and '.join(browser.missing())}: "
                 f"{browser.INSTALL}")
    IMAGES.mkdir(parents=True, exist_ok=True)
    driver = browser.chromium(width=1280, height=860)
    try:
        browser.open_page(driver, Path(sys.argv[1]) if len(sys.argv) > 1 else COMMITTED)
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
    for name in ("report-page-checks.png", "report-page-switches.png"):
        print(IMAGES / name, f"{(IMAGES / name).stat().st_size / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
