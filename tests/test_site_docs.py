"""The site's documentation pages from their sources, without building the site (fast): docstrings shown as
written, links that work on the site, ARCHITECTURE.md's threat model on its own page, and the README and guides
whose links lead somewhere. The built pages are tested in tests/test_site.py (on the site build it shares with the
lesson pages) and audited by axe in tests/browser/test_site.py."""

import html
import re
from pathlib import Path

import pytest

from course_lib.instructor import launch, site_docs

ROOT = Path(__file__).resolve().parents[1]


def shown(markdown: str) -> str:
    """The text a reader sees once ``markdown`` is rendered (markdown-it, the parser MyST is built on)."""
    markdown_it = pytest.importorskip("markdown_it")
    rendered = markdown_it.MarkdownIt("commonmark").render(markdown)
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


@pytest.mark.parametrize(
    "doc",
    [
        "Counts ``n``-grams of *tokens* (a list, not a `str`).",
        "Returns <UNK> for [unknown](ids) tokens: 100% $5 | a # b ~c~ {x} and a_b_c.",
        "Title\n-----\nnot a heading",
        "# not a heading either",
        "`unclosed backtick and *stars",
    ],
)
def test_a_docstring_is_shown_as_written_not_read_as_markup(doc):
    expected = " ".join(doc.replace("``", "").split())
    if "`unclosed" not in doc:
        expected = expected.replace("`", "")
    assert " ".join(shown(site_docs.docstring_md(doc)).split()) == expected


def test_an_indented_docstring_block_is_a_code_block():
    md = site_docs.docstring_md("Use it like this:\n\n    python -m course_lib.instructor.site --lessons 01\n\nDone.")
    assert "```text\npython -m course_lib.instructor.site --lessons 01\n```" in md
    markdown_it = pytest.importorskip("markdown_it")
    rendered = markdown_it.MarkdownIt("commonmark").render(md)
    assert "<pre><code" in rendered and "python -m course_lib.instructor.site --lessons 01\n</code></pre>" in rendered


def test_links_lead_to_the_site_s_pages_or_to_the_file_at_the_release_tag():
    release = launch.Release("1.2.3", "https://github.com/someone/course")
    text = (
        "[guide](instructors.md#limits) [arch](../ARCHITECTURE.md) [threats](../ARCHITECTURE.md#threat-model-of-grading)"
        " [results](../benchmarks/RESULTS.md#speed) [web](https://example.org/x.md) [here](#releases)"
    )
    assert site_docs.relink(text, release) == (
        "[guide](instructors.md#limits) [arch](architecture.md) [threats](threat-model.md)"
        " [results](https://github.com/someone/course/blob/v1.2.3/benchmarks/RESULTS.md#speed)"
        " [web](https://example.org/x.md) [here](#releases)"
    )


def test_the_threat_model_section_becomes_a_page_of_its_own():
    text = "# Built\n\n## Floors\n\nA.\n\n## Threat model of grading\n\nT.\n\n### Limits\n\nL.\n\n## Glossary\n\nG.\n"
    rest, threats = site_docs.split_architecture(text)
    assert threats == "# Threat model of grading\n\nT.\n\n## Limits\n\nL.\n"
    assert rest == "# Built\n\n## Floors\n\nA.\n\n## Glossary\n\nG.\n"
    with pytest.raises(ValueError, match="no '## Threat model' section"):
        site_docs.split_architecture("# Built\n\n## Floors\n")


def test_a_repository_without_docs_gets_no_documentation_pages_and_a_missing_guide_is_named(tmp_path):
    assert site_docs.pages(tmp_path) == {}
    (tmp_path / "docs").mkdir()
    with pytest.raises(ValueError, match="students.md is missing"):
        site_docs.pages(tmp_path)


def test_the_api_reference_is_read_from_the_source_without_importing_it(tmp_path):
    package = tmp_path / "pkg"
    (package / "notebook").mkdir(parents=True)
    (package / "__init__.py").write_text('"""The package."""\n')
    (package / "notebook" / "shown.py").write_text(
        '"""Shown."""\nraise SystemExit("imported")\n\n'
        'def plot(x: int, *, alt: str = \'a\') -> None:\n    """Plot ``x``."""\n\n'
        "def _hidden():\n    pass\n\n"
        'class Model:\n    """A model."""\n    def __init__(self, d_model=4):\n        pass\n'
        "    @property\n    def size(self) -> int:\n        return 1\n    def forward(self, x, /):\n        return x\n"
    )
    md = site_docs.api_reference(package)
    assert "## Floor 1: the notebook runtime" in md and "### `pkg.notebook.shown`" in md
    assert "**`plot(x: int, *, alt: str='a') -> None`**\n\nPlot `x`." in md
    assert "**class `Model(d_model=4)`**\n\nA model." in md
    assert "**`Model.size`** (property: `int`)" in md and "**`Model.forward(x, /)`**" in md
    assert "_hidden" not in md


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("path", ["README.md", *(f"docs/{name}.md" for name in site_docs.GUIDES)])
def test_every_link_of_the_readme_and_the_guides_leads_to_a_file_or_section_that_exists(path):
    text = (ROOT / path).read_text(encoding="utf-8")
    for link in LINK.findall(text):
        if link.startswith(("http:", "https:")):
            continue
        target, _, anchor = link.partition("#")
        file = (ROOT / path).parent / target if target else ROOT / path
        assert file.exists(), (path, link)
        if anchor:
            slugs = {
                re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
                for h in re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.M)
            }
            assert anchor in slugs, (path, link, sorted(slugs))


def test_the_readme_stays_short_and_points_to_every_guide():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 100
    for guide in site_docs.GUIDES:
        assert f"(docs/{guide}.md)" in readme
    assert "make lab" in readme and "make test" in readme
    assert "ARCHITECTURE.md#threat-model-of-grading" in readme
