"""A Secret Service that answers with the wrong types, for one method at a time.

Owns org.freedesktop.secrets on the bus at --address and implements just
enough of the API for a read (ReadAlias, OpenSession, SearchItems,
GetSecrets, the collection's Locked property). With --break METHOD that
method answers with a signature other than the Secret Service API's:
a broken or hostile owner of the name, which cog-cred must reject with an
error (exit 69), never a crash.
"""
import argparse
import asyncio

from dbus_next import Variant
from dbus_next.aio import MessageBus
from dbus_next.service import PropertyAccess, ServiceInterface, dbus_property, method

COLLECTION = "/org/freedesktop/secrets/collection/fake"
ITEM = COLLECTION + "/1"
SESSION = "/org/freedesktop/secrets/session/1"
# A well-formed token; its content does not matter, the types do.
TOKEN = b"eyJhbGciOiJub25lIn0.eyJleHAiOjQxMDI0NDQ4MDB9.c2ln"


def service_interface(broken):
    class Service(ServiceInterface):
        def __init__(self):
            super().__init__("org.freedesktop.Secret.Service")

        if broken == "OpenSession":
            @method()
            def OpenSession(self, algorithm: "s", input: "v") -> "ss":  # noqa: F821
                return ["", SESSION]
        else:
            @method()
            def OpenSession(self, algorithm: "s", input: "v") -> "vo":  # noqa: F821
                return [Variant("s", ""), SESSION]

        if broken == "ReadAlias":
            @method()
            def ReadAlias(self, name: "s") -> "s":  # noqa: F821
                return COLLECTION
        elif broken in ("AliasFlickers", "NoDefault"):
            # gnome-keyring 42 answers "/" for a moment while it replaces its
            # alias table (AliasFlickers: every other call); a keyring without
            # a default answers "/" always (NoDefault).
            @method()
            def ReadAlias(self, name: "s") -> "o":  # noqa: F821
                self.alias_calls = getattr(self, "alias_calls", 0) + 1
                return "/" if broken == "NoDefault" or self.alias_calls % 2 == 1 else COLLECTION
        else:
            @method()
            def ReadAlias(self, name: "s") -> "o":  # noqa: F821
                return COLLECTION

        if broken == "SearchItems":
            @method()
            def SearchItems(self, attributes: "a{ss}") -> "s":  # noqa: F821
                return ITEM
        elif broken == "Locked":
            # Nothing found, so the client asks whether the collection is locked.
            @method()
            def SearchItems(self, attributes: "a{ss}") -> "aoao":  # noqa: F821
                return [[], []]
        else:
            @method()
            def SearchItems(self, attributes: "a{ss}") -> "aoao":  # noqa: F821
                return [[ITEM], []]

        if broken == "GetSecrets":
            @method()
            def GetSecrets(self, items: "ao", session: "o") -> "a{ss}":  # noqa: F821
                return {item: "secret" for item in items}
        elif broken == "GetSecretsStruct":
            @method()
            def GetSecrets(self, items: "ao", session: "o") -> "a{o(oay)}":  # noqa: F821
                return {item: [SESSION, TOKEN] for item in items}
        else:
            @method()
            def GetSecrets(self, items: "ao", session: "o") -> "a{o(oayays)}":  # noqa: F821
                return {item: [SESSION, b"", TOKEN, "text/plain"] for item in items}

    return Service()


def collection_interface(broken):
    class Collection(ServiceInterface):
        def __init__(self):
            super().__init__("org.freedesktop.Secret.Collection")

        if broken == "Locked":
            @dbus_property(access=PropertyAccess.READ)
            def Locked(self) -> "s":  # noqa: F821
                return "no"
        else:
            @dbus_property(access=PropertyAccess.READ)
            def Locked(self) -> "b":  # noqa: F821
                return False

    return Collection()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--break", dest="broken", required=True,
                        choices=["ReadAlias", "OpenSession", "SearchItems", "GetSecrets", "GetSecretsStruct", "Locked",
                                 "AliasFlickers", "NoDefault"])
    args = parser.parse_args()
    bus = await MessageBus(bus_address=args.address).connect()
    bus.export("/org/freedesktop/secrets", service_interface(args.broken))
    bus.export(COLLECTION, collection_interface(args.broken))
    await bus.request_name("org.freedesktop.secrets")
    await bus.wait_for_disconnect()


if __name__ == "__main__":
    asyncio.run(main())
