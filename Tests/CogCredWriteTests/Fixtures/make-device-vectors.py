#!/usr/bin/env python3
"""Writes device-vectors.json: remembered-device inputs and what pycognito
computes for them (locked in requirements/test.txt: run it with the project
venv's python3), so cog-cred's device SRP is checked against an independent
implementation. Deterministic: seeded.

Each vector is one device as ConfirmDevice registers it (pycognito's
generate_hash_device, its random password and salt drawn from the seed) and
one DEVICE_PASSWORD_VERIFIER answer (pycognito's process_device_challenge,
its private value and clock fixed).

    python3 Tests/CogCredWriteTests/Fixtures/make-device-vectors.py
"""
import base64
import datetime
import json
import random
import types
from pathlib import Path

import pycognito.aws_srp as aws_srp
from pycognito.aws_srp import AWSSRP, long_to_hex

rng = random.Random(20261124)


def random_bytes(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


# generate_hash_device draws its password from os.urandom and its salt from
# get_random: both from the seed here.
aws_srp.os = types.SimpleNamespace(urandom=random_bytes)
aws_srp.get_random = lambda n: int.from_bytes(random_bytes(n), "big")

vectors = []
for i in range(24):
    region = rng.choice(["us-east-1", "eu-west-2", "ap-southeast-2"])
    device_key = f"{region}_{'%08x' % rng.getrandbits(32)}-{'%04x' % rng.getrandbits(16)}-4{'%03x' % rng.getrandbits(12)}-8{'%03x' % rng.getrandbits(12)}-{'%012x' % rng.getrandbits(48)}"
    group_key = "-" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(9))
    password, config = aws_srp.generate_hash_device(group_key, device_key)
    salt_hex = base64.standard_b64decode(config["Salt"]).hex()

    srp = AWSSRP(username="alice", password="unused", pool_id=f"{region}_Pool", client_id="c", client=object(),
                 device_key=device_key, device_group_key=group_key, device_password=password)
    srp.small_a_value = int.from_bytes(random_bytes(128), "big") % srp.big_n
    srp.large_a_value = srp.calculate_a()
    server_b = pow(2, int.from_bytes(random_bytes(64), "big"), srp.big_n)
    secret_block = base64.standard_b64encode(random_bytes(rng.choice([32, 256]))).decode()
    moment = datetime.datetime(2026, 11, rng.randint(1, 30), rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))
    aws_srp.datetime = types.SimpleNamespace(datetime=types.SimpleNamespace(utcnow=lambda: moment))
    answer = srp.process_device_challenge({"USERNAME": "alice", "SALT": salt_hex, "SRP_B": long_to_hex(server_b),
                                           "SECRET_BLOCK": secret_block})
    vectors.append({
        "device_key": device_key, "group_key": group_key, "password": password, "salt_hex": salt_hex,
        "password_verifier": config["PasswordVerifier"], "salt": config["Salt"],
        "private_a": long_to_hex(srp.small_a_value), "srp_b": long_to_hex(server_b), "secret_block": secret_block,
        "timestamp": answer["TIMESTAMP"], "signature": answer["PASSWORD_CLAIM_SIGNATURE"],
    })

Path(__file__).with_name("device-vectors.json").write_text(json.dumps(vectors, indent=1) + "\n")
print(f"wrote {len(vectors)} vectors")
