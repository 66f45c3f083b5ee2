"""Smoke run of every chapter through papermill, the site build, byte-for-byte reproduction of the
published results and figures, and the published files under races, interrupts and failures."""

import hashlib
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import papermill
import pytest

from conftest import ROOT, copy_book, missing_data
from forgetting import pipeline
from forgetting.pipeline.chapters import CHAPTERS, spec
from forgetting.pipeline.paths import figures_dir, results_dir, runs_dir, site_results_dir
from forgetting.pipeline.tables import TABLE_CLASS, raw_tables
from forgetting.studies import agent

pytestmark = pytest.mark.book
FORGETTING = str(Path(sys.executable).parent / "forgetting")


def snapshot(root):
    """Every published file (results and figures) by relative path."""
    files = {}
    for folder in (results_dir(root), figures_dir(root)):
        for path in sorted(folder.glob("*")) if folder.is_dir() else []:
            files[str(path.relative_to(root))] = path.read_bytes()
    return files


def test_every_chapter_runs_quick_and_never_publishes(built_book):
    root, runs = built_book
    assert [run.name for run in runs] == list(CHAPTERS)
    for run in runs:
        assert run.published is (not spec(run.name).quick)
        assert (root / "_executed" / "site" / f"{run.name}.ipynb").exists()
        assert not run.folder.exists()  # run folders are removed once shown in the site
    for published in results_dir(ROOT).iterdir():  # quick runs left these alone
        copy = results_dir(root) / published.name
        assert copy.read_bytes() == published.read_bytes(), published.name
    assert not list(runs_dir(root).iterdir())


def test_site_has_every_chapter(built_book):
    root, _ = built_book
    html = root / "_build" / "html"
    for name in CHAPTERS:
        page = (html / f"{name}.html").read_text()
        assert "Reproduce this chapter" in page
    intro = (html / "intro.html").read_text()
    assert "1.000" in intro and "0.911" in intro  # glued from the headline chapter
    from forgetting import __version__

    for page in ["intro", "cite", *CHAPTERS]:  # the version line of site_config, in every footer
        assert (
            f'<p class="forgetting-version">forgetting {__version__}, ' in (html / f"{page}.html").read_text()
        )


TABLE = re.compile(
    rf'<table class="{TABLE_CLASS}[^"]*" id="(?P<id>table-[a-z0-9-]+)">\s*'
    r'<caption><span class="caption-number">Table (?P<number>\d+) </span>(?P<caption>.*?)</caption>',
    re.S,
)


def test_every_table_is_numbered_captioned_and_links_its_csv(built_book):
    """No chapter leaves a DataFrame or a Styler as a cell's result; every table on a chapter's
    page (the "Reproduce this chapter" box's aside) is the book's: numbered in book order, with a
    caption, anchored, and linked to its CSV, which the site serves at ``results/<file>``."""
    root, _ = built_book
    html = root / "_build" / "html"
    numbers, prose_seen = [], set()
    for name in CHAPTERS:
        notebook = json.loads((root / "_executed" / "site" / f"{name}.ipynb").read_text())
        assert raw_tables(notebook) == [], f"{name}: cells {raw_tables(notebook)} show a raw table"
        page = (html / f"{name}.html").read_text()
        box = page.count("Reproduce this chapter</p>")
        tables = list(TABLE.finditer(page))
        assert len(tables) == page.count("<table") - box, name  # every other table is the book's
        for table in tables:
            numbers.append(int(table["number"]))
            if table["id"] in PROSE_TABLES.get(name, ()):  # numbered and captioned, no data behind it
                prose_seen.add(table["id"])
                assert len(re.sub("<[^>]+>", "", table["caption"])) > 40, table["caption"]
                continue
            csv = re.search(r'href="(results/[^"]+)"', table["caption"])[1]
            assert f"results/{table['id'].removeprefix('table-')}.csv" == csv and csv.startswith(
                f"results/{name}-"
            )
            assert (html / csv).read_bytes() == (root / "_executed" / "site" / csv).read_bytes()
            assert len(re.sub("<[^>]+>", "", table["caption"])) > len(" Data: ") + len(csv) + 20, table[
                "caption"
            ]
    assert prose_seen == {t for tables in PROSE_TABLES.values() for t in tables}
    assert numbers == list(range(1, len(numbers) + 1))  # numbered through the book, in its order


