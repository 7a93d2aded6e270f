"""The release installs: ``python -m build`` makes an sdist and, from it, a wheel that carries every module, the
data files (the width certificates of ``margintheory/data/``, the result schema) and ``py.typed``; the wheel,
installed into a fresh virtual environment, runs outside the source tree.

What the test proves, and how it stays within the suite's time budget:

* the build runs with ``--no-isolation`` on the test environment's own setuptools and ``build`` (both in the ``test``
  extra): no package index is needed while testing; the wheel is built from the sdist, so both are checked;
* the virtual environment is new (``python -m venv --without-pip``) and the wheel is installed into it with
  ``pip --python VENV install --no-deps`` (the console script ``margintheory`` gets the new interpreter).  Its
  third-party dependencies are not reinstalled (a full install costs about 70 s): a ``.pth`` file appends the test
  environment's site-packages *after* the new environment's own.  ``margintheory`` is a regular package, so every
  one of its modules and data files is looked up in the new environment's copy only -- a file missing from the wheel
  is missing there, never found in the test environment -- and the test asserts that ``margintheory.__file__``, its
  ``importlib.metadata`` version and ``py.typed`` all come from the new environment;
* the commands run in an empty temporary directory with no ``PYTHONPATH``: ``verify --p 7 --k 3`` (with a certificate
  file, and ``--json`` validated against the shipped schema), ``check`` on that certificate, and
  ``solve --min-width --p 13 --k 5``, whose proved width lower bound reads the shipped ``k = 5`` Delsarte
  certificate.

Needs ``build`` and ``setuptools >= 77`` (the ``test`` extra); skipped without ``build``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("build", reason="the test extra's build package is not installed: pip install '.[test]'")

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "margintheory"
#: besides the modules, what the wheel must carry
DATA = ("margintheory/py.typed", "margintheory/presentation/result.schema.json",
        "margintheory/data/width_delsarte_k5.json", "margintheory/data/width_certificate_k3.json")


def package_files() -> set[str]:
    """Every file of the source package (``margintheory/...``), compiled files left out."""
    return {f.relative_to(ROOT).as_posix() for f in PACKAGE.rglob("*")
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc"}


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def build_release(out: Path) -> tuple[Path, Path]:
    proc = _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)], ROOT,
                {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (sdist,), (wheel,) = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    return sdist, wheel


def fresh_venv(where: Path, wheel: Path) -> Path:
    """A new virtual environment with the wheel installed (no dependencies); the test environment's site-packages
    appended to its path for the dependencies (module docstring).  Returns its ``bin`` directory."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    python = where / "bin" / "python"
    proc = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                 "--no-cache-dir", "--disable-pip-version-check", str(wheel)], where, dict(os.environ))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], where,
                     dict(os.environ)).stdout.strip())
    deps = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site / "zz_test_environment_dependencies.pth").write_text("\n".join(deps) + "\n", encoding="utf-8")
    return where / "bin"


def test_the_wheel_carries_the_package_and_runs_outside_the_source_tree(tmp_path):
    sdist, wheel = build_release(tmp_path / "dist")
    expected = package_files()
    assert set(DATA) <= expected  # the source tree has them (py.typed included)
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    assert expected <= in_wheel, sorted(expected - in_wheel)[:20]
    with tarfile.open(sdist) as tar:
        in_sdist = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    assert expected | {"pyproject.toml", "README.md", "LICENSE"} <= in_sdist, sorted(expected - in_sdist)[:20]

    bin_dir = fresh_venv(tmp_path / "venv", wheel)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", COLUMNS="100")
    cli = str(bin_dir / "margintheory")

    verify = _run([cli, "verify", "--p", "7", "--k", "3", "--certificate", "c73.json", "--json"], work, env)
    assert verify.returncode == 0, verify.stderr[-3000:]
    doc = json.loads(verify.stdout)
    assert doc["verdict"] == "verified" and doc["certificate"]["upper_exactness"] == "proved"
    (work / "verify.json").write_text(verify.stdout, encoding="utf-8")

    check = _run([cli, "check", "c73.json", "--p", "7", "--k", "3"], work, env)
    assert check.returncode == 0 and "valid" in check.stdout, check.stdout[-2000:] + check.stderr[-2000:]

    solve = _run([cli, "solve", "--min-width", "--p", "13", "--k", "5", "--json"], work, env)
    assert solve.returncode == 0, solve.stderr[-3000:]
    details = json.loads(solve.stdout)["details"]
    assert (details["lower_bound_width"], details["width_lower_bound_exactness"]) == (96 * 6, "proved")

    probe = ("import importlib.metadata as md, json, pathlib, sys, margintheory\n"
             "root = pathlib.Path(margintheory.__file__).parent\n"
             "margintheory.validate_result(json.loads(pathlib.Path('verify.json').read_text()))\n"
             "print(json.dumps({'file': str(root), 'version': md.version('margintheory'), "
             "'py_typed': (root / 'py.typed').is_file(), 'prefix': sys.prefix}))\n")
    where = _run([str(bin_dir / "python"), "-c", probe], work, env)
    assert where.returncode == 0, where.stderr[-3000:]
    info = json.loads(where.stdout)
    venv = (tmp_path / "venv").resolve()
    assert Path(info["file"]).resolve().is_relative_to(venv) and Path(info["prefix"]).resolve() == venv, info
    assert info["version"] == doc["version"] and info["py_typed"], info
