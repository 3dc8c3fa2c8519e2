import CogCredRead

/// Why a passkey sign-in or registration failed before or at the security
/// key. Cognito's own refusals stay `AuthError.cognito`, with its code.
public enum PasskeyError: CogCredFailure, Equatable {
    /// The profile has no relying party to pin passkeys to (exit 78).
    case noRelyingParty(profile: String)
    /// The challenge names another relying party than the profile's: refused
    /// before the key is asked anything (exit 76).
    case relyingPartyMismatch(sent: String, pinned: String)
    /// Cognito's options cannot be read (exit 76).
    case malformedOptions(String)
    /// libfido2 cannot be loaded (exit 69).
    case libraryMissing(String)
    /// No security key could be opened; what was tried (exit 69).
    case noAuthenticator(tried: String)
    /// The key holds no passkey for this user and relying party (exit 77).
    case noCredential
    /// The person declined on the key, or cancelled (exit 77).
    case declined
    /// No touch within the options' time (exit 77).
    case timedOut(seconds: Int)
    /// A wrong PIN; the key's count of tries left (exit 77).
    case wrongPIN(retriesLeft: Int?)
    /// The PIN is blocked: only a reset of the key clears it (exit 77).
    case pinBlocked
    /// Too many wrong PINs since the key was plugged in (exit 77).
    case pinAuthBlocked
    /// Verification is required and the key can give none (no PIN set, no
    /// built-in verifier) (exit 77).
    case cannotVerifyUser
    /// The key's built-in verifier (a fingerprint) did not recognise the
    /// person, or is blocked after too many tries (exit 77).
    case builtInVerificationFailed
    /// The key holds a passkey for this user already (exit 77).
    case alreadyRegistered
    /// Cognito asks for key types a security key cannot make (exit 76).
    case unsupportedAlgorithm([Int])
    /// Anything else the key or libfido2 said (exit 1).
    case authenticatorFailed(String)

    public var category: FailureCategory {
        switch self {
        case .noRelyingParty: return .configuration
        case .relyingPartyMismatch, .malformedOptions, .unsupportedAlgorithm: return .protocolViolation
        case .libraryMissing, .noAuthenticator: return .authenticatorUnavailable
        case .noCredential, .declined, .timedOut, .wrongPIN, .pinBlocked, .pinAuthBlocked, .cannotVerifyUser, .builtInVerificationFailed,
            .alreadyRegistered:
            return .notAuthenticated
        case .authenticatorFailed: return .other
        }
    }

    public var message: String {
        switch self {
        case .noRelyingParty(let profile):
            return "profile \(profile) has no passkey relying party: cog-cred configure --profile \(profile) --passkey-rp-id ID"
                + " (the pool's WebAuthn relying party id; by default the host of --domain)"
        case .relyingPartyMismatch(let sent, let pinned):
            return "refused a passkey challenge for relying party '\(sent.oneLine(limit: 80))': this profile's is '\(pinned)'"
                + " (a wrong --endpoint-url, or a proxy that is not Cognito?); the security key was not asked"
        case .malformedOptions(let what):
            return "\(what); the security key was not asked"
        case .libraryMissing(let reason):
            return "cannot load libfido2 for security keys (\(reason.oneLine(limit: 120))): install libfido2-1"
        case .noAuthenticator(let tried):
            return "no security key found (tried \(tried)): plug one in, or name it with --authenticator PATH"
        case .noCredential:
            return "this security key holds no passkey for this user here: use the key you added (cog-cred passkey list), or sign in another way"
        case .declined:
            return "the security key declined (cancelled on the key?); nothing was stored"
        case .timedOut(let seconds):
            return "the security key was not touched within \(seconds) s; nothing was stored"
        case .wrongPIN(let retries):
            let left = retries.map { "; \($0) \($0 == 1 ? "try" : "tries") left before the key locks its PIN" } ?? ""
            return "the security key's PIN is incorrect\(left)"
        case .pinBlocked:
            return "the security key's PIN is blocked: only resetting the key (which erases its passkeys) clears it"
        case .pinAuthBlocked:
            return "the security key refuses PINs after too many wrong ones: unplug it, plug it in again and retry"
        case .cannotVerifyUser:
            return "the pool requires user verification and this security key cannot give it (no PIN set, no fingerprint):"
                + " set a PIN (fido2-token -S DEVICE), or use the browser"
        case .builtInVerificationFailed:
            return "the security key's built-in verification (a fingerprint) failed or is blocked: try again, or use the key's PIN"
        case .alreadyRegistered:
            return "this security key holds a passkey for this user already (cog-cred passkey list)"
        case .unsupportedAlgorithm(let algorithms):
            return "Cognito asks for key types a security key cannot make (COSE \(algorithms.map(String.init).joined(separator: ", ")); ES256 is -7)"
        case .authenticatorFailed(let detail):
            return "the security key failed: \(detail.oneLine(limit: 160))"
        }
    }
}
