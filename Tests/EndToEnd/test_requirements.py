"""The Python lock files (requirements/, written by scripts/lock) and how
they are installed: every top-level requirement locked, the layers agreeing
on every version they share, every file hashed, the environment these tests
run in being the lock's, no script installing anything from outside a
lock, and what `scripts/sandbox --double` runs needing nothing outside the
demo's lock (and the sandbox naming the install when it is missing)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REQUIREMENTS = REPO / "requirements"
LAYERS = ["demo", "test", "bench"]  # each adds to the one before (its .in starts with -r)
LOCK_CHECK = REPO / "scripts" / "lock-check"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def top_level(layer):
    """The names a .in file asks for, with those of the files it includes."""
    names = set()
    for line in (REQUIREMENTS / f"{layer}.in").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            names |= top_level(Path(line[3:].strip()).stem)
        elif line:
            names.add(canonical(NAME.match(line).group()))
    return names


def locked(layer):
    """{name: (version, hashes)} of a lock file."""
    entries = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", (REQUIREMENTS / f"{layer}.txt").read_text()):
        pin = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", block)
        if pin:
            entries[canonical(pin[1])] = (pin[2], re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return entries


@pytest.mark.parametrize("layer", LAYERS + ["tools"])
def test_every_top_level_requirement_is_locked_with_hashes(layer):
    lock = locked(layer)
    assert lock, f"requirements/{layer}.txt pins nothing"
    assert top_level(layer) <= set(lock), f"not in requirements/{layer}.txt: {top_level(layer) - set(lock)}"
    unhashed = [name for name, (_, hashes) in lock.items() if not hashes]
    assert not unhashed, f"requirements/{layer}.txt: no --hash for {unhashed}"


@pytest.mark.parametrize("lower, upper", list(zip(LAYERS, LAYERS[1:])))
def test_each_layer_keeps_the_versions_of_the_one_below(lower, upper):
    below, above = locked(lower), locked(upper)
    assert set(below) <= set(above), f"{upper}.txt lacks {set(below) - set(above)} of {lower}.txt"
    differing = {name: (below[name][0], above[name][0]) for name in below if below[name][0] != above[name][0]}
    assert not differing, f"{lower}.txt and {upper}.txt disagree: {differing}"


def run_lock_check(lock):
    return subprocess.run([sys.executable, str(LOCK_CHECK), str(lock)], capture_output=True, text=True)


def test_this_environment_is_the_locks():
    # scripts/install-deps made it from test.txt (bench/run's from bench.txt,
    # a superset): a package at another version would mean it was not.
    result = run_lock_check(REQUIREMENTS / "test.txt")
    assert (result.returncode, result.stdout) == (0, ""), result.stdout + result.stderr


def test_lock_check_names_what_is_missing_or_at_another_version(tmp_path):
    pytest_version = subprocess.run([sys.executable, "-c", "import pytest; print(pytest.__version__)"],
                                    capture_output=True, text=True, check=True).stdout.strip()
    lock = tmp_path / "lock.txt"
    lock.write_text(f"PyTest=={pytest_version} \\\n    --hash=sha256:{'0' * 64}\n")
    assert (run_lock_check(lock).returncode, run_lock_check(lock).stdout) == (0, "")
    lock.write_text(f"pytest==0.0.1\nno-such-package-of-cog-cred==1.0\npytest=={pytest_version}\n")
    result = run_lock_check(lock)
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["pytest==0.0.1", "no-such-package-of-cog-cred==1.0"]


def test_lock_check_refuses_a_file_that_pins_nothing(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\nflask>=3\n")
    result = run_lock_check(empty)
    assert result.returncode == 2 and "pins nothing" in result.stderr
    assert run_lock_check(tmp_path / "absent.txt").returncode == 2


def test_no_script_installs_a_python_package_from_outside_a_lock():
    scripts = [p for d in ("scripts", "bench", "packaging", ".ci") for p in (REPO / d).iterdir() if p.is_file()]
    installs = [(p.relative_to(REPO), line.strip()) for p in scripts
                for line in re.sub(r"\\\n\s*", " ", p.read_text(errors="replace")).splitlines()
                if re.search(r"pip[0-9.]* install", line) and not line.lstrip().startswith(("#", "echo"))]
    assert len(installs) >= 2, f"found {installs}: install-deps and lock each install from a lock"
    for path, line in installs:
        assert "--require-hashes" in line and " -r " in line, f"{path} installs from outside a lock: {line}"


# What `scripts/sandbox --double` runs (the double) and what docs/passkeys.md
# runs beside it there (the virtual key): the demo's lock must hold every
# package they import, as scripts/demo installs only that lock.
SANDBOX_PROGRAMS = ["cognito_double", "soft_authenticator"]


def third_party_imports(package):
    """The top-level names of the modules a package of Tests/EndToEnd imports
    that are neither the standard library's nor the project's own."""
    import ast

    here = Path(__file__).resolve().parent
    own = {p.stem for p in here.glob("*.py")} | {p.name for p in here.iterdir() if p.is_dir()}
    names = set()
    for source in (here / package).rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split(".")[0])
    return {name for name in names if name not in sys.stdlib_module_names and name not in own}


@pytest.mark.parametrize("package", SANDBOX_PROGRAMS)
def test_the_sandbox_programs_need_nothing_outside_the_demo_lock(package):
    from importlib.metadata import packages_distributions

    modules = third_party_imports(package)
    assert {"cryptography", "fido2"} <= modules, f"the scan of {package} missed what it is known to import: {modules}"
    distributions = packages_distributions()
    demo = locked("demo")
    outside = {m: distributions.get(m) for m in modules
               if not any(canonical(d) in demo for d in distributions.get(m, []))}
    assert not outside, f"{package} imports what requirements/demo.txt does not lock: {outside}; add it to demo.in"


def test_the_sandbox_names_the_install_of_a_missing_module_before_starting_anything(tmp_path):
    # A Python with nothing installed, as the project's venv before
    # install-deps (or made from an older demo lock).
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "COG_CRED"}
    env.update(COG_CRED_VENV=str(venv), TMPDIR=str(scratch))
    for flags, module in (["--double"], "cryptography"), ([], "moto"):
        result = subprocess.run([str(REPO / "scripts" / "sandbox"), *flags, "true"], env=env, capture_output=True,
                                text=True, timeout=60)
        assert result.returncode == 69, result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
        assert f"the Python module {module}," in result.stderr, result.stderr
        assert result.stderr.rstrip().endswith("install it with: scripts/install-deps --demo"), result.stderr
        assert not list(scratch.iterdir()), "the sandbox started something"
