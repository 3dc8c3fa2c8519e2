"""Encoding helpers: base64url, masked destinations, forms and query
strings, HTML pages, and JSON dates as the AWS services write them."""
import base64
import datetime
import html
import json
import re
import secrets
from urllib.parse import parse_qsl, quote, urlencode, urlsplit


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def int_b64url(n: int) -> str:
    return b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


def mask_email(email: str) -> str:
    """Cognito tells the caller where a code went without revealing the address."""
    local, _, domain = email.partition("@")
    return f"{local[:1]}***@{domain[:1]}***"


def mask_phone(number: str) -> str:
    """Like Cognito's CODE_DELIVERY_DESTINATION: only the last four digits show."""
    return "+" + "*" * max(0, len(number) - 5) + number[-4:]


def parse_form(raw: bytes):
    """(fields, names given more than once) of a form body or query; ValueError
    if it is not UTF-8. A repeated field keeps its last value."""
    pairs = parse_qsl(raw.decode("utf-8") if isinstance(raw, bytes) else raw, keep_blank_values=True)
    names = [name for name, _ in pairs]
    return dict(pairs), sorted({name for name in names if names.count(name) > 1})


def with_query(uri: str, **params) -> str:
    """`uri` with `params` (None left out) added to its query, percent-encoded
    (a space as %20), so a redirect target's own query survives."""
    query = urlencode([(k, v) for k, v in params.items() if v is not None], quote_via=quote)
    if not query:
        return uri
    return uri + ("&" if urlsplit(uri).query else "" if uri.endswith("?") else "?") + query


def space_separated(text) -> list:
    """The scopes of a scope parameter (RFC 6749 3.3), each once, in order."""
    return list(dict.fromkeys(x for x in (text or "").split(" ") if x))


def html_page(title: str, body: str) -> bytes:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title></head>\n<body>\n{body}\n</body></html>\n").encode()


def java_double(seconds) -> str:
    """Epoch seconds as real Cognito Identity and STS write them in JSON:
    Java's Double.toString, 1515115602 -> "1.515115602E9" (a JSON number).
    A float keeps milliseconds, as the user pool writes its dates:
    1547146396.734 -> "1.547146396734E9"."""
    whole, fraction = str(seconds), ""
    if isinstance(seconds, float):
        whole, _, fraction = f"{seconds:.3f}".partition(".")
        fraction = fraction.rstrip("0")
    if int(whole) < 10 ** 7:
        return f"{whole}.{fraction or '0'}"
    digits = (whole + fraction).rstrip("0")
    return f"{digits[0]}.{digits[1:] or '0'}E{len(whole) - 1}"


def epoch(seconds: int) -> str:
    """A placeholder aws_json() writes as java_double(seconds)."""
    return f"\x00epoch:{int(seconds)}\x00"


def epoch_millis(seconds: float) -> str:
    """A placeholder aws_json() writes as java_double(seconds) with milliseconds."""
    return f"\x00epoch:{seconds:.3f}\x00"


def aws_json(body) -> bytes:
    """JSON as the AWS services write it: epoch() placeholders become numbers like 1.7E9."""
    text = json.dumps(body)

    def number(match):
        value = match.group(1)
        return java_double(float(value) if "." in value else int(value))
    return re.sub(r'"\\u0000epoch:([0-9]+(?:\.[0-9]+)?)\\u0000"', number, text).encode()


def random_upper_alnum(count: int) -> str:
    return "".join(secrets.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(count))


def iso_utc(seconds: int) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
