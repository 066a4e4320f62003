"""What several tests share (one place, never one test module importing another): the
command line as a user runs it (``cli``), hand-written run logs (``logs``), tasks broken on
purpose (``kit``), the data the tests need (``data_files``), the example plugins
(``example_plugins``), dense reference feature maps (``reference``) and headless chromium
(``browser``). Fixtures live in ``tests/conftest.py``."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]             # the repository
COMMITTED = ROOT / "results" / "reproduction"          # the committed reproduction
