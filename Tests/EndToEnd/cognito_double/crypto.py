"""Cognito's SRP-6a variant (the server side) and TOTP, with SECRET_HASH."""
import base64
import binascii
import datetime
import functools
import hashlib
import hmac
import re
import secrets
import time


# --- Cognito's SRP-6a variant ---------------------------------------------------------
# The server side of what amazon-cognito-identity-js and pycognito's aws_srp.py
# compute. Every hash is over the bytes of pad_hex() strings, so the padding
# rules below are part of the protocol, not a detail.
# The 3072-bit MODP group of RFC 3526 (RFC 5054's 3072-bit group), g = 2.
SRP_N_HEX = (
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
    "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
    "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
    "15728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7"
    "ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200C"
    "BBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF"
)
SRP_N = int(SRP_N_HEX, 16)
SRP_G = 2
SRP_INFO = b"Caldera Derived Key"  # the HKDF info string Cognito uses
SRP_TIMESTAMP_SKEW = 300           # seconds a TIMESTAMP may be away from now
SECRET_BLOCK_BYTES = 256           # real SECRET_BLOCKs are long opaque blobs; clients must not care
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# "Mon Nov 2 04:03:01 UTC 2026": the day of month unpadded, everything else
# fixed-width. Real Cognito refuses "Nov 02" (see pycognito's history).
TIMESTAMP_PATTERN = re.compile(r"(%s) (%s) ([1-9]|[12][0-9]|3[01]) ([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9]) "
                               r"UTC ([0-9]{4})" % ("|".join(WEEKDAYS), "|".join(MONTHS)))


def secret_hash(client_secret: str, username: str, client_id: str) -> str:
    """What a client with a secret must send: Base64(HMAC-SHA256(secret, username + client id))."""
    digest = hmac.new(client_secret.encode(), (username + client_id).encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


# --- SRP -------------------------------------------------------------------------------

def pad_hex(value: int) -> str:
    """A number as Cognito and its SDKs hash it: the two's-complement bytes
    of Java's BigInteger.toByteArray (amazon-cognito-identity-js's padHex):
    whole bytes, a leading 00 when a positive number's top bit is set."""
    if value < 0:
        return value.to_bytes((~value).bit_length() // 8 + 1, "big", signed=True).hex()
    text = format(value, "x")
    if len(text) % 2:
        return "0" + text
    if text[0] in "89abcdef":
        return "00" + text
    return text


def hex_hash(hex_text: str) -> str:
    return hashlib.sha256(bytes.fromhex(hex_text)).hexdigest()


# k = H(pad(N) | pad(g)): pycognito's hex_hash("00" + N_HEX + "0" + G_HEX).
SRP_K = int(hex_hash(pad_hex(SRP_N) + pad_hex(SRP_G)), 16)


def new_srp_salt(fixed=None) -> str:
    # A random number in hex without leading zeros, as Cognito usually sends
    # SALT: the client pads it itself, and sometimes that means adding "00"
    # or "0". `fixed` (the srp_salt setting) is a shape Cognito has also
    # sent: leading zeros, or a leading "-" (a negative number).
    return fixed or format(secrets.randbits(128) or 1, "x")


@functools.lru_cache(maxsize=256)
def srp_verifier(pool_name: str, username: str, password: str, salt_hex: str) -> int:
    """v = g^x mod N, x = H(pad(salt) | H(pool name | username | ":" | password)).
    Cached: the 3072-bit exponentiation is the slow part and the inputs repeat."""
    inner = hashlib.sha256(f"{pool_name}{username}:{password}".encode()).hexdigest()
    # SALT is a number, whatever its text looks like (see new_srp_salt).
    x = int(hex_hash(pad_hex(int(salt_hex, 16)) + inner), 16)
    return pow(SRP_G, x, SRP_N)


def srp_scrambler(a_pub: int, b_pub: int) -> int:
    """u = H(pad(A) | pad(B))."""
    return int(hex_hash(pad_hex(a_pub) + pad_hex(b_pub)), 16)


def srp_session_key(a_pub: int, b_pub: int, b_priv: int, verifier: int) -> bytes:
    """The 16-byte key both sides derive: S = (A * v^u)^b mod N, then one
    HKDF-SHA256 block with pad(S) as key material and pad(u) as salt."""
    u = srp_scrambler(a_pub, b_pub)
    shared = pow(a_pub * pow(verifier, u, SRP_N) % SRP_N, b_priv, SRP_N)
    prk = hmac.new(bytes.fromhex(pad_hex(u)), bytes.fromhex(pad_hex(shared)), hashlib.sha256).digest()
    return hmac.new(prk, SRP_INFO + b"\x01", hashlib.sha256).digest()[:16]


def srp_signature(key: bytes, pool_name: str, user_id: str, secret_block: bytes, timestamp: str) -> bytes:
    """PASSWORD_CLAIM_SIGNATURE before base64: HMAC-SHA256 over pool name,
    USER_ID_FOR_SRP, the decoded SECRET_BLOCK and the TIMESTAMP text."""
    message = pool_name.encode() + user_id.encode() + secret_block + timestamp.encode()
    return hmac.new(key, message, hashlib.sha256).digest()


def parse_cognito_timestamp(text: str):
    """Seconds since the epoch for a TIMESTAMP in Cognito's format, or None
    when it is not in that format or names the wrong weekday for its date."""
    match = TIMESTAMP_PATTERN.fullmatch(text)
    if not match:
        return None
    weekday, month, day, hour, minute, second, year = match.groups()
    try:
        moment = datetime.datetime(int(year), MONTHS.index(month) + 1, int(day), int(hour), int(minute),
                                   int(second), tzinfo=datetime.timezone.utc)
    except ValueError:  # "Feb 30"
        return None
    if WEEKDAYS[moment.weekday()] != weekday:
        return None
    return moment.timestamp()


# --- TOTP (RFC 6238 as authenticator apps do it: SHA-1, 30 s steps, 6 digits) ---------

def new_totp_secret() -> str:
    # 20 random bytes are 32 base32 characters, the length of Cognito's SecretCode.
    return base64.b32encode(secrets.token_bytes(20)).decode("ascii")


def totp_key(secret_b32: str):
    """The key bytes of a base32 secret, or None if it is not base32."""
    try:
        key = base64.b32decode(secret_b32.upper() + "=" * (-len(secret_b32) % 8))
    except (binascii.Error, ValueError):
        return None
    return key or None


def totp_code(secret_b32: str, counter: int) -> str:
    digest = hmac.new(totp_key(secret_b32), counter.to_bytes(8, "big"), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return f"{(int.from_bytes(digest[offset:offset + 4], 'big') & 0x7FFFFFFF) % 10 ** 6:06d}"


def totp_matches(secret_b32: str, code: str, now=None) -> bool:
    """One step of clock drift either way is accepted, as Cognito does."""
    counter = int((time.time() if now is None else now) // 30)
    return any(hmac.compare_digest(totp_code(secret_b32, c).encode(), code.encode())
               for c in (counter - 1, counter, counter + 1))
