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

Enough of the API for a read and an unlock: ReadAlias, OpenSession (plain
only, NotSupported for any other algorithm), SearchItems (in the order of
--items), each item's Attributes,
GetSecrets, Unlock, the collection's Locked property, Prompt and Dismiss.
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
    def __init__(self, items, answer, log):
        self.items = {f"{COLLECTION}/{i + 1}": item for i, item in enumerate(items)}
        self.locked = True
        self.answer = answer
        self.log = log

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
    def __init__(self, attributes):
        super().__init__("org.freedesktop.Secret.Item")
        self.attributes = attributes

    @dbus_property(access=PropertyAccess.READ)
    def Attributes(self) -> "a{ss}":  # noqa: F821
        return self.attributes


class Collection(ServiceInterface):
    def __init__(self, state):
        super().__init__("org.freedesktop.Secret.Collection")
        self.state = state

    @dbus_property(access=PropertyAccess.READ)
    def Locked(self) -> "b":  # noqa: F821
        return self.state.locked


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
    args = parser.parse_args()
    with open(args.items) as f:
        state = State(json.load(f), args.answer, args.log)
    state.locked = not args.unlocked
    bus = await MessageBus(bus_address=args.address).connect()
    bus.export("/org/freedesktop/secrets", Service(state))
    bus.export(COLLECTION, Collection(state))
    bus.export(PROMPT, Prompt(state))
    for path, item in state.items.items():
        bus.export(path, Item(item["attributes"]))
    await bus.request_name("org.freedesktop.secrets")
    await bus.wait_for_disconnect()


if __name__ == "__main__":
    asyncio.run(main())
