"""CITATION.cff is valid (``cffconvert --validate``) and agrees with the package and the how-to-cite page.

cffconvert 2.0.0 pins ``jsonschema<4``, which would downgrade the jsonschema that Jupyter Book and
nbformat use, so it is not installed into the project's environment: these tests run it from its
own virtual environment, ``.cache/cffconvert/`` (git-ignored), created from PyPI on first use.
``CFFCONVERT=/path/to/cffconvert`` uses an existing executable instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CITATION = ROOT / "CITATION.cff"
CITE_PAGE = ROOT / "book" / "cite.md"
BIBFILE = ROOT / "book" / "references.bib"
CFFCONVERT_REQUIREMENT = "cffconvert==2.0.0"
TOOL_VENV = ROOT / ".cache" / "cffconvert"


def _unavailable(reason: str) -> None:
    """Fail in CI (a missing validator must not pass silently), skip on a developer's machine."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def _venv_executable(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


@pytest.fixture(scope="module")
def cffconvert() -> str:
    """Path of a working ``cffconvert`` executable (installed into ``.cache/cffconvert`` if needed)."""
    if os.environ.get("CFFCONVERT"):
        return os.environ["CFFCONVERT"]
    executable = _venv_executable(TOOL_VENV, "cffconvert")
    if not executable.exists():
        shutil.rmtree(TOOL_VENV, ignore_errors=True)
        try:
            subprocess.run(
                [sys.executable, "-m", "venv", str(TOOL_VENV)], check=True, capture_output=True, timeout=300
            )
            subprocess.run(
                [
                    str(_venv_executable(TOOL_VENV, "python")),
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    CFFCONVERT_REQUIREMENT,
                ],
                check=True,
                capture_output=True,
                timeout=600,
            )
        except (subprocess.SubprocessError, OSError) as error:
            shutil.rmtree(TOOL_VENV, ignore_errors=True)
            detail = getattr(error, "stderr", b"") or b""
            _unavailable(
                f"could not install {CFFCONVERT_REQUIREMENT} into {TOOL_VENV}: {error} "
                f"{detail.decode(errors='replace')[-500:]}"
            )
    return str(executable)


def _validate(cffconvert: str, path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [cffconvert, "--validate", "-i", str(path)], capture_output=True, text=True, timeout=120
    )


def _citation() -> dict:
    return yaml.safe_load(CITATION.read_text(encoding="utf-8"))


@pytest.mark.slow  # an external validator, in its own venv
def test_citation_cff_is_valid(cffconvert):
    result = _validate(cffconvert, CITATION)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "valid" in result.stdout


@pytest.mark.slow  # an external validator, in its own venv
@pytest.mark.parametrize("breakage", ["unknown key", "no title", "bad version", "bad doi"])
def test_validator_rejects_a_broken_citation_file(cffconvert, tmp_path, breakage):
    """The check above means something: the same validator rejects broken copies of the file."""
    data = _citation()
    if breakage == "unknown key":
        data["bogus"] = 1
    elif breakage == "no title":
        del data["title"]
    elif breakage == "bad version":
        data["cff-version"] = "1.1.9"
    else:
        data["references"][-1]["doi"] = "https://doi.org/not-a-doi"
    broken = tmp_path / "CITATION.cff"
    broken.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    assert _validate(cffconvert, broken).returncode != 0


@pytest.mark.slow  # an external validator, in its own venv
def test_the_bibtex_export_has_the_year(cffconvert):
    """``cffconvert -f bibtex`` takes the year from ``date-released``: without it there is none.

    cffconvert 2.0.0 writes no version into BibTeX; the page's entry carries it (checked below)."""
    result = subprocess.run(
        [cffconvert, "-i", str(CITATION), "-f", "bibtex"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    released = _citation()["date-released"]
    assert re.search(rf"year\s*=\s*{{?{released.year}}}?", result.stdout), result.stdout
    page = _bibtex_blocks(CITE_PAGE.read_text(encoding="utf-8"))
    assert f"year    = {{{released.year}}}" in page  # the page's entry agrees with the file


def test_citation_matches_the_package():
    data = _citation()
    assert data["cff-version"] == "1.2.0"
    assert str(data["version"]) == metadata.version("forgetting")
    meta = metadata.metadata("forgetting")
    assert data["license"] == "MIT" == (meta["License-Expression"] or meta["License"])
    assert data["type"] == "software"
    assert [a.get("name") for a in data["authors"]] == ["The forgetting developers"]


def test_citation_references_the_two_original_works():
    references = _citation()["references"]
    urls = {ref.get("url") or ref.get("repository-code") for ref in references}
    dois = {ref.get("doi") for ref in references}
    assert "10.48550/arXiv.2604.12007" in dois  # Memory Worth (When to Forget)
    assert "https://github.com/Emmimal/memory-decay-engine" in urls  # decay engine code
    assert any("towardsdatascience.com" in (url or "") for url in urls)  # decay engine article


def _bibtex_blocks(markdown: str) -> str:
    return "\n".join(re.findall(r"```bibtex\n(.*?)```", markdown, flags=re.S))


def test_cite_page_agrees_with_references_bib_and_citation_cff():
    from pybtex.database import parse_string

    page = parse_string(_bibtex_blocks(CITE_PAGE.read_text(encoding="utf-8")), "bibtex")
    bib = parse_string(BIBFILE.read_text(encoding="utf-8"), "bibtex")
    shown = set(page.entries)
    assert {"decayarticle2026", "decaycode2026", "simsek2026"} <= shown
    for key in shown & set(bib.entries):  # the page shows the bib entries verbatim
        assert dict(page.entries[key].fields) == dict(bib.entries[key].fields), key
        assert str(page.entries[key].persons) == str(bib.entries[key].persons), key
    (package_key,) = shown - set(bib.entries)
    package = page.entries[package_key]
    assert package.type == "software"
    assert package.fields["version"] == str(_citation()["version"])
    assert package.fields["license"] == _citation()["license"]


def test_zenodo_metadata_agree_with_citation_cff():
    import json

    zenodo = json.loads((ROOT / ".zenodo.json").read_text(encoding="utf-8"))
    data = _citation()
    assert zenodo["upload_type"] == "software"
    assert zenodo["title"] == data["title"]
    assert zenodo["version"] == str(data["version"])
    assert zenodo["publication_date"] == str(data["date-released"])
    assert zenodo["license"] == data["license"]
    assert zenodo["keywords"] == data["keywords"]
    assert zenodo["description"] == data["abstract"].strip()
    assert [c["name"] for c in zenodo["creators"]] == [a["name"] for a in data["authors"]]
    related = {r["identifier"] for r in zenodo["related_identifiers"]}
    assert "https://doi.org/10.48550/arXiv.2604.12007" in related  # Memory Worth
    assert "https://github.com/Emmimal/memory-decay-engine" in related  # the decay engine's code


def test_the_license_file_is_the_mit_license_the_metadata_name():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert f"Copyright (c) {_citation()['date-released'].year} The forgetting developers" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_the_cite_page_gives_apa_with_the_version_and_links_citation_cff():
    page = CITE_PAGE.read_text(encoding="utf-8")
    data = _citation()
    assert f"> The forgetting developers. ({data['date-released'].year})." in page
    assert f"(Version {data['version']}) [Computer software]." in page
    assert "{download}`CITATION.cff <CITATION.cff>`" in page  # copied into the site


def test_the_changelog_has_a_section_for_the_current_version():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    data = _citation()
    assert f"\n## {data['version']} ({data['date-released']})\n" in changelog
