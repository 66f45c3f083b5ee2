"""``forgetting publish``: the built site pushed with ghp-import to a local bare repository.

Fast tier: the site is a tiny fake ``_build/html`` in a scratch book root (a two-page
``_toc.yml``, its sources in ``_executed/site/``), never the real book.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from forgetting.pipeline import cli, publish

TOC = {
    "format": "jb-book",
    "root": "intro",
    "parts": [{"caption": "Part one", "chapters": [{"file": "chapter"}]}],
}


def git(*args: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *map(str, args)], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def book(tmp_path: Path, monkeypatch) -> Path:
    """A book root with executed sources and, a second later, the site built from them."""
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Publisher")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "publisher@example.org")
    root = tmp_path / "book"
    (root / "_executed" / "site").mkdir(parents=True)
    (root / "book").mkdir()
    (root / "_config.yml").write_text("title: A tiny book\n")
    (root / "_toc.yml").write_text(yaml.safe_dump(TOC))
    (root / "_executed" / "site" / "intro.md").write_text("# Intro\n")
    (root / "_executed" / "site" / "chapter.ipynb").write_text("{}")
    html = root / "_build" / "html"
    (html / "_static").mkdir(parents=True)
    (html / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=intro.html" />')
    (html / "intro.html").write_text("<h1>Intro</h1>")
    (html / "chapter.html").write_text("<h1>Chapter</h1>")
    (html / "_static" / "style.css").write_text("body { margin: 0 }")
    (html / publish.PDF_NAME).write_bytes(b"%PDF-1.7 the whole book")
    later = time.time() + 5
    for page in html.rglob("*"):
        os.utime(page, (later, later))
    return root


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "pages.git"
    git("init", "--quiet", "--bare", bare)
    return bare


def branch_files(bare: Path, branch: str = "gh-pages") -> set[str]:
    return set(git("ls-tree", "-r", "--name-only", branch, cwd=bare).splitlines())


def test_toc_pages_in_reading_order(book):
    pages = publish.toc_pages(book)
    assert pages == [publish.TocPage("intro", None), publish.TocPage("chapter", "Part one")]


def test_publish_pushes_the_site_and_nojekyll(book, remote):
    done = publish.publish(book, str(remote))
    assert done.pushed
    assert branch_files(remote) == {
        ".nojekyll",
        "index.html",
        "intro.html",
        "chapter.html",
        "_static/style.css",
        publish.PDF_NAME,
    }
    assert git("rev-parse", "gh-pages", cwd=remote) == done.commit
    assert git("show", "gh-pages:chapter.html", cwd=remote) == "<h1>Chapter</h1>"
    assert (
        git("log", "-1", "--format=%cn <%ce>", "gh-pages", cwd=remote)
        == "Test Publisher <publisher@example.org>"
    )


def test_second_publish_without_change_is_a_no_op(book, remote):
    first = publish.publish(book, str(remote))
    second = publish.publish(book, str(remote))
    assert not second.pushed and second.commit == first.commit
    assert git("rev-list", "--count", "gh-pages", cwd=remote) == "1"


def test_publish_after_a_change_adds_one_commit_on_top(book, remote):
    first = publish.publish(book, str(remote))
    (book / "_build" / "html" / "chapter.html").write_text("<h1>Chapter, revised</h1>")
    (book / "_build" / "html" / "_static" / "style.css").unlink()
    second = publish.publish(book, str(remote), branch="gh-pages")
    assert second.pushed
    assert git("rev-parse", "gh-pages^", cwd=remote) == first.commit  # history continues
    assert branch_files(remote) == {".nojekyll", "index.html", "intro.html", "chapter.html", publish.PDF_NAME}


def test_publish_to_another_branch_and_through_a_named_remote(book, remote):
    git("init", "--quiet", cwd=book)
    git("remote", "add", "pages", remote, cwd=book)
    assert publish.publish(book, "pages", branch="site").pushed
    assert "index.html" in branch_files(remote, "site")
    assert git("branch", "--list", cwd=book) == ""  # the project's own clone got no branch


def test_publish_refuses_a_missing_site(book, remote, capsys, monkeypatch):
    for page in sorted((book / "_build" / "html").rglob("*"), reverse=True):
        page.rmdir() if page.is_dir() else page.unlink()
    monkeypatch.chdir(book)
    assert cli.main(["publish", "--remote", str(remote)]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no built site" in err and "forgetting build" in err
    assert git("branch", "--list", cwd=remote) == ""


def test_publish_refuses_a_stale_site(book, remote, capsys, monkeypatch):
    notebook = book / "_executed" / "site" / "chapter.ipynb"
    later = time.time() + 60
    os.utime(notebook, (later, later))
    monkeypatch.chdir(book)
    assert cli.main(["publish", "--remote", str(remote)]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "older than _executed/" in err and "chapter" in err


@pytest.mark.parametrize("state", ["no", "an older"])
def test_publish_refuses_a_site_without_a_fresh_pdf(book, remote, capsys, monkeypatch, state):
    pdf = book / "_build" / "html" / publish.PDF_NAME
    if state == "no":
        pdf.unlink()
    else:
        os.utime(pdf, (time.time(), time.time()))  # the pages were built after it
    monkeypatch.chdir(book)
    assert cli.main(["publish", "--remote", str(remote)]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"has {state} {publish.PDF_NAME}" in err and "forgetting pdf" in err
    assert git("branch", "--list", cwd=remote) == ""
    assert publish.check_site(book, with_pdf=False) == book / "_build" / "html"


def test_unreachable_remote_fails_in_one_line(book, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(book)
    assert cli.main(["publish", "--remote", str(tmp_path / "no-such-repo.git")]) == cli.EXIT_FAILED
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("forgetting: error: git ls-remote failed")


def test_cli_reports_what_it_did(book, remote, capsys, monkeypatch):
    monkeypatch.chdir(book)
    assert cli.main(["publish", "--remote", str(remote)]) == 0
    assert "published" in capsys.readouterr().out
    assert cli.main(["publish", "--remote", str(remote)]) == 0
    assert "nothing pushed" in capsys.readouterr().out


# --- the GitHub Actions workflow ----------------------------------------------------------------

WORKFLOW = Path(__file__).resolve().parents[1] / ".github" / "workflows" / "book.yml"


def test_workflow_builds_with_the_readme_command_and_deploys_the_site():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "push" in triggers and "workflow_dispatch" in triggers
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    assert build["runs-on"].startswith("ubuntu") and "3.11" in build["container"]
    runs = "\n".join(step.get("run", "") for step in build["steps"])
    assert "python3 make.py book" in runs
    assert "apt-get install" in runs and "chromium chromium-driver" in runs
    readme = (WORKFLOW.parents[2] / "README.md").read_text(encoding="utf-8")
    assert "python3 make.py book" in readme
    uploads = [s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@")]
    assert [s["with"]["path"] for s in uploads] == ["_build/html"]
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
