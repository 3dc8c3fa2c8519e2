"""A software FIDO2 authenticator (a virtual security key) for the end-to-end tests.

cog-cred speaks to security keys through libfido2; the tests give it this key
instead of a USB one, through libfido2's own hook for custom transports
(fido_dev_set_io_functions) and a device path `unix:/path/to/socket`.

The wire, which the product depends on:

- a UNIX stream socket, in a private directory (0700), the socket itself 0600;
- every message, both ways, is exactly one 64-byte CTAPHID report, with no
  report-ID byte (libfido2 hands its write function 65 bytes, report ID 0
  first: the product drops that byte; its read function gets 64);
- one connection is one device session (libfido2 connects once per
  fido_dev_open); a client that goes away mid-operation just ends its
  session. Several may be open at once, as several handles on one USB key:
  each gets its channel, and the key does one CTAP2 operation at a time (a
  request that cannot wait for the one under way, two seconds, is
  answered CTAPHID_ERROR CHANNEL_BUSY, as a real key does at once).

On it, CTAPHID (CTAP 2.0, section 8.1: INIT, CBOR, PING, CANCEL, WINK,
KEEPALIVE, ERROR, continuation packets) and the CTAP 2.0 commands a login
needs: GetInfo, MakeCredential, GetAssertion, GetNextAssertion, ClientPIN
(PIN protocol 1: getRetries, getKeyAgreement, setPIN, changePIN,
getPINToken) and Reset. It says it is a FIDO_2_0 key and nothing newer, so
libfido2 1.12 takes the CTAP 2.0 paths: a PIN becomes a pinToken
(ClientPIN subcommand 5) and a pinAuth, never a token with permissions; a
"uv" option is sent only when the caller asks for UV with no PIN.

Behaviour that tests choose (see SoftAuthenticator):

- presence: "auto" (touched at once), "deny" (OPERATION_DENIED), "never"
  (KEEPALIVE "touch needed" every 100 ms until CANCEL, answered
  KEEPALIVE_CANCEL, or the client leaves), "wait" (until `touch()`), or a
  threading.Event (until it is set). `waiting_for_touch` is set while a
  request waits, so a test can watch the product's "Touch your security key"
  without sleeping.
- a PIN (CTAP 2.0 rules: 8 retries, 3 wrong in one power cycle block the PIN
  until `power_cycle()`, 0 retries block it for good; MakeCredential needs
  the PIN once one is set, GetAssertion without it just leaves UV off);
- built-in user verification (the "uv" option), off unless asked for.

Everything is built from python-fido2's pieces (its CBOR, COSE keys,
authenticator data, Info, PIN protocol 1) and `cryptography`'s keys.

To try cog-cred with a virtual key by hand:

    python3 Tests/EndToEnd/soft_authenticator --socket /tmp/my-key/key.sock [--pin 1234] [--presence enter]

(or `python3 -m soft_authenticator ...` from Tests/EndToEnd) and give
cog-cred the device `unix:/tmp/my-key/key.sock`. The socket's directory is
made private if it does not exist, and refused if it exists readable by
others. It prints the device path and the name of each command it gets;
never the PIN, keys or credentials. With `--presence enter`, each Enter on
its terminal is one touch. Ctrl-C stops it and removes the socket.

Which module holds what: key.py, SoftAuthenticator itself (its state, the
test's side, the socket served, each request sent to its command);
ctaphid.py, one connection's CTAPHID framing and the waits for a touch;
commands.py, the CTAP2 commands; client_pin.py, ClientPIN and the PIN's
rules; credential.py, what the key holds; parameters.py, a request's
parameters read with CTAP's errors; constants.py, the model and the
numbers; socket_path.py, where the socket goes; command_line.py, the key
run on its own.
"""
from .command_line import main
from .constants import AAGUID
from .credential import Credential
from .key import SoftAuthenticator

__all__ = ["AAGUID", "Credential", "SoftAuthenticator", "main"]