FIGURE = re.compile(
    r'<figure class="[^"]*" id="(?P<id>fig-[^"]+)">\s*<img alt="(?P<alt>[^"]*)"(?P<rest>.*?)</figure>', re.S
)


def test_every_figure_has_alt_text_and_links_to_its_files_at_stable_addresses(built_book):
    """Each chapter shows every figure it saves, once; each has alt text (not its file name) and
    links to its PNG, PDF and SVG at ``figures/<chapter>-<name>.<ext>``, which the site serves."""
    root, _ = built_book
    html = root / "_build" / "html"
    for name in CHAPTERS:
        page = (html / f"{name}.html").read_text()
        figures = list(FIGURE.finditer(page))
        assert len(figures) == page.count("<figure"), name
        linked = []
        for figure in figures:
            assert len(figure["alt"]) > 20 and not figure["alt"].endswith(".png"), (name, figure["alt"])
            stems = set(re.findall(r'href="figures/([a-z0-9-]+)\.(?:png|pdf|svg)"', figure["rest"]))
            assert len(stems) == 1, (name, figure["id"], stems)
            stem = stems.pop()
            for ext in ("png", "pdf", "svg"):
                assert f'href="figures/{stem}.{ext}"' in figure["rest"], (name, stem, ext)
                assert (html / "figures" / f"{stem}.{ext}").is_file(), (name, stem, ext)
            linked.append(stem)
        saved = sorted({p.stem for p in (root / "_executed" / "site" / "figures").glob(f"{name}-*.png")})
        assert sorted(linked) == saved, name


#: Tables written in a chapter's prose (definitions, not results): numbered and captioned as the
#: results are, with no CSV behind them.
PROSE_TABLES = {
    "mw-theory": ("table-mw-theory-assumptions",),
    "beyond-credit": ("table-beyond-credit-assumptions",),
}


@pytest.mark.parametrize("name", list(CHAPTERS))
def test_chapters_reproduce_published_results_and_figures_byte_for_byte(full_runs, name):
    if reason := missing_data(name):
        pytest.skip(reason)
    root, run, _ = full_runs["plain"][name]
    if isinstance(run, BaseException):
        raise run
    assert run.published
    assert pipeline.compare(root, run) == []
    manifest = json.loads((results_dir(ROOT) / f"{name}-figures.json").read_text())
    assert sorted(manifest) == [f.name for f in run.figures]  # the manifest names every figure


def test_figures_are_byte_identical_between_runs(built_book):
    root, _ = built_book
    first, second = (pipeline.run_chapter(root, "decay-retention") for _ in range(2))
    try:
        assert {f.suffix for f in first.figures} == {".png", ".pdf", ".svg"}
        assert [f.read_bytes() for f in first.figures] == [f.read_bytes() for f in second.figures]
    finally:
        first.discard()
        second.discard()


def test_failed_run_leaves_published_results_untouched(tmp_path):
    root = copy_book(tmp_path)
    published = snapshot(root)
    # plain papermill only warns about an unknown parameter; the chapter itself refuses it
    with pytest.raises(papermill.PapermillExecutionError, match="unknown parameter"):
        papermill.execute_notebook(
            str(root / "book" / "decay-headline.ipynb"),
            str(tmp_path / "out.ipynb"),
            parameters={"n_seed": 3},
            kernel_name="python3",
            cwd=str(root / "book"),
            progress_bar=False,
        )
    with pytest.raises(papermill.PapermillExecutionError, match="n_seeds=1"):
        papermill.execute_notebook(
            str(root / "book" / "decay-headline.ipynb"),
            str(tmp_path / "o.ipynb"),
            parameters={"n_seeds": 1},
            kernel_name="python3",
            cwd=str(root / "book"),
            progress_bar=False,
        )
    assert snapshot(root) == published


