"""Ask before destroying (#63): on a terminal, `configure` re-pointing a
signed-in profile, `configure --delete` and `sign-out --global` say what will
be lost and ask, default no; `n` (or Enter) changes nothing and exits 1, `y`
acts, `--yes` acts without asking, and without a terminal nothing is asked
(scripts work as before). `devices forget` and `passkey remove` are tried
the same way in test_devices.py and test_passkeys.py. Against the Cognito
test double, on a pseudo-terminal."""
import json

import pytest

from support import answered, signed_in_on_double, stored

USER, PASSWORD = "quinn@example.com", "Question-Password-1"
HOWS = ["n", "y", "--yes", "no terminal"]


@pytest.fixture
def signed_in(cog, bus, double):
    signed_in_on_double(cog, double.url, double, USER, PASSWORD)
    assert stored(bus, "refresh")
    return double


def config(cog):
    return cog.config_file.read_bytes()


@pytest.mark.parametrize("how", HOWS)
def test_configure_re_pointing_a_signed_in_profile_asks(cog, bus, signed_in, how):
    before, refresh = config(cog), stored(bus, "refresh")
    status, said = answered(cog, ["configure", "--client-id", "anotherclient1234"], how)
    if how == "n":
        assert status == 1 and "answered no: nothing was changed" in said
        assert f"Profile 'default' is signed in as {USER}" in said and "deletes its tokens" in said
        assert config(cog) == before and stored(bus, "refresh") == refresh
        return
    assert status == 0, said
    assert ("[y/N]" in said) == (how == "y")
    assert json.loads(config(cog))["profiles"]["default"]["client-id"] == "anotherclient1234"
    assert stored(bus, "refresh") is None and "sign in again" in said


def test_a_change_that_keeps_the_session_asks_nothing(cog, bus, signed_in):
    """Only a change that ends the session is asked about: a timeout is not."""
    status, said = answered(cog, ["configure", "--request-timeout", "9"], "--yes")
    assert status == 0 and "[y/N]" not in said
    assert stored(bus, "refresh")


@pytest.mark.parametrize("how", HOWS)
def test_configure_delete_asks(cog, bus, signed_in, how):
    before = config(cog)
    status, said = answered(cog, ["configure", "--delete"], how)
    if how == "n":
        assert status == 1 and "Delete profile 'default'" in said and "answered no: nothing was changed" in said
        assert config(cog) == before and stored(bus, "refresh")
        return
    assert status == 0, said
    assert ("[y/N]" in said) == (how == "y")
    assert "default" not in json.loads(config(cog))["profiles"] and stored(bus, "refresh") is None


@pytest.mark.parametrize("how", HOWS)
def test_sign_out_global_asks(cog, bus, signed_in, how):
    status, said = answered(cog, ["sign-out", "--global"], how)
    if how == "n":
        assert status == 1 and "every session of profile 'default's user ends" in said
        assert stored(bus, "refresh") and signed_in.calls("GlobalSignOut") == 0
        return
    assert status == 0, said
    assert ("[y/N]" in said) == (how == "y")
    assert stored(bus, "refresh") is None and signed_in.calls("GlobalSignOut") == 1


def test_ctrl_d_at_the_question_changes_nothing(cog, bus, signed_in):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(cog.binary, ["sign-out", "--global"], env=cog.env, encoding="utf-8", timeout=30)
    child.expect(r"\[y/N\] ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1 and "cancelled at the prompt" in child.before
    assert stored(bus, "refresh") and signed_in.calls("GlobalSignOut") == 0


def test_sign_out_takes_yes_with_every_scope(cog, bus, signed_in):
    """--yes is accepted wherever sign-out is, though only --global asks."""
    assert cog.run("sign-out", "--local", "--yes").returncode == 0
    assert stored(bus, "refresh") is None
