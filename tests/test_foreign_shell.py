"""The suite and a chapter run from another project's shell (issue 42): an activated virtualenv or
conda environment, a PYTHONPATH with a ``sitecustomize.py`` of its own, a PYTHONSTARTUP file, an
unwritable HOME and odd IPython and Jupyter folders. ``tests/conftest.py`` makes the session's
environment the project's (:func:`conftest.project_environment`) before any test is collected;
``make.py test`` starts pytest without the caller's Python variables."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FOREIGN_PYTHON, JUPYTER_DIRS, ROOT, project_environment, writable

#: What the IPython of a test process or kernel said when VIRTUAL_ENV named another environment.
VENV_WARNING = "Attempting to work in a virtualenv"
#: A test that glues values in this process (IPython's display formatter) and one that runs a
#: chapter in a kernel: together, they failed in the shell of issue 42.
CHAPTER_TESTS = (
    "tests/test_pipeline_chapter.py::test_glue_and_tables_publish_at_the_stated_precision",
    "tests/test_pipeline_data.py::test_a_chapter_without_its_data_builds_offline_and_publishes_nothing",
)


def _foreign_shell(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The variables of another project's shell, and the log its start-up files write to (one
    line per Python process that ran them: its pid and how it was started)."""
    log = tmp_path / "started.log"
    noisy = (
        "import os, sys\n"
        "print('noise from', __file__)\n"
        f"open({str(log)!r}, 'a').write(f'{{os.getpid()}} {{sys.argv}}\\n')\n"
    )
    other = tmp_path / "othervenv"
    site = other / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    site.mkdir(parents=True)
    path = tmp_path / "pythonpath"
    path.mkdir()
    (path / "sitecustomize.py").write_text(noisy)
    (path / "stray_module_of_another_project.py").write_text("")
    (tmp_path / "startup.py").write_text(noisy)
    home = tmp_path / "home-is-a-file"  # nothing can be written under it, by root either
    home.write_text("")
    return {
        "VIRTUAL_ENV": str(other),
        "CONDA_PREFIX": str(tmp_path / "conda" / "envs" / "other"),
        "CONDA_DEFAULT_ENV": "other",
        "PYTHONPATH": str(path),
        "PYTHONSTARTUP": str(tmp_path / "startup.py"),
        "HOME": str(home),
        "IPYTHONDIR": str(home / ".ipython"),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        "JUPYTER_DATA_DIR": "/proc/jupyter",
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_PATH": str(tmp_path / "kernels-of-another-project"),
        "MPLCONFIGDIR": str(home / "matplotlib"),
    }, log


def test_the_project_environment_replaces_what_names_another_project(tmp_path):
    foreign, _ = _foreign_shell(tmp_path)
    scratch = tmp_path / "scratch"
    env = project_environment({**foreign, "KEPT": "1", "XDG_CACHE_HOME": str(tmp_path / "new")}, scratch)
    assert env.get("VIRTUAL_ENV") == (sys.prefix if sys.prefix != sys.base_prefix else None)
    dropped = {"CONDA_PREFIX", "CONDA_DEFAULT_ENV", "JUPYTER_PATH", "MPLCONFIGDIR", *FOREIGN_PYTHON}
    assert not dropped & set(env)
    assert env["HOME"] == str(scratch / "home") and env["KEPT"] == "1"
    assert env["XDG_CACHE_HOME"] == str(tmp_path / "new")  # not there yet, but can be made
    for name in (*JUPYTER_DIRS, "HOME"):
        assert Path(env[name]).is_relative_to(scratch) and writable(env[name], create=False), name
    del foreign["HOME"]
    assert project_environment(foreign, scratch)["HOME"] == str(scratch / "home")
    own = {"CONDA_PREFIX": sys.prefix, "CONDA_DEFAULT_ENV": "this", "HOME": str(tmp_path)}
    assert project_environment(own, scratch).items() >= own.items()


def test_make_py_starts_pytest_without_the_callers_python_variables():
    spec = importlib.util.spec_from_file_location("make", ROOT / "make.py")
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    caller = {name: "x" for name in ("PATH", "HOME", *FOREIGN_PYTHON)}
    assert make.pytest_environment(caller) == {"PATH": "x", "HOME": "x", **make.TEST_THREADS}


@pytest.mark.slow  # a pytest session and a kernel
def test_the_chapter_tests_pass_from_another_projects_shell(tmp_path):
    """The tests that failed in issue 42's shell, in a pytest started there: they pass with no
    warning, and no process they start runs the shell's start-up files (only pytest's own
    interpreter ran its sitecustomize, before the session could do anything about it)."""
    foreign, log = _foreign_shell(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CHAPTER_TESTS],
        cwd=ROOT,
        env={**os.environ, **foreign},
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0 and f"{len(CHAPTER_TESTS)} passed" in output, output
    assert "warning" not in output.lower() and VENV_WARNING not in output, output
    (started,) = log.read_text().splitlines()  # one process: pytest's, with its arguments
    assert "'no:cacheprovider'" in started, started


@pytest.mark.slow  # a chapter's kernel
@pytest.mark.parametrize("home", ["writable", "unwritable"])
def test_a_chapter_run_from_another_projects_virtualenv_writes_no_warning(tmp_path, home):
    """``forgetting run`` from a shell that activated another project's virtualenv: its kernel's
    IPython (ipykernel's shell does not look at VIRTUAL_ENV) leaves nothing in the notebook or on
    the terminal, nor does the shell's PYTHONSTARTUP file, which ipykernel runs in the kernel.
    With an unwritable HOME (a file: nothing can be made under it, by root either) matplotlib said
    "Matplotlib created a temporary cache directory" in a figure cell's stderr on the page, and
    IPython "is not a writable location" on the terminal, until the kernel got folders of its run
    (``pipeline.run.kernel_homes``)."""
    foreign, log = _foreign_shell(tmp_path)
    activated = ("VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHONSTARTUP")
    shell = {name: foreign[name] for name in activated}
    if home == "unwritable":
        shell["HOME"] = foreign["HOME"]
        for name in ("MPLCONFIGDIR", "IPYTHONDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            shell[name] = ""  # unset below: each library looks under HOME
    out = tmp_path / "out"
    done = subprocess.run(
        [Path(sys.executable).parent / "forgetting", "run", "decay-retention", "--quick", "-o", out],
        cwd=ROOT,
        env={name: value for name, value in {**os.environ, **shell}.items() if value},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stderr == "", done.stdout + done.stderr
    notebook = json.loads((out / "decay-retention.ipynb").read_text())
    streams = [o for c in notebook["cells"] for o in c.get("outputs", []) if o["output_type"] == "stream"]
    assert not [o for o in streams if o["name"] == "stderr" or "noise from" in "".join(o["text"])], streams
    assert VENV_WARNING not in json.dumps(notebook)
    assert len(log.read_text().splitlines()) == 1  # the kernel ran it: nothing of it reached the page
