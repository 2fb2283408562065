"""The README's and the docs' examples, run as written, so that they cannot rot.

Every command of the README's "Use" block runs with the programs of the build folder
(``REMAT_BIN_DIR``, default ``build/src/cli``) in a scratch folder where ``tests/`` is the
repository's. Only the time is scaled down: planning verbs without ``--time-limit`` get a short
one and sweeps fewer points, which changes neither what a command does nor its exit code. Each
must exit 0 and show what its comment promises. The README's Python block and the
self-contained Python examples of docs/python.md run in a fresh interpreter.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN_DIR = Path(os.environ.get("REMAT_BIN_DIR", ROOT / "build" / "src" / "cli"))
PLANNING = {"solve", "sweep", "maxbatch", "approx-report", "train", "step"}
TIME_LIMIT_S = "3"
POINTS = "3"


def code_blocks(path: Path, language: str, section: str | None = None) -> list[str]:
    """The ```language blocks of ``path`` (of its ``## section`` only, when given)."""
    text = path.read_text()
    if section is not None:
        start = text.index(f"## {section}\n")
        end = text.find("\n## ", start + 1)
        text = text[start:end if end >= 0 else len(text)]
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def readme_commands() -> list[str]:
    lines = []
    for block in code_blocks(ROOT / "README.md", "sh", "Use"):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line:
                lines.append(line)
    return lines


def scaled(command: str) -> list[str]:
    """``command`` with the program's path and a shorter time: the same work, sooner."""
    words = shlex.split(command)
    program = words[0]
    assert program in ("remat", "remat-run"), command
    words[0] = str(BIN_DIR / program)
    verb = words[1]
    if verb in PLANNING and "--time-limit" not in words:
        words += ["--time-limit", TIME_LIMIT_S]
    if "--points" in words:
        words[words.index("--points") + 1] = POINTS
    if verb == "maxbatch" and "--total-time-limit" not in words:
        words += ["--total-time-limit", "60"]
    return words


# What each README command promises beyond exit 0: a pattern its stdout must contain.
PROMISES = {
    "remat solve --model unet": r"(?m)^\S+\s+(optimal|feasible)\s",  # a row within the budget
    "remat show plan.json": r"nodes are recomputed|nothing is recomputed",
    "remat plot schedule": r"plot written to plan\.svg",
    "remat approx-report": r"(?m)^(\d+(\.\d+)? [KMGT]iB\s.*\n){2,}",  # a row per budget
    "remat zoo list": r"resnet50",
    "remat-run train": r"gradients vs autograd: match",
}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    folder = tmp_path_factory.mktemp("readme")
    (folder / "tests").symlink_to(ROOT / "tests")
    return folder


def test_the_readme_lists_the_commands_this_test_runs():
    commands = readme_commands()
    assert len(commands) >= 10, commands
    assert all(c.split()[0] in ("remat", "remat-run") for c in commands), commands


@pytest.mark.parametrize("line", readme_commands())
def test_readme_command_works_as_written(line, scratch):
    for command in line.split(" && "):
        run = subprocess.run(scaled(command), cwd=scratch, capture_output=True, text=True,
                             timeout=600)
        assert run.returncode == 0, f"{command}: exit {run.returncode}\n{run.stderr[-2000:]}"
        for prefix, pattern in PROMISES.items():
            if command.startswith(prefix):
                assert re.search(pattern, run.stdout), f"{command}:\n{run.stdout[-3000:]}"


def python_examples() -> list[str]:
    blocks = code_blocks(ROOT / "README.md", "python")
    blocks += code_blocks(ROOT / "docs" / "python.md", "python")
    return blocks


def test_the_readme_has_a_self_contained_python_example():
    assert any("remat.torch.wrap" in b for b in code_blocks(ROOT / "README.md", "python"))


@pytest.mark.parametrize("code", python_examples(), ids=lambda code: code.splitlines()[1][:40])
def test_python_example_works_as_written(code, tmp_path):
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]


def help_text(program: str, verb: list[str]) -> str:
    run = subprocess.run([str(BIN_DIR / program), *verb, "--help"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout


def verbs(program: str, prefix: list[str]) -> list[list[str]]:
    """Every verb and nested verb that ``program --help`` lists."""
    text = help_text(program, prefix)
    if "Subcommands:" not in text:
        return []
    found = []
    for name in re.findall(r"^  (\S+)\s", text.split("Subcommands:")[1], flags=re.M):
        found.append(prefix + [name])
        found += verbs(program, prefix + [name])
    return found


@pytest.mark.parametrize("program,doc_names", [
    ("remat", ["cli.md", "evaluation.md", "onnx.md", "zoo.md"]),
    ("remat-run", ["exec.md"]),
])
def test_every_verb_and_option_of_the_help_is_documented(program, doc_names):
    docs = "".join((ROOT / "docs" / name).read_text() for name in doc_names)
    missing = []
    for verb in verbs(program, []):
        text = help_text(program, verb)
        if f"{program} {' '.join(verb)}" not in docs:
            missing.append(" ".join(verb))
        options = text.split("Options:")[1] if "Options:" in text else ""
        for short, option in set(re.findall(r"^\s+(?:(-\w),)?(--[a-z][a-z0-9-]+)", options,
                                            flags=re.M)):
            if option != "--help" and option not in docs and not (short and f"{short} " in docs):
                missing.append(f"{' '.join(verb)} {option}")
    assert not missing, f"in `{program} --help` but not in docs/{doc_names}: {missing}"
