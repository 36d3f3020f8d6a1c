"""Shared fixtures: the repository's examples and the CLI binary the package is checked against."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[4]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="session")
def cli():
    """Runs the `fabricsim` binary (FABRICSIM_BIN, else target/debug/fabricsim) and returns stdout."""
    exe = pathlib.Path(os.environ.get("FABRICSIM_BIN", ROOT / "target" / "debug" / "fabricsim"))
    if not exe.is_file():
        pytest.fail(f"{exe}: no fabricsim binary; run `cargo build -p fabricsim-cli` first")

    def run(*args, out=None):
        argv = [str(exe), *map(str, args)]
        if out is not None:
            argv += ["--out", str(out)]
        subprocess.run(argv, check=True, stdout=None if out else subprocess.PIPE, stderr=subprocess.DEVNULL)
        return pathlib.Path(out).read_bytes() if out else None

    return run
