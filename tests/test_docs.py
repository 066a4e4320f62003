"""The documentation: the generated reference pages equal what the code generates now, and
every link of the README and every page of the site's navigation exists."""

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("docs_reference",
                                                  ROOT / "scripts" / "docs_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_reference_equals_the_code(tmp_path):
    for path in _generator().write(tmp_path):
        committed = ROOT / "docs" / "reference" / path.name
        if not committed.is_file() or committed.read_text() != path.read_text():
            pytest.fail("run python scripts/docs_reference.py", pytrace=False)


def test_cli_reference_reads_the_parsers(monkeypatch):
    """An option added to a command's parser appears in the reference without a hand list."""
    from ssvmbench import report
    configure = report.configure_parser

    def with_extra(parser):
        configure(parser)
        parser.add_argument("--shiny-new-option", help="added by this test")

    monkeypatch.setattr(report, "configure_parser", with_extra)
    assert "`--shiny-new-option SHINY_NEW_OPTION` |  | added by this test |" in \
        _generator().cli_reference()


def _links(markdown):
    return re.findall(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)", markdown)


def test_every_readme_link_exists():
    missing = [link for link in _links((ROOT / "README.md").read_text())
               if not re.match(r"^[a-z]+:", link) and not (ROOT / link).exists()]
    assert not missing, f"README links to missing files: {missing}"


def _nav_pages(nav):
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if isinstance(value, list):
            yield from _nav_pages(value)
        else:
            yield value


def test_every_nav_page_exists():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    pages = list(_nav_pages(config["nav"]))
    missing = [page for page in pages
               if not (ROOT / "docs" / page).is_file() and not (ROOT / page).is_file()]
    assert pages and not missing, f"mkdocs.yml's nav names missing pages: {missing}"