def test_a_failing_notebook_is_one_line_and_publishes_nothing(tmp_path):
    root = copy_book(tmp_path)
    published = snapshot(root)
    source = root / "book" / "decay-retention.ipynb"
    notebook = nbformat.read(source, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("raise RuntimeError('a chapter that breaks')"))
    nbformat.write(notebook, source)
    for command in (["verify", "decay-retention", "--update"], ["run", "decay-retention"]):
        done = subprocess.run([FORGETTING, *command], cwd=root, capture_output=True, text=True)
        assert done.returncode == 1, done
        assert "Traceback" not in done.stderr + done.stdout, done
        assert "RuntimeError: a chapter that breaks" in done.stderr + done.stdout, done
    done = subprocess.run([FORGETTING, "run", "decay-retention"], cwd=root, capture_output=True, text=True)
    assert done.stderr.count("\n") == 1, done.stderr  # the whole error, as the reader sees it
    changed = sorted({name for name, _ in snapshot(root).items() ^ published.items()})
    assert not changed, changed  # published files added, removed or rewritten
    assert not list(runs_dir(root).iterdir()), list(runs_dir(root).iterdir())


def test_custom_runs_write_only_where_the_user_says(tmp_path):
    root = copy_book(tmp_path)
    published = snapshot(root)
    out = tmp_path / "mine"
    done = subprocess.run(
        [FORGETTING, "run", "decay-retention", "-p", "max_turns", "0150", "-o", str(out)],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads((out / "results" / "decay-retention.json").read_text())
    assert record["parameters"]["max_turns"] == 150 and record["published_parameters"] is True
    assert "identical to the published files" in done.stdout
    assert snapshot(root) == published and not (root / "_executed" / "site").exists()


def test_a_run_with_your_own_conversation_file_writes_only_where_the_user_says(tmp_path):
    """use-agent over a file of the reader's: a relative path is read from the current folder, the
    run is not at published parameters, and a file out of LoCoMo's layout is refused before any
    kernel, in one line naming the sample and the field."""
    root = copy_book(tmp_path / "book")
    published = snapshot(root)
    document = json.loads((root / agent.EXAMPLE_FILE).read_text())
    conversation = document[0]["conversation"]
    for key in ("session_3", "session_3_date_time"):
        del conversation[key]
    document[0]["qa"] = []
    mine = root / "mine" / "mine.json"  # read from the current folder, mine/, not from the root
    mine.parent.mkdir()
    mine.write_text(json.dumps(document))
    out = tmp_path / "out"
    done = subprocess.run(
        [FORGETTING, "run", "use-agent", "-p", "conversation", "mine.json", "-o", str(out)],
        cwd=mine.parent,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads((out / "results" / "use-agent.json").read_text())
    assert record["published_parameters"] is False and "published parameters" not in done.stdout
    assert record["parameters"]["conversation"] == str(mine)
    turns = len(conversation["session_1"]) + len(conversation["session_2"])
    assert record["values"]["n_file_turns"] == turns == record["values"]["held_keep_all"]
    assert record["values"]["n_questions"] == 0
    conversation["session_2"][0]["speaker"] = "Nobody"
    mine.write_text(json.dumps(document))
    done = subprocess.run(
        [FORGETTING, "run", "use-agent", "-p", "conversation", str(mine)],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "session_2[0]" in done.stderr and "'Nobody'" in done.stderr, done.stderr
    assert snapshot(root) == published and not (root / "_executed" / "site").exists()


def site_files(root):
    """The site's figures and, per executed chapter, its glued values (the rest of an executed
    notebook differs between any two runs: run folders, object addresses, random table ids)."""
    site = root / "_executed" / "site"
    files = {f.name: f.read_bytes() for f in sorted((site / "figures").glob("*"))}
    for path in sorted(site.glob("*.ipynb")):
        outputs = [o for cell in nbformat.read(path, as_version=4).cells for o in cell.get("outputs", [])]
        files[path.name] = [
            {k: v for k, v in o.get("data", {}).items() if k.startswith("application/papermill.record")}
            for o in outputs
        ]
    return files


def test_a_parallel_build_gives_the_files_of_a_sequential_one(tmp_path):
    names = ["decay-retention", "decay-trace", "decay-headline"]
    (tmp_path / "one").mkdir(), (tmp_path / "two").mkdir()
    sequential, parallel = copy_book(tmp_path / "one"), copy_book(tmp_path / "two")
    for root in (sequential, parallel):  # publish from scratch, so every file is written anew
        for name in names:
            for path in pipeline.published_files(results_dir(root), name):
                path.unlink()
    lines = []
    one = pipeline.run_all(sequential, names, publish=True, echo=lambda s: None)
    two = pipeline.run_all(parallel, names, publish=True, echo=lines.append, jobs=2)
    assert [r.name for r in one] == [r.name for r in two] == names
    assert snapshot(sequential) == snapshot(parallel)
    results = {k: v for k, v in snapshot(parallel).items() if k.startswith("data/")}
    assert results == {k: v for k, v in snapshot(ROOT).items() if k.startswith("data/")}  # as committed
    assert site_files(sequential) == site_files(parallel)
    assert lines[0] == "running 3 chapters, 2 at a time ..." and len(lines) == 4
    assert all(line.startswith(f"[{i}/3] ") for i, line in enumerate(lines[1:], 1))
    assert not list(runs_dir(parallel).iterdir())


def test_a_failing_chapter_fails_a_parallel_build_in_one_line(tmp_path):
    root = copy_book(tmp_path)
    published = snapshot(root)
    source = root / "book" / "decay-retention.ipynb"
    notebook = nbformat.read(source, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("raise RuntimeError('a chapter that breaks')"))
    nbformat.write(notebook, source)
    with pytest.raises(pipeline.ChapterFailed, match="RuntimeError: a chapter that breaks"):
        pipeline.run_all(root, ["decay-retention", "decay-trace"], publish=True, echo=lambda s: None, jobs=2)
    results = {k: v for k, v in snapshot(root).items() if k.startswith("data/")}
    assert results == published  # decay-trace, if it finished, published the files it had
    assert not list(runs_dir(root).iterdir())


def test_workers_give_the_published_files_and_a_cluster_the_in_process_ones(
    tmp_path, local_cluster, built_book
):
    """``--workers 2`` at published parameters reproduces the published files byte for byte; a
    Dask LocalCluster gives the files of an in-process run (quick, for time: the session's quick
    build ran each chapter in its kernel, and its site shows those files)."""
    root = copy_book(tmp_path)
    done = subprocess.run(
        [FORGETTING, "run", "decay-headline", "--workers", "2"], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "identical to the published files" in done.stdout
    shown = site_results_dir(built_book[0])
    for name in ("beyond-governance", "mw-exp1"):
        run = pipeline.run_chapter(root, name, quick=True, executor=local_cluster)
        try:
            distributed = {f.name: f.read_bytes() for f in run.results}
            local = {f.name: f.read_bytes() for f in [*shown.glob(f"{name}.*"), *shown.glob(f"{name}-*")]}
            assert local == distributed and local, name
        finally:
            run.discard()


def test_ctrl_c_stops_a_parallel_build_and_leaves_no_run_folder(tmp_path):
    root = copy_book(tmp_path)
    published = snapshot(root)
    process, folder = start_and_wait_for_kernel(root, "build", "--jobs", "2")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, (out, err)
    assert "Traceback" not in err and err.strip().splitlines()[-1] == (
        "forgetting: error: interrupted; no chapter was left half-published and no run folder was left behind"
    )
    assert not list(runs_dir(root).iterdir()) and snapshot(root) == published
    for _ in range(100):  # kernels poll their parent and exit when it is gone
        if not kernels_of(runs_dir(root)):
            break
        time.sleep(0.1)
    assert kernels_of(runs_dir(root)) == [] and not folder.exists()


def kernels_of(folder):
    """Processes whose environment names ``folder`` as their run folder (chapter kernels)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if (
                proc.name.isdigit()
                and f"FORGETTING_RUN_DIR={folder}".encode() in (proc / "environ").read_bytes()
            ):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def start_and_wait_for_kernel(root, *command):
    process = subprocess.Popen(
        [FORGETTING, *command], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    for _ in range(600):
        folders = list(runs_dir(root).glob("*")) if runs_dir(root).is_dir() else []
        if folders and kernels_of(folders[0]):
            return process, folders[0]
        time.sleep(0.05)
    process.kill()
    process.communicate()
    pytest.fail("no kernel started")


def test_ctrl_c_stops_the_kernel_cleans_up_and_publishes_nothing(tmp_path):
    root = copy_book(tmp_path)
    published = snapshot(root)
    process, folder = start_and_wait_for_kernel(root, "verify", "--update", "decay-sweeps")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, (out, err)
    assert "Traceback" not in err and err.strip().splitlines() == [
        "forgetting: error: interrupted; no chapter was left half-published and no run folder was left behind"
    ]
    assert not folder.exists() and snapshot(root) == published
    time.sleep(1)
    assert kernels_of(folder) == []


def test_killing_the_parent_leaves_no_kernel_running(tmp_path):
    root = copy_book(tmp_path)
    published = snapshot(root)
    process, folder = start_and_wait_for_kernel(root, "run", "decay-sweeps")
    process.kill()
    process.communicate()
    for _ in range(100):  # the kernel polls its parent and exits when it is gone
        if not kernels_of(folder):
            break
        time.sleep(0.1)
    assert kernels_of(folder) == []
    assert snapshot(root) == published
    pipeline.remove_orphans(root)  # the next run clears the dead run's folder
    assert not folder.exists()


def test_races_between_publishing_and_custom_runs_keep_the_published_set(tmp_path):
    """verify --update, a custom run and a publishing build of one chapter, started together
    three times: the published files always equal a run at published parameters."""
    root = copy_book(tmp_path)
    expected = snapshot(root)
    (root / "data" / "results" / "decay-headline-summary.csv").write_text("corrupted\n")
    build = (
        "from pathlib import Path; from forgetting import pipeline; "
        "pipeline.run_all(Path('.'), ['decay-headline'], publish=True, echo=lambda s: None)"
    )
    for _ in range(3):
        commands = [
            [FORGETTING, "verify", "--update", "decay-headline"],
            [FORGETTING, "run", "decay-headline", "-p", "n_seeds", "2"],
            [sys.executable, "-c", build],
        ]
        processes = [
            subprocess.Popen(c, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for c in commands
        ]
        outputs = [process.communicate(timeout=300)[0] for process in processes]  # all, then assert
        assert [p.returncode for p in processes] == [0, 0, 0], outputs
        after = snapshot(root)
        headline = {k: v for k, v in after.items() if "decay-headline" in k}
        assert {k: v for k, v in expected.items() if "decay-headline" in k and k.startswith("data")} == {
            k: v for k, v in headline.items() if k.startswith("data")
        }
        manifest = json.loads(after["data/results/decay-headline-figures.json"])
        figures = {k.split("/")[-1]: v for k, v in headline.items() if k.startswith("figures")}
        assert {k: hashlib.sha256(v).hexdigest() for k, v in figures.items()} == manifest
    assert not list(runs_dir(root).iterdir())
