"""What the key holds: a credential, and the rest of a GetAssertion that
GetNextAssertion continues."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from fido2.cose import ES256
from fido2.webauthn import AttestedCredentialData

from .constants import AAGUID, CREDENTIAL_ID_LENGTH


@dataclass(eq=False)
class Credential:
    """One credential the key holds. Resident (discoverable) ones are found by
    rp_id alone; the others only through an allowList, as if their ID
    wrapped the key (they are kept here so tests can inspect them too)."""

    rp_id: str
    credential_id: bytes
    user_id: bytes
    user_name: str | None
    display_name: str | None
    private_key: ec.EllipticCurvePrivateKey = field(repr=False)
    resident: bool = True
    sign_count: int = 0

    @property
    def public_key(self) -> ES256:
        """The COSE (ES256) public key, able to verify(message, signature)."""
        return ES256.from_cryptography_key(self.private_key.public_key())

    @property
    def credential_data(self) -> AttestedCredentialData:
        """What a relying party stores (for fido2.server.Fido2Server)."""
        return AttestedCredentialData.create(AAGUID, self.credential_id, self.public_key)

    def sign(self, message: bytes) -> bytes:
        return self.private_key.sign(message, ec.ECDSA(hashes.SHA256()))

    @classmethod
    def new(cls, rp_id, user_id, user_name=None, display_name=None, resident=True):
        return cls(rp_id=rp_id, credential_id=os.urandom(CREDENTIAL_ID_LENGTH), user_id=bytes(user_id),
                   user_name=user_name, display_name=display_name,
                   private_key=ec.generate_private_key(ec.SECP256R1()), resident=resident)


@dataclass
class NextAssertions:
    """What GetNextAssertion continues: the rest of one GetAssertion's credentials."""

    session: object
    rp_id: str
    client_data_hash: bytes
    flags: int
    remaining: list
    deadline: float
