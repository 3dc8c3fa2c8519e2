#!/usr/bin/env python3
"""Writes srp-vectors.json: Cognito SRP inputs and the outputs pycognito
computes for them, so the Swift implementation is checked against an
independent one (pycognito, locked in requirements/test.txt: run it with
the project venv's python3). Deterministic: seeded.

SALT and SRP_B are read as amazon-cognito-identity-js reads them: as
numbers (`new BigInteger(text, 16)`), so leading zeros drop and a leading
"-" makes them negative, then hashed as the two's-complement bytes of the
number (Java's BigInteger.toByteArray, the SDK's padHex). pycognito pads the
salt's raw text instead, which differs for salts like "007f..." and breaks
on negative numbers; so it is given numbers, and its pad_hex is taught the
negative case with Python's own two's-complement encoding (int.to_bytes).

    python3 Tests/CogCredWriteTests/Fixtures/make-srp-vectors.py
"""
import base64
import hashlib
import hmac
import json
import random
from pathlib import Path

import pycognito.aws_srp as aws_srp
from pycognito.aws_srp import AWSSRP, long_to_hex

pycognito_pad_hex = aws_srp.pad_hex


def pad_hex(value):
    """The SDK's padHex: Java's toByteArray in hex."""
    if isinstance(value, int) and value < 0:
        return value.to_bytes((~value).bit_length() // 8 + 1, "big", signed=True).hex()
    return pycognito_pad_hex(value)


aws_srp.pad_hex = pad_hex

rng = random.Random(20261121)


def hexbytes(n, leading_zero=False):
    data = bytearray(rng.getrandbits(8) for _ in range(n))
    if leading_zero:
        data[0] = 0
    return data.hex()


# After the 40 random sets: salts and B values in the shapes Cognito has
# been seen to send, or that read differently as text and as numbers.
SPECIAL = [
    ("00" + "7f" + "ab" * 15, None), ("00" + "0c" + "de" * 15, None), ("000" + "5" + "12" * 15, None),
    ("0085" + "34" * 14, None), ("-" + "5a" * 16, None), ("-" + "00" + "ec" * 15, None), ("-80", None),
    ("-" + "ff" * 16, None), ("-7" + "1" * 31, None), (None, "00"), (None, "000"), (None, "-"),
]

vectors = []
for i in range(40 + len(SPECIAL)):
    pool_id = "us-east-1_" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(9))
    srp = AWSSRP(username="unused", password="unused", pool_id=pool_id, client_id="c", client=object())
    # Cover both shapes of padded hex: odd-length numbers and a set top bit.
    small_a = int(hexbytes(128), 16) % srp.big_n
    srp.small_a_value = small_a
    srp.large_a_value = srp.calculate_a()
    salt = hexbytes(16, leading_zero=(i % 5 == 0))
    server_b = pow(2, int(hexbytes(64), 16), srp.big_n)
    srp_b = long_to_hex(server_b)
    if i >= 40:
        special_salt, b_prefix = SPECIAL[i - 40]
        salt = special_salt or salt
        if b_prefix == "-":
            server_b = -server_b
            srp_b = "-" + long_to_hex(-server_b)
        elif b_prefix:
            srp_b = b_prefix + srp_b
    user_id = rng.choice(["alice", "a1b2c3d4-0000-4000-8000-0123456789ab", "bob@example.com", "Ünïcode"])
    password = rng.choice(["Correct-Horse-9", "pässwörd ✓", "x", "a" * 200])
    secret_block = base64.standard_b64encode(bytes(rng.getrandbits(8) for _ in range(rng.choice([32, 64, 1024])))).decode()
    timestamp = rng.choice(["Sun Nov 2 04:03:01 UTC 2026", "Sat Nov 21 21:05:09 UTC 2026", "Wed Jan 1 00:00:00 UTC 2031"])

    hkdf = srp.get_password_authentication_key(user_id, password, server_b, int(salt, 16))
    message = (bytearray(pool_id.split("_")[1], "utf-8") + bytearray(user_id, "utf-8")
               + bytearray(base64.standard_b64decode(secret_block)) + bytearray(timestamp, "utf-8"))
    signature = base64.standard_b64encode(hmac.new(hkdf, message, digestmod=hashlib.sha256).digest()).decode()
    vectors.append({
        "pool_id": pool_id, "private_a": long_to_hex(small_a), "public_a": long_to_hex(srp.large_a_value),
        "salt": salt, "srp_b": srp_b, "user_id": user_id, "password": password,
        "secret_block": secret_block, "timestamp": timestamp, "signature": signature,
    })

Path(__file__).with_name("srp-vectors.json").write_text(json.dumps(vectors, indent=1, ensure_ascii=False) + "\n")
print(f"wrote {len(vectors)} vectors")
