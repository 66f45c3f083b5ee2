"""environment.yml and pyproject.toml declare the same dependencies with the same pins."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def normalise(requirement: str) -> tuple[str, str]:
    name, spec = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(.*)", requirement).groups()
    return name.lower().replace("_", "-"), spec.replace(" ", "")


def test_environment_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = dict(normalise(r) for r in project["dependencies"] + project["optional-dependencies"]["test"])
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    listed = {}
    for entry in environment:
        for requirement in entry["pip"] if isinstance(entry, dict) else [entry]:
            if requirement.startswith("-e") or requirement.split(">")[0].split("=")[0] in ("python", "pip"):
                continue
            name, spec = normalise(requirement)
            listed[name] = spec
    assert listed == declared
