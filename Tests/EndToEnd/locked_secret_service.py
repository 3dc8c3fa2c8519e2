"""A Secret Service whose default collection starts locked and is unlocked
through a prompt, as a desktop keyring does it.

Owns org.freedesktop.secrets on the bus at --address, holding the items of
--items (a JSON list of {"attributes": {...}, "secret": "..."}). Unlock
returns a Prompt object; its Prompt() call "shows the dialog" and then
sends Completed: with --answer unlock the collection is unlocked and
Completed(dismissed=false) follows; with --answer dismiss, Completed
(dismissed=true) and it stays locked; with --answer never, no Completed at
all (a person who walked away). Each call is appended to --log as a line of
JSON, so a test can tell whether a prompt was shown.

Enough of the API for a read, a write and an unlock: ReadAlias, OpenSession
(plain only, NotSupported for any other algorithm), SearchItems (in the
order of --items), each item's Attributes and Delete, CreateItem (never in
place), GetSecrets, Unlock, the collection's Locked property, Prompt and
Dismiss.

--fail-once METHOD (OpenSession, CreateItem or Delete; repeatable) makes the
first such call fail as KWallet fails about one libsecret session in a
hundred (kwallet_provider.py): the encrypted OpenSession with "Client public
key size is invalid", a call whose secret it cannot read with "invalid or
unencryptable secret". Plain sessions (cog-cred's reads) are not failed.
"""
import argparse
import asyncio
import json

from dbus_next import DBusError, Variant
from dbus_next.aio import MessageBus
from dbus_next.service import PropertyAccess, ServiceInterface, dbus_property, method, signal

COLLECTION = "/org/freedesktop/secrets/collection/login"
SESSION = "/org/freedesktop/secrets/session/1"
PROMPT = "/org/freedesktop/secrets/prompt/1"


class State:
    def __init__(self, items, answer, log, fail_once):
        self.items = {f"{COLLECTION}/{i + 1}": item for i, item in enumerate(items)}
        self.created = len(items)
        self.locked = True
        self.answer = answer
        self.log = log
        self.fail_once = set(fail_once)
        self.bus = None

    def failing(self, call, message):
        """Raises KWallet's error the first time `call` is made with --fail-once."""
        if call in self.fail_once:
            self.fail_once.discard(call)
            self.record(call, failed=True)
            raise DBusError("org.freedesktop.DBus.Error.Failed", message)

    def record(self, call, **details):
        with open(self.log, "a") as f:
            f.write(json.dumps({"call": call, **details}) + "\n")


class Service(ServiceInterface):
    def __init__(self, state):
        super().__init__("org.freedesktop.Secret.Service")
        self.state = state

    @method()
    def OpenSession(self, algorithm: "s", input: "v") -> "vo":  # noqa: F821
        # As the spec says of an algorithm a service does not offer: libsecret
        # asks for an encrypted session first and falls back to plain on this.
        if algorithm != "plain":
            self.state.failing("OpenSession", "Client public key size is invalid")
            raise DBusError("org.freedesktop.DBus.Error.NotSupported", f"{algorithm} is not supported here")
        return [Variant("s", ""), SESSION]

    @method()
    def ReadAlias(self, name: "s") -> "o":  # noqa: F821
        return COLLECTION if name == "default" else "/"

    @method()
    def SearchItems(self, attributes: "a{ss}") -> "aoao":  # noqa: F821
        found = [path for path, item in self.state.items.items()
                 if all(item["attributes"].get(k) == v for k, v in attributes.items())]
        return [[], found] if self.state.locked else [found, []]

    @method()
    def GetSecrets(self, items: "ao", session: "o") -> "a{o(oayays)}":  # noqa: F821
        if self.state.locked:
            return {}
        return {path: [SESSION, b"", self.state.items[path]["secret"].encode(), "text/plain"]
                for path in items if path in self.state.items}

    @method()
    def Unlock(self, objects: "ao") -> "aoo":  # noqa: F821
        self.state.record("Unlock", objects=objects)
        if not self.state.locked:
            return [objects, "/"]
        return [[], PROMPT]


class Item(ServiceInterface):
    def __init__(self, state, path):
        super().__init__("org.freedesktop.Secret.Item")
        self.state = state
        self.path = path

    @dbus_property(access=PropertyAccess.READ)
    def Attributes(self) -> "a{ss}":  # noqa: F821
        return self.state.items[self.path]["attributes"]

    @method()
    def Delete(self) -> "o":  # noqa: F821
        self.state.failing("Delete", "invalid or unencryptable secret")
        self.state.record("Delete", path=self.path)
        del self.state.items[self.path]
        self.state.bus.unexport(self.path)
        return "/"


class Collection(ServiceInterface):
    def __init__(self, state):
        super().__init__("org.freedesktop.Secret.Collection")
        self.state = state

    @dbus_property(access=PropertyAccess.READ)
    def Locked(self) -> "b":  # noqa: F821
        return self.state.locked

    @method()
    def CreateItem(self, properties: "a{sv}", secret: "(oayays)", replace: "b") -> "oo":  # noqa: F821
        self.state.failing("CreateItem", "invalid or unencryptable secret")
        if self.state.locked:
            raise DBusError("org.freedesktop.Secret.Error.IsLocked", "the collection is locked")
        self.state.created += 1
        path = f"{COLLECTION}/{self.state.created}"
        attributes = properties["org.freedesktop.Secret.Item.Attributes"].value
        self.state.items[path] = {"attributes": attributes, "secret": bytes(secret[2]).decode()}
        self.state.bus.export(path, Item(self.state, path))
        self.state.record("CreateItem", path=path)
        return [path, "/"]


class Prompt(ServiceInterface):
    def __init__(self, state):
        super().__init__("org.freedesktop.Secret.Prompt")
        self.state = state

    @method()
    def Prompt(self, window_id: "s"):  # noqa: F821
        self.state.record("Prompt", window_id=window_id)
        if self.state.answer == "never":
            return
        # The "dialog" answers a moment after it was shown.
        asyncio.get_running_loop().call_later(0.2, self.complete)

    @method()
    def Dismiss(self):
        self.state.record("Dismiss")
        # An unlock prompt's result is an "ao" even when dismissed, as
        # gnome-keyring and KeePassXC send it (libsecret insists on it).
        self.Completed(True, Variant("ao", []))

    def complete(self):
        if self.state.answer == "unlock":
            self.state.locked = False
            self.Completed(False, Variant("ao", [COLLECTION]))
        else:
            self.Completed(True, Variant("ao", []))

    @signal()
    def Completed(self, dismissed, result) -> "bv":  # noqa: F821
        return [dismissed, result]


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--items", required=True)
    parser.add_argument("--answer", required=True, choices=["unlock", "dismiss", "never"])
    parser.add_argument("--log", required=True)
    parser.add_argument("--unlocked", action="store_true", help="start unlocked (items listed in the order given)")
    parser.add_argument("--fail-once", action="append", default=[], choices=["OpenSession", "CreateItem", "Delete"])
    args = parser.parse_args()
    with open(args.items) as f:
        state = State(json.load(f), args.answer, args.log, args.fail_once)
    state.locked = not args.unlocked
    bus = await MessageBus(bus_address=args.address).connect()
    state.bus = bus
    bus.export("/org/freedesktop/secrets", Service(state))
    bus.export(COLLECTION, Collection(state))
    bus.export(PROMPT, Prompt(state))
    for path in state.items:
        bus.export(path, Item(state, path))
    await bus.request_name("org.freedesktop.secrets")
    await bus.wait_for_disconnect()


if __name__ == "__main__":
    asyncio.run(main())
