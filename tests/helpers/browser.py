"""Headless Debian chromium driven by Selenium, for tests/papers/test_report_page.py and
scripts/report_screenshots.py (``scripts/chromium.sh install`` installs it)."""

import shutil

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

BINARIES = ("chromium", "chromedriver")
INSTALL = ("apt-get install chromium chromium-driver (or scripts/chromium.sh install; "
           "CI does it)")


def missing():
    """The browser binaries not on PATH."""
    return [name for name in BINARIES if shutil.which(name) is None]


def chromium(width=1400, height=1000):
    """A headless chromium logging the console and the network (``get_log("browser")``,
    ``get_log("performance")``); the local chromedriver, so Selenium fetches nothing."""
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def open_page(driver, path):
    """Load the page at ``path`` and wait until every Plotly figure on it is drawn."""
    driver.get(path.resolve().as_uri())
    driver.set_script_timeout(60)
    driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const drawn = () => [...document.querySelectorAll('.plotly-graph-div')]
            .every(div => div._fullLayout && div.querySelector('.main-svg'));
        const wait = () => drawn() ? done() : setTimeout(wait, 100);
        wait();""")
