"""The repository's commit-msg hook (.githooks/commit-msg): subjects of at most 72 characters, a blank line
before the body. The rules are checked on the hook's own function; one good and one bad message go through the
script as git runs it."""

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

HOOK = Path(__file__).resolve().parent.parent / ".githooks" / "commit-msg"


def _hook():
    loader = importlib.machinery.SourceFileLoader("commit_msg_hook", str(HOOK))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


GOOD = {
    "subject only": "Catalog: every YAML key must be text\n",
    "subject and body": "Catalog: every YAML key must be text\n\nWhy: a key 1.5 read as a float.\n",
    "72 characters": "x" * 72 + "\n\nbody\n",
    "git's comments": "Subject\n\n# Please enter the commit message.\n# " + "y" * 100 + "\n",
    "comment first": "# a comment first\nSubject\n\nbody\n",
    "verbose diff": "Subject\n\n# ------------------------ >8 ------------------------\n" + "+" * 90 + "\n",
}
BAD = {
    "73 characters": ("x" * 73 + "\n", "subject is 73 characters"),
    "no blank line": ("Subject line\nbody straight after the subject\n", "no blank line"),
    "200 characters": ("a" * 200 + "\nbody\n", "subject is 200 characters"),
}


@pytest.mark.parametrize("name", GOOD)
def test_good_messages_pass(name):
    assert _hook().problems(GOOD[name]) == []


@pytest.mark.parametrize("name", BAD)
def test_bad_messages_are_refused(name):
    message, says = BAD[name]
    assert any(says in p for p in _hook().problems(message))


def _run(tmp_path: Path, message: str) -> subprocess.CompletedProcess:
    msg = tmp_path / "COMMIT_EDITMSG"
    msg.write_text(message, encoding="utf-8")
    return subprocess.run([str(HOOK), str(msg)], capture_output=True, text=True)


@pytest.mark.skipif(sys.platform == "win32", reason="git runs hooks through sh")
def test_the_script_as_git_runs_it(tmp_path):
    """Executable, with its shebang: exit 0 on a good message, 1 and the reason on a bad one."""
    good = _run(tmp_path, GOOD["subject and body"])
    assert (good.returncode, good.stderr) == (0, "")
    bad = _run(tmp_path, BAD["73 characters"][0])
    assert bad.returncode == 1
    assert "commit-msg: subject is 73 characters" in bad.stderr
