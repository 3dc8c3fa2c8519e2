"""The project's Cognito test double: a small, honest stand-in for the Amazon
Cognito user pool JSON API, with an identity pool and STS beside it.

README.md (beside this file) says what it does, its admin API under
/_double/, and which module holds what. Run it with
`python3 Tests/EndToEnd/cognito_double --host 127.0.0.1 --port 0`, or in a
test: `server, base_url = start_double(); ...; server.shutdown()`.
"""
from .constants import DEFAULT_CONFIG, IDENTITY_TARGET_PREFIX, MOTO_500_BODY, TARGET_PREFIX
from .crypto import SRP_K, SRP_N, pad_hex, parse_cognito_timestamp, secret_hash, srp_session_key, srp_verifier
from .double import CognitoDouble
from .server import DoubleServer, Handler, main, make_server, start_double
from .wire import java_double

__all__ = ["CognitoDouble", "DEFAULT_CONFIG", "DoubleServer", "Handler", "IDENTITY_TARGET_PREFIX", "MOTO_500_BODY",
           "SRP_K", "SRP_N", "TARGET_PREFIX", "java_double", "main", "make_server", "pad_hex",
           "parse_cognito_timestamp", "secret_hash", "srp_session_key", "srp_verifier", "start_double"]
