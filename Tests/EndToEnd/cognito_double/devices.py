"""Remembered devices (config device_tracking): ConfirmDevice, ListDevices,
UpdateDeviceStatus, ForgetDevice and the device SRP.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import base64
import binascii
import secrets
import time
import uuid

from .constants import (ALNUM, DEVICE_IP, DEVICE_NOT_FOUND, DEVICE_PAGE_DEFAULT, DEVICE_PAGE_MAX,
                        DEVICE_REMEMBERED_STATUSES)
from .crypto import SRP_N
from .errors import CognitoError, invalid_parameter
from .wire import epoch_millis


class RememberedDevices:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

    # ------------------------------------------------------ remembered devices (config device_tracking)
    # A device is issued at the end of a sign-in (NewDeviceMetadata), exists
    # for the sign-in actions and the device actions only once confirmed, and
    # is deleted when forgotten. It belongs to the user as it was (its sub):
    # replacing a user leaves its devices behind, as it does its sessions.
    def _device_key_given(self, given: dict):
        """The DEVICE_KEY a sign-in step carries, or None: also when the pool
        tracks no devices, which ignores it."""
        key = given.get("DEVICE_KEY")
        if not self.config["device_tracking"] or key is None:
            return None
        if not isinstance(key, str) or not key:
            raise invalid_parameter("DEVICE_KEY must be a non-empty string")
        return key

    def _devices_of(self, username: str, confirmed_only: bool = True) -> list:
        """(key, device) of the user's devices, oldest first."""
        sub = self.users[username]["sub"]
        return [(key, device) for key, device in self.devices.items()
                if device["username"] == username and device["sub"] == sub
                and (device["confirmed"] or not confirmed_only)]

    def _owned_device(self, username: str, key) -> dict:
        """The user's device `key`, confirmed or not, else Cognito's ResourceNotFoundException."""
        device = self.devices.get(key) if isinstance(key, str) else None
        if device is None or device["username"] != username or device["sub"] != self.users[username]["sub"]:
            raise CognitoError("ResourceNotFoundException", DEVICE_NOT_FOUND,
                               detail="no such device of this user (never issued to it, or forgotten)")
        return device

    def _user_device(self, username: str, key) -> dict:
        """The user's confirmed device `key`, else Cognito's ResourceNotFoundException."""
        device = self._owned_device(username, key)
        if not device["confirmed"]:
            # The stricter reading: until ConfirmDevice the key names no device.
            raise CognitoError("ResourceNotFoundException", DEVICE_NOT_FOUND,
                               detail="the device was issued but never confirmed (ConfirmDevice)")
        return device

    def _issue_device(self, username: str) -> str:
        """A new, unconfirmed device for the user: what NewDeviceMetadata names."""
        key = f"{self.config['pool_id'].split('_', 1)[0]}_{uuid.uuid4()}"
        self.devices[key] = {
            "username": username, "sub": self.users[username]["sub"],
            "group_key": "-" + "".join(secrets.choice(ALNUM) for _ in range(8)),
            "confirmed": False, "remembered": False,
            "verifier": None,    # int, from ConfirmDevice's PasswordVerifier
            "salt": None,        # the SALT text DEVICE_PASSWORD_VERIFIER shows
            "name": None, "created": None, "modified": None,
            "last_authenticated": time.time(),  # the sign-in that brought it
        }
        return key

    def _sign_in_tokens(self, username: str, device_key=None) -> dict:
        """The tokens that end a sign-in (never a refresh). With device tracking
        they are bound to the device the sign-in used, or to a new one the
        answer names in NewDeviceMetadata."""
        if not self.config["device_tracking"]:
            return self._authentication_result(username, auth_time=None, refresh=True)
        if device_key is not None:
            self._user_device(username, device_key)["last_authenticated"] = time.time()
            return self._authentication_result(username, auth_time=None, refresh=True, device_key=device_key)
        device_key = self._issue_device(username)
        answer = self._authentication_result(username, auth_time=None, refresh=True, device_key=device_key)
        answer["AuthenticationResult"]["NewDeviceMetadata"] = {
            "DeviceKey": device_key, "DeviceGroupKey": self.devices[device_key]["group_key"]}
        return answer

    def _refresh_device_problem(self, record: dict, given):
        """Why a refresh token bound to a device may not be used with `given`
        (the DEVICE_KEY sent), or None. Cognito says only "Invalid Refresh Token"."""
        bound = record.get("device_key")
        if bound is None:
            return None  # a token from before tracking, or from managed login: a DEVICE_KEY is ignored
        if given is None:
            why = "the refresh token is bound to a device and no DEVICE_KEY was sent"
        elif given != bound:
            why = "DEVICE_KEY is not the device the refresh token is bound to"
        elif bound not in self.devices:
            why = "the refresh token's device has been forgotten"
        elif not self.devices[bound]["confirmed"]:
            why = "the refresh token's device was never confirmed (ConfirmDevice)"
        else:
            return None
        return CognitoError("NotAuthorizedException", "Invalid Refresh Token", detail=why)

    def _check_refresh_device(self, record: dict, given) -> None:
        problem = self._refresh_device_problem(record, given)
        if problem is not None:
            raise problem

    def confirm_device(self, req: dict) -> dict:
        access_token, key = self._require(req, "AccessToken", "DeviceKey")
        device = self._owned_device(self._verify_access_token(access_token), key)
        name = req.get("DeviceName")
        if name is not None and not (isinstance(name, str) and 1 <= len(name) <= 1024):
            raise invalid_parameter("DeviceName must be a string of 1 to 1024 characters")
        if device["confirmed"]:
            # Stricter than not knowing: a second ConfirmDevice would let any
            # access token of the user replace the device's secret.
            raise invalid_parameter("Device has already been confirmed.")
        verifier, salt = self._device_secret(req.get("DeviceSecretVerifierConfig"))
        now = time.time()
        device.update(verifier=verifier, salt=salt, name=name or key, confirmed=True, created=now, modified=now,
                      remembered=self.config["device_tracking"] == "always")
        return {"UserConfirmationNecessary": not device["remembered"]}

    @staticmethod
    def _device_secret(config) -> tuple:
        """(verifier, SALT text) of a DeviceSecretVerifierConfig. Its members are
        base64 of padHex bytes; they are read as Java's BigInteger reads bytes
        (two's complement), the reading Cognito's negative SALTs point to."""
        if not isinstance(config, dict):
            raise invalid_parameter("DeviceSecretVerifierConfig (PasswordVerifier and Salt) is required")
        numbers = []
        for member in ("PasswordVerifier", "Salt"):
            text = config.get(member)
            if not isinstance(text, str) or not text:
                raise invalid_parameter(f"DeviceSecretVerifierConfig.{member} is required")
            try:
                raw = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                raise invalid_parameter(f"DeviceSecretVerifierConfig.{member} is not base64") from None
            if not raw:
                raise invalid_parameter(f"DeviceSecretVerifierConfig.{member} is empty")
            numbers.append(int.from_bytes(raw, "big", signed=True))
        verifier, salt = numbers
        if not 0 < verifier < SRP_N:
            raise invalid_parameter("DeviceSecretVerifierConfig.PasswordVerifier is not a number in 1..N-1 "
                                    "(padHex bytes of g^x mod N)")
        # Shown as the user's SALT is: a number in hex, no leading zeros, "-" if negative.
        return verifier, format(salt, "x")

    def list_devices(self, req: dict) -> dict:
        username = self._verify_access_token(self._require(req, "AccessToken")[0])
        limit = req.get("Limit", DEVICE_PAGE_DEFAULT)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= DEVICE_PAGE_MAX:
            raise invalid_parameter(f"Limit must be a number from 1 to {DEVICE_PAGE_MAX}")
        offset, token = 0, req.get("PaginationToken")
        if token is not None:
            page = self.device_pages.get(token) if isinstance(token, str) else None
            if page is None or page["username"] != username or page["sub"] != self.users[username]["sub"]:
                raise invalid_parameter("Invalid pagination token.")
            offset = page["offset"]
        devices = self._devices_of(username)
        answer = {"Devices": [self._device_type(key, device) for key, device in devices[offset:offset + limit]]}
        if offset + limit < len(devices):
            token = base64.b64encode(secrets.token_bytes(48)).decode("ascii")
            self.device_pages[token] = {"username": username, "sub": self.users[username]["sub"],
                                        "offset": offset + limit}
            answer["PaginationToken"] = token
        return answer

    @staticmethod
    def _device_type(key: str, device: dict) -> dict:
        """A DeviceType as ListDevices answers it."""
        return {"DeviceKey": key, "DeviceAttributes": [
            {"Name": "device_status", "Value": "valid"},
            {"Name": "device_name", "Value": device["name"]},
            {"Name": "dev:device_remembered_status",
             "Value": "remembered" if device["remembered"] else "not_remembered"},
            {"Name": "last_ip_used", "Value": DEVICE_IP}],
            "DeviceCreateDate": epoch_millis(device["created"]),
            "DeviceLastModifiedDate": epoch_millis(device["modified"]),
            "DeviceLastAuthenticatedDate": epoch_millis(device["last_authenticated"])}

    def update_device_status(self, req: dict) -> dict:
        access_token, key = self._require(req, "AccessToken", "DeviceKey")
        status = req.get("DeviceRememberedStatus")
        if status not in DEVICE_REMEMBERED_STATUSES:
            raise invalid_parameter(f"1 validation error detected: Value {status!r} at 'deviceRememberedStatus' "
                                    "failed to satisfy constraint: Member must satisfy enum value set: "
                                    "[remembered, not_remembered]")
        device = self._user_device(self._verify_access_token(access_token), key)
        device.update(remembered=status == "remembered", modified=time.time())
        return {}

    def forget_device(self, req: dict) -> dict:
        access_token, key = self._require(req, "AccessToken", "DeviceKey")
        self._user_device(self._verify_access_token(access_token), key)
        del self.devices[key]
        return {}
