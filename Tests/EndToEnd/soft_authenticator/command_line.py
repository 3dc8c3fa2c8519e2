"""The key on its own, as a virtual security key to try cog-cred with:
`python3 Tests/EndToEnd/soft_authenticator --socket PATH [--pin PIN]`."""
import argparse
import signal
import sys

from .key import SoftAuthenticator


def main(argv=None):
    parser = argparse.ArgumentParser(description="A virtual FIDO2 security key on a UNIX socket, for trying cog-cred.")
    parser.add_argument("--socket", required=True, help="where to put the socket (its directory must be private)")
    parser.add_argument("--pin", help="a PIN already set on the key")
    parser.add_argument("--uv", action="store_true", help="the key verifies the user itself (built-in UV)")
    parser.add_argument("--presence", choices=("auto", "deny", "never", "enter"), default="auto",
                        help="touches: at once (auto), refused, never, or each Enter on this terminal")
    args = parser.parse_args(argv)
    try:
        key = SoftAuthenticator(socket_path=args.socket, pin=args.pin, builtin_uv=args.uv,
                                presence="wait" if args.presence == "enter" else args.presence)
        key.start()
    except (OSError, ValueError) as e:
        print(f"soft_authenticator: {e}", file=sys.stderr)
        return 1
    key.log = lambda line: print(line, flush=True)
    print(f"virtual security key at {key.device}" + (" (a PIN is set)" if args.pin else ""), flush=True)
    if args.presence == "enter":
        print("press Enter to touch it; Ctrl-C to stop", flush=True)
    signal.signal(signal.SIGTERM, _interrupt)  # stop as on Ctrl-C, removing the socket
    try:
        if args.presence == "enter":
            for _ in sys.stdin:
                key.touch()
        else:
            while True:
                signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        key.stop()
    return 0


def _interrupt(*_):
    raise KeyboardInterrupt
