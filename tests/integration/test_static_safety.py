"""No code path that turns bytes into code: no pickle, marshal or unsafe YAML, no eval.

Read statically over every module of the package, so a new one is covered
the day it is added. POST runs only what was registered: a kind name is
looked up, never imported or evaluated (tests/http/test_post_jobs.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["core", "adapters", "entrypoints", "migrations"]
FORBIDDEN_MODULES = {
    "pickle",
    "cPickle",
    "_pickle",
    "marshal",
    "shelve",
    "dill",
    "cloudpickle",
    "jsonpickle",
}
SAFE_YAML_CALLS = {"safe_load", "safe_load_all", "safe_dump", "dump"}
FORBIDDEN_BUILTINS = {"eval", "exec", "compile", "__import__"}
IMPORTERS_ALLOWED = {"entrypoints/wiring.py"}  # --kinds: modules the operator names at start


def modules() -> list[Path]:
    found = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    assert len(found) > 30, "the package was not found where this test looks"
    return found


def violations(source: str, relative: str) -> list[str]:
    tree = ast.parse(source, filename=relative)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [(node.module or "").split(".")[0]]
        else:
            names = []
        problems += [
            f"{relative}:{node.lineno} imports {name}"
            for name in names
            if name in FORBIDDEN_MODULES
        ]
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_BUILTINS:
                problems.append(f"{relative}:{node.lineno} calls {func.id}")
            if isinstance(func, ast.Attribute):
                owner = func.value.id if isinstance(func.value, ast.Name) else ""
                if owner == "yaml" and func.attr not in SAFE_YAML_CALLS:
                    problems.append(f"{relative}:{node.lineno} calls yaml.{func.attr}")
                if func.attr == "import_module" and relative not in IMPORTERS_ALLOWED:
                    problems.append(f"{relative}:{node.lineno} imports a module by name")
    return problems


def test_no_module_deserializes_code_or_evaluates_text():
    problems = [
        problem
        for path in modules()
        for problem in violations(path.read_text(), path.relative_to(ROOT).as_posix())
    ]
    assert problems == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import pickle", "imports pickle"),
        ("from marshal import loads", "imports marshal"),
        ("import yaml\nyaml.load(text)", "calls yaml.load"),
        ("import yaml\nyaml.unsafe_load(text)", "calls yaml.unsafe_load"),
        ("eval(text)", "calls eval"),
        ("importlib.import_module(name)", "imports a module by name"),
    ],
)
def test_the_scan_catches_what_it_forbids(source, expected):
    assert any(expected in problem for problem in violations(source, "core/probe.py"))
