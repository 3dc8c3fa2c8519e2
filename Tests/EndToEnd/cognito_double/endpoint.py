"""The Cognito endpoint, `POST /`: counts and records every request, then
dispatches it to an action (or to STS).

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import hashlib
import json
import uuid

from .constants import AMZ_JSON, CONNECTION_HEADER, FORM, IDENTITY_TARGET_PREFIX, TARGET_PREFIX
from .errors import CognitoError, RawReply
from .wire import aws_json


def code_digest(code: str) -> str:
    """What a request record keeps of a code: enough to tell codes apart
    (the tests compute it of the codes they typed), never the code."""
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def arrival(headers: dict) -> dict:
    """Where a request came: the host it named and the number of the
    connection it came on (set by the server; 1, 2, ... across the double's
    ports), for the tests that count connections."""
    return {"host": headers.get("host"), "connection": int(headers[CONNECTION_HEADER])
            if CONNECTION_HEADER in headers else None}


class CognitoEndpoint:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

    # ------------------------------------------------------ Cognito endpoint
    def handle(self, headers: dict, raw_body: bytes):
        """Answer one `POST /`. Returns (status, content_type, extra_headers, body)."""
        with self.lock:
            target = headers.get("x-amz-target", "")
            media_type = headers.get("content-type", "").split(";")[0].strip().lower()
            if not target and media_type == FORM:
                return self._sts(headers, raw_body)  # STS, the AWS query protocol
            identity = target.startswith(IDENTITY_TARGET_PREFIX)
            if identity:
                # Counted under the bare name only when it is an identity pool action.
                name = target[len(IDENTITY_TARGET_PREFIX):]
                handlers, action = self.identity_actions, (name if name in self.identity_actions else None)
            else:
                handlers = self.actions
                action = target[len(TARGET_PREFIX):] if target.startswith(TARGET_PREFIX) else None
                if action in self.identity_actions and action not in self.actions:
                    action = None  # an identity pool action sent to the user pool: not counted as one
            try:
                payload = json.loads(raw_body or b"{}")
            except ValueError:
                payload = None
            auth_flow = payload.get("AuthFlow") if isinstance(payload, dict) and not identity else None
            # Which step of a sign-in an answer is counts as much as which flow.
            step = auth_flow
            if action == "RespondToAuthChallenge" and isinstance(payload, dict):
                step = payload.get("ChallengeName")
            # Count and record *before* anything can fail: tests assert on
            # retries and on what the client sent, including rejected requests.
            key = (action or target or "(missing target)") + (f":{step}" if step else "")
            self.calls[key] = self.calls.get(key, 0) + 1
            record = {"action": action, "auth_flow": auth_flow, "headers": dict(headers), **arrival(headers)}
            if identity:
                record["service"] = "cognito-identity"
            # What a sign-in step carried: the names only (never a password or
            # code), and the choices, which are no secret.
            sent = payload.get("AuthParameters", payload.get("ChallengeResponses")) if isinstance(payload, dict) else None
            if isinstance(sent, dict) and not identity:
                record["parameter_names"] = sorted(sent)
                choices = ("PREFERRED_CHALLENGE",) + (("ANSWER",) if step in ("SELECT_CHALLENGE", "SELECT_MFA_TYPE") else ())
                record.update({key.lower(): sent[key] for key in choices if key in sent})
                if step != auth_flow:
                    record["challenge"] = step
            # Which codes came, as digests (never a code): a test tells each
            # answer sent apart, and sees none sent twice.
            codes = dict(sent) if isinstance(sent, dict) else {}
            if isinstance(payload, dict) and isinstance(payload.get("UserCode"), str):
                codes["UserCode"] = payload["UserCode"]
            digests = [code_digest(v) for k, v in sorted(codes.items()) if (k.endswith("_CODE") or k == "UserCode")
                       and isinstance(v, str)]
            if digests:
                record["code_digests"] = digests
            if action == "GetTokensFromRefreshToken" and isinstance(payload, dict):
                # It has no AuthParameters: whether the device came along, not which.
                record["device_key_sent"] = payload.get("DeviceKey") is not None
            self.requests.append(record)

            failed = self._fail_next(record)
            if failed is not None:
                return failed

            try:
                if media_type != AMZ_JSON:
                    raise CognitoError("SerializationException",
                                       f"Expected Content-Type {AMZ_JSON}, got {media_type or 'none'}")
                if action not in handlers:
                    raise CognitoError("UnknownOperationException",
                                       f"Unknown operation {target or '(no X-Amz-Target)'}")
                if identity and "authorization" in headers:
                    # The identity pool actions are unsigned; a signature must be a valid one.
                    raise CognitoError("UnrecognizedClientException",
                                       "The security token included in the request is invalid.")
                if not isinstance(payload, dict):
                    raise CognitoError("SerializationException", "Request body is not a JSON object")
                status, body = 200, handlers[action](payload)
                extra = {}
            except RawReply as raw:
                record["status"] = raw.status
                return raw.status, raw.content_type, dict(raw.headers), raw.body
            except CognitoError as err:
                status, body = err.status, {"__type": err.code, "message": err.message}
                extra = {"x-amzn-ErrorType": err.code}
                if err.detail:
                    record["detail"] = err.detail
            record["status"] = status
            extra["x-amzn-RequestId"] = str(uuid.uuid4())
            return status, AMZ_JSON, extra, aws_json(body)

    def _fail_next(self, record: dict):
        """The canned answer config fail_next asks for, used up by one request
        (recorded in `record`), or None to answer normally."""
        fail = self.config["fail_next"]
        if fail is None:
            return None
        fail["count"] -= 1
        if fail["count"] <= 0:
            self.config["fail_next"] = None
        record["status"] = fail["status"]
        return fail["status"], fail["content_type"], dict(fail["headers"]), fail["body"].encode()
