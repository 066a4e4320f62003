"""The documentation: the generated reference pages equal what the code generates now; every
link of the README and every page of the site's navigation exists; the build hook brings the
repository's figures and checks into the pages."""

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def _script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generator():
    return _script("docs_reference")


def test_generated_reference_equals_the_code(tmp_path):
    for path in _generator().write(tmp_path):
        committed = ROOT / "docs" / "reference" / path.name
        if not committed.is_file() or committed.read_text() != path.read_text():
            pytest.fail("run python scripts/docs_reference.py", pytrace=False)


def test_cli_reference_reads_the_parsers(monkeypatch):
    """An option added to a command's parser appears in the reference without a hand list."""
    from ssvmbench.papers import report
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


def _fake_repo(tmp_path):
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "results" / "fig").mkdir(parents=True)
    (tmp_path / "results" / "fig" / "a.png").write_bytes(b"png")
    (tmp_path / "results" / "report.md").write_text("![a](fig/a.png) [gone](fig/gone.png)\n")
    (tmp_path / "docs" / "guide" / "page.md").write_text(
        "![a](../../results/fig/a.png) [report](../../results/report.md) [other](other.md)\n")
    (tmp_path / "docs" / "guide" / "other.md").write_text("# other\n")
    return tmp_path


def test_hook_adds_the_linked_repository_files_and_what_they_link(tmp_path):
    hooks = _script("mkdocs_hooks")
    repo = _fake_repo(tmp_path)
    assert sorted(hooks.linked_files(repo, "docs", ["docs/guide/page.md"])) == \
        ["results/fig/a.png", "results/report.md"]


def test_hook_points_repository_links_at_the_site_copies(tmp_path):
    hooks = _script("mkdocs_hooks")
    repo = _fake_repo(tmp_path)
    page = (repo / "docs" / "guide" / "page.md").read_text()
    assert hooks.site_links(page, repo, "docs", "guide/page.md") == \
        "![a](../results/fig/a.png) [report](../results/report.md) [other](other.md)\n"


def test_hook_fills_the_check_tables_from_checks_csv(tmp_path):
    hooks = _script("mkdocs_hooks")
    csv_path = tmp_path / hooks.CHECKS_CSV
    csv_path.parent.mkdir(parents=True)
    csv_path.write_text("preset,item,check,result,detail,quote,why,deviation\n"
                        "p1,BCFW Figure 2,c,reproduced,3 of 3,\"says a | b\",w,\n"
                        "p2,SAP Figure 1,c,not reproduced,0 of 3,q,w,\n")
    table = hooks.checks_table("before\n<!-- checks: BCFW -->\nafter", tmp_path)
    assert table == ("before\n| item | the paper says | result | detail |\n"
                     "| --- | --- | --- | --- |\n"
                     "| BCFW Figure 2 | says a \\| b | **reproduced** | 3 of 3 |\nafter")


def test_hook_shows_sphinx_roles_as_code_names():
    hooks = _script("mkdocs_hooks")
    html = ("a :class:<code>~ssvmbench.tasks.metrics.Metric</code> and "
            ":func:<code>ssvmbench.run.runlog.read_log</code>, <code>:x:</code>")
    assert hooks.plain_roles(html) == ("a <code>Metric</code> and "
                                       "<code>ssvmbench.run.runlog.read_log</code>, <code>:x:</code>")


def test_hook_lists_the_deviations_of_a_papers_presets(tmp_path):
    hooks = _script("mkdocs_hooks")
    presets = tmp_path / hooks.PRESETS
    presets.mkdir(parents=True)
    (presets / "b_fig2.yaml").write_text("paper: BCFW\nitem: Figure 2\n"
                                         "deviations:\n  d: d = 4082,\n    not 4028.\n")
    (presets / "s_fig1.yaml").write_text("paper: SAP\nitem: Figure 1\ndeviations: {x: y}\n")
    assert hooks.deviations_list("<!-- deviations: BCFW -->", tmp_path) == \
        "- **Figure 2** (`b_fig2`):\n    - *d*: d = 4082, not 4028."


HISTORY_PAGES = ("changelog.md", "development.md")     # the pages where history belongs
ISSUE = re.compile(r"\bissue\s+#?\d+", re.I)
COMMIT = re.compile(r"(?<![.\w])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")    # not a decimal's digits
NOT_OUR_COMMITS = {     # pins of the Casimir authors' repository (krishnap25/casimir), not ours
    "323d40b4c1c645248703d9197dc499e98ffc1c69", "319628f0", "a8cb8dd",
    "77fdaa9"}          # and of the BCFW authors' (ppletscher/BCFWstruct)


def test_user_pages_carry_no_history():
    """A user page says what is true now and how to measure it: no issue numbers and no
    commit hashes of ours (the changelog keeps when and how things changed)."""
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        if page.name in HISTORY_PAGES:
            continue
        text = page.read_text(encoding="utf-8")
        found += [f"{page.relative_to(ROOT)}: {match.group(0)!r}"
                  for pattern in (ISSUE, COMMIT) for match in pattern.finditer(text)
                  if match.group(0) not in NOT_OUR_COMMITS]
    assert not found, "history on a user page (move it to docs/changelog.md):\n" + \
        "\n".join(found)


def test_history_check_finds_issues_and_commits():
    text = "Measured at issue 31 (Issue 4's target; since 1f0d0b4, b359726a)."
    assert [m.group(0) for m in ISSUE.finditer(text)] == ["issue 31", "Issue 4"]
    assert [m.group(0) for m in COMMIT.finditer(text)] == ["1f0d0b4", "b359726a"]
    assert not COMMIT.findall("primal 0.0832665, 2.207658e-3, 36,950,006 weights, facade")
