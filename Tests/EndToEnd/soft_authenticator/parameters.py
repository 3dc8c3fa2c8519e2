"""A CTAP2 request's parameters read with CTAP's own errors: a missing one is
MISSING_PARAMETER, one of the wrong CBOR type CBOR_UNEXPECTED_TYPE."""
from fido2.ctap import CtapError

from .constants import ERR


def param(params, key, kind, required=False):
    """params[key] when it is a `kind`, CTAP's errors otherwise."""
    if key not in params:
        if required:
            raise CtapError(ERR.MISSING_PARAMETER)
        return None
    value = params[key]
    # bool is an int to Python, not to CBOR.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise CtapError(ERR.CBOR_UNEXPECTED_TYPE)
    return value


def options_in(params, key):
    options = param(params, key, dict) or {}
    for name, value in options.items():
        if not isinstance(name, str) or not isinstance(value, bool):
            raise CtapError(ERR.CBOR_UNEXPECTED_TYPE)
    return options


def descriptor_ids(descriptors):
    """The IDs of the public-key credential descriptors in a list."""
    ids = []
    for descriptor in descriptors:
        if not isinstance(descriptor, dict) or not isinstance(descriptor.get("id"), bytes):
            raise CtapError(ERR.CBOR_UNEXPECTED_TYPE)
        if descriptor.get("type") == "public-key":
            ids.append(descriptor["id"])
    return ids
