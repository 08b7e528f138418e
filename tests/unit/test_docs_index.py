"""The docs in three kinds: docs/index.md links every page by the question it answers, every relative link of
the Markdown files resolves, reference pages hold no dated run log, and every entry of the lab notebook
(docs/lab/) is dated and carries the command that measured it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
INDEX = DOCS / "index.md"
LAB = DOCS / "lab"
# folders of docs/ that hold files to run or read beside a page, not pages: worked examples, experiment files
NOT_PAGES = ("examples", "reproductions")
LINK = re.compile(r"\]\(([^)\s]+)\)")
COMMAND = re.compile(r"`[^`]*(?:tdebench |python3? |benchmarks/|scripts/|\.ci/run)[^`]*`", re.S)
DATED_HEADING = re.compile(r"^#+ .*\b20\d\d-\d\d-\d\d\b")


def pages() -> set[Path]:
    """Every page under docs/ but the index itself."""
    return {p for p in DOCS.rglob("*.md") if p != INDEX and p.relative_to(DOCS).parts[0] not in NOT_PAGES}


def relative_links(page: Path, text: str) -> list[str]:
    """The relative link targets of a Markdown text (code blocks, URLs and anchors within the page left out)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


def unlinked(index_text: str, every: set[Path]) -> list[str]:
    """The pages of ``every`` that the index text links to nowhere."""
    linked = {(INDEX.parent / t.split("#")[0]).resolve() for t in relative_links(INDEX, index_text)}
    return sorted(str(p.relative_to(DOCS)) for p in every if p.resolve() not in linked)


def test_the_index_links_every_page():
    every = pages()
    assert len(every) > 30 and DOCS / "precision.md" in every, "found too few pages under docs/"
    missing = unlinked(INDEX.read_text(encoding="utf-8"), every)
    assert not missing, f"docs/index.md does not link {missing}: add each under the question it answers"


def test_the_index_check_catches_a_page_it_does_not_link():
    text = INDEX.read_text(encoding="utf-8")
    planted = text.replace("[Faults](faults.md)", "Faults")
    assert unlinked(planted, pages()) == ["faults.md"]


def test_every_relative_link_resolves():
    files = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    assert INDEX in files and len(files) > 30, files[:5]
    broken = []
    for page in files:
        broken += [f"{page.relative_to(ROOT)}: {t}" for t in relative_links(page, page.read_text(encoding="utf-8"))
                   if not (page.parent / t.split("#")[0]).exists()]
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def test_reference_pages_hold_no_dated_log():
    reference = [p for p in pages() if LAB not in p.parents]
    assert len(reference) > 25
    dated = [f"{p.relative_to(DOCS)}: {line}" for p in reference for line in p.read_text().splitlines()
             if DATED_HEADING.match(line)]
    assert not dated, "a dated entry belongs in the lab notebook (docs/lab/):\n" + "\n".join(dated)


def lab_entries() -> list[tuple[str, str, str]]:
    """(notebook, heading, body) of every entry (## section) of the lab notebook."""
    out = []
    for notebook in sorted(LAB.glob("*.md")):
        if notebook.name == "README.md":
            continue
        for part in re.split(r"(?m)^## ", notebook.read_text(encoding="utf-8"))[1:]:
            heading, _, body = part.partition("\n")
            out.append((notebook.name, heading, body))
    return out


def test_every_lab_entry_is_dated_and_has_its_command():
    entries = lab_entries()
    assert len(entries) >= 10, "the lab notebook lost its entries"
    undated = [f"{n}: {h}" for n, h, _ in entries if not re.match(r"20\d\d-\d\d-\d\d\b", h)]
    no_command = [f"{n}: {h}" for n, h, b in entries if not COMMAND.search(b)]
    assert not undated, "an entry's heading starts with its date (YYYY-MM-DD):\n" + "\n".join(undated)
    assert not no_command, "an entry says the command that measured it:\n" + "\n".join(no_command)
