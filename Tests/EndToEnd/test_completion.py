"""The bash completion, run as bash runs it: the script cog-cred generates
is sourced, COMP_WORDS/COMP_LINE are set as bash sets them for a line typed
up to the cursor, and the completion function's COMPREPLY is read back.
Profile names come from the config by calling cog-cred itself."""
import subprocess

import pytest

DRIVER = r'''
shopt -s extglob
source "$SCRIPT"
COMP_LINE="$1"
COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<< "$COMP_LINE"
[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_cog-cred cog-cred "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
'''


@pytest.fixture
def completion(cog, tmp_path):
    directory = tmp_path / "bin"
    directory.mkdir()
    (directory / "cog-cred").symlink_to(cog.binary)
    script = tmp_path / "cog-cred.bash"
    script.write_text(cog.ok("--generate-completion-script", "bash").stdout)
    env = {**cog.env, "PATH": f"{directory}:{cog.env['PATH']}", "SCRIPT": str(script)}

    def complete(line):
        result = subprocess.run(["bash", "-c", DRIVER, "_", line], env=env, capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        return result.stdout.split()
    return complete


@pytest.mark.parametrize("line, expected", [
    ("cog-cred tok", ["token"]),
    ("cog-cred prof", ["profiles"]),
    ("cog-cred token --format ", ["bare", "header", "json", "env"]),
    ("cog-cred token --format j", ["json"]),
    ("cog-cred sign-in --auth-flow ", ["srp", "password", "browser", "choice", "custom", "custom-srp"]),
    ("cog-cred configure --auth-flow p", ["password"]),
    ("cog-cred configure --grant c", ["client-credentials"]),
    ("cog-cred sign-in --mfa-type ", ["totp", "sms", "email"]),
    ("cog-cred sign-in --method ", ["email-otp", "sms-otp", "password", "srp", "passkey"]),
    ("cog-cred configure --method ", ["email-otp", "sms-otp", "password", "srp", "passkey"]),
    ("cog-cred mfa enable ", ["totp", "sms", "email"]),
    ("cog-cred mfa prefer e", ["email"]),
    ("cog-cred dev", ["devices"]),
    ("cog-cred devices f", ["forget"]),
    ("cog-cred passkey r", ["remove"]),
    ("cog-cred sign-in --auth", ["--auth-flow", "--authenticator"]),
    ("cog-cred sign-in --no-rem", ["--no-remember-device"]),
    ("cog-cred sign-in --device-", ["--device-name"]),
    ("cog-cred git-credential ", ["get", "store", "erase", "capability"]),
    ("cog-cred docker-credential ", ["get", "store", "erase", "list", "version"]),
])
def test_option_values_and_actions_complete(completion, line, expected):
    assert completion(line) == expected


def test_profile_names_complete_from_the_config(cog, completion):
    for name in ("work", "widgets", "home"):
        cog.ok("configure", "-p", name, "--user-pool-id", "us-east-1_Abc123", "--client-id", "1example23456789")
    assert completion("cog-cred token --profile ") == ["home", "widgets", "work"]
    assert completion("cog-cred status -p w") == ["widgets", "work"]
    assert completion("cog-cred git-credential --profile h") == ["home"]


def test_the_global_options_complete_at_the_root_and_in_a_command(cog, completion):
    for name in ("work", "widgets", "home"):
        cog.ok("configure", "-p", name, "--user-pool-id", "us-east-1_Abc123", "--client-id", "1example23456789")
    assert completion("cog-cred --profile ") == ["home", "widgets", "work"]
    assert completion("cog-cred -p w") == ["widgets", "work"]
    assert completion("cog-cred passkey --profile h") == ["home"]
    root = completion("cog-cred --")
    assert "--debug" in root and "--profile" in root
    token = completion("cog-cred token --")
    assert "--debug" in token and "--profile" in token and "--json" in token
    assert completion("cog-cred --d") == ["--debug"]
    assert "--debug" in completion("cog-cred devices list --")
