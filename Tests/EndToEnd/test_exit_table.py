"""README.md's exit-status table, each row produced by a real case: the
table is parsed (its codes, not its wording), every code it lists has a case
here that exits with it, and a code added to the table without a case fails."""
import os
import re

import pytest

from conftest import REPO
from support import claims, configure_on_double, run

USER, PASSWORD = "exit@example.com", "Exit-Table-Password-1"
RP = "auth.cog-cred.test"


def readme_exit_codes():
    """{code: meaning} from the table under README.md's "## Exit status"."""
    text = (REPO / "README.md").read_text()
    section = text.split("\n## Exit status\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\|\s*(\d+)\s*\|\s*(.+?)\s*\|\s*$", line)
        if match:
            assert int(match[1]) not in rows, f"exit status {match[1]} is in the table twice"
            rows[int(match[1])] = match[2]
    return rows


# --- a case for each code: each returns the finished process ---------------------------------------

def moto_profile(request, *options):
    """The default profile on moto for the pool's user, not signed in."""
    cog, pool = request.getfixturevalue("cog"), request.getfixturevalue("pool")
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username, *options)
    cog.remember_secret(pool.password)
    return cog, pool


def signed_in(request):
    request.getfixturevalue("signed_in")
    return request.getfixturevalue("cog")


def success(request):
    cog = signed_in(request)
    result = cog.run("token")
    assert claims(result.stdout.strip())["token_use"] == "access"
    return result


def any_other_failure(request):
    """Every failure of the docker helper is 1, its message on stdout (docker's protocol)."""
    cog = request.getfixturevalue("cog")
    result = cog.run("docker-credential", "-p", "nosuch", "get", input="registry.example.com\n")
    assert "profile 'nosuch' is not configured" in result.stdout, result
    return result


def usage_error(request):
    result = request.getfixturevalue("cog").run("token", "--bogus")
    assert "unknown option '--bogus'" in result.stderr
    return result


def malformed_input(request):
    cog, _ = moto_profile(request)
    result = cog.run("sign-in", "--password-stdin", input="\n")
    assert "the password is empty" in result.stderr, result.stderr
    return result


def no_secret_service(request):
    cog = signed_in(request)
    result = cog.run("token", env={"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/cog-cred-test/bus"})
    assert "Secret Service" in result.stderr and result.stdout == "", result.stderr
    return result


def output_not_written(request):
    cog = signed_in(request)
    with open("/dev/full", "w") as full:
        result = run(cog.binary, ["token"], cog.env, stdout=full)
    assert result.stderr.strip(), "74 without a word on stderr"
    return result


def temporary_failure(request):
    # Nothing listens on the discard port: the connection is refused.
    cog = request.getfixturevalue("cog")
    configure_on_double(cog, "http://127.0.0.1:9/", "--username", USER)
    cog.remember_secret(PASSWORD)
    result = cog.run("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert "cannot reach Cognito at http://127.0.0.1:9/" in result.stderr, result.stderr
    return result


def protocol_broken(request):
    """A passkey challenge for another relying party than the profile's: refused before any key is asked."""
    cog, double = request.getfixturevalue("cog"), request.getfixturevalue("double")
    double.configure(allowed_first_auth_factors=["PASSWORD", "WEB_AUTHN"], webauthn_rp_id=RP)
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER, "--auth-flow", "choice", "--passkey-rp-id", RP)
    cog.ok("sign-in", "--method", "password", "--password-stdin", input=PASSWORD + "\n")
    double.configure(webauthn_rp_id="evil.example")
    result = cog.run("passkey", "add", "--authenticator", "/nonexistent/cog-cred-test-key")
    assert "evil.example" in result.stderr and RP in result.stderr, result.stderr
    return result


def not_signed_in(request):
    cog, _ = moto_profile(request)
    result = cog.run("token")
    assert result.stdout == "" and "sign-in" in result.stderr, result.stderr
    return result


def profile_missing(request):
    result = request.getfixturevalue("cog").run("-p", "nosuch", "token")
    assert "profile 'nosuch' is not configured" in result.stderr
    return result


def exec_not_executable(request):
    cog, tmp_path = signed_in(request), request.getfixturevalue("tmp_path")
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    os.chmod(script, 0o644)
    result = cog.run("exec", "--", str(script))
    assert f"cannot run {script}" in result.stderr and result.stdout == ""
    return result


def exec_not_found(request):
    cog = signed_in(request)
    result = cog.run("exec", "--", "no-such-command-cog-cred-test")
    assert "cannot run no-such-command-cog-cred-test" in result.stderr and result.stdout == ""
    return result


CASES = {
    0: success,
    1: any_other_failure,
    64: usage_error,
    65: malformed_input,
    69: no_secret_service,
    74: output_not_written,
    75: temporary_failure,
    76: protocol_broken,
    77: not_signed_in,
    78: profile_missing,
    126: exec_not_executable,
    127: exec_not_found,
}


def test_every_code_in_the_readme_has_a_case_and_every_case_a_code():
    codes = readme_exit_codes()
    assert {0, 64, 78} <= set(codes), codes  # the table was found and read
    assert set(codes) == set(CASES), (f"in the README without a case here: {sorted(set(codes) - set(CASES))}; "
                                      f"a case here for a code the README lacks: {sorted(set(CASES) - set(codes))}")


@pytest.mark.parametrize("code", sorted(set(readme_exit_codes()) | set(CASES)))
def test_the_readme_code_is_what_its_case_exits_with(request, code):
    assert code in CASES, f"README.md's exit status {code} has no case in this file"
    assert code in readme_exit_codes(), f"exit status {code} is not in README.md's table"
    result = CASES[code](request)
    assert result.returncode == code, (code, result.returncode, result.stdout, result.stderr)
