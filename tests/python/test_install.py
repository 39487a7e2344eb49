"""`cmake --install` puts the module where /usr/bin/python3 imports it (with
the default prefix), and the README's example runs."""
import os
import pathlib
import re
import subprocess
import sys
import sysconfig

import pytest

from conftest import ROOT


def installed_dir():
    prefix, rel = os.environ.get("NODEFLOW_TEST_PREFIX"), os.environ.get("NODEFLOW_PYTHON_DIR")
    if not prefix or not rel:
        pytest.skip("NODEFLOW_TEST_PREFIX and NODEFLOW_PYTHON_DIR are set by ctest")
    return pathlib.Path(prefix), rel


def test_default_prefix_is_on_this_pythons_path():
    _, rel = installed_dir()
    target = os.path.join("/usr/local", rel)
    assert os.path.normpath(target) == os.path.normpath(sysconfig.get_path("platlib"))
    assert target in sys.path or os.path.normpath(target) in map(os.path.normpath, sys.path)


def test_installed_module_imports_from_its_prefix():
    prefix, rel = installed_dir()
    modules = list((prefix / rel).glob("nodeflow.*.so"))
    assert len(modules) == 1, f"{prefix / rel}: {modules}"
    env = dict(os.environ, PYTHONPATH=str(prefix / rel))
    r = subprocess.run([sys.executable, "-c", "import nodeflow; print(nodeflow.__file__)"],
                       env=env, capture_output=True, text=True, cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(modules[0])


def test_readme_example_runs():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("\n## Python\n"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"\[\d \d \d \d\] \d+\.\d+\n", r.stdout), r.stdout
