import CogCredRead

/// Why a passkey sign-in or registration failed before or at the security
/// key. Cognito's own refusals stay `AuthError.cognito`, with its code.
public enum PasskeyError: ExplainedFailure, Equatable {
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

    /// What happened; the way out by intent, which the executable words
    /// (it names the options and commands: ErrorWording).
    public var explanation: Explanation {
        switch self {
        case .noRelyingParty(let profile):
            return Explanation("profile \(profile) has no passkey relying party", nextStep: .setRelyingParty(profile: profile))
        case .relyingPartyMismatch(let sent, let pinned):
            return Explanation(
                "refused a passkey challenge for relying party '\(sent.oneLine(limit: 80))': this profile's is '\(pinned)'",
                nextStep: .suspectEndpoint, outcome: PasskeyError.keyNotAsked)
        case .malformedOptions(let what):
            return Explanation(what, outcome: PasskeyError.keyNotAsked)
        case .libraryMissing(let reason):
            return Explanation("cannot load libfido2 for security keys (\(reason.oneLine(limit: 120))): install libfido2-1")
        case .noAuthenticator(let tried):
            return Explanation("no security key found (tried \(tried))", nextStep: .connectSecurityKey)
        case .noCredential:
            return Explanation("this security key holds no passkey for this user here", nextStep: .useAddedSecurityKey)
        case .declined:
            return Explanation("the security key declined (cancelled on the key?); nothing was stored")
        case .timedOut(let seconds):
            return Explanation("the security key was not touched within \(seconds) s; nothing was stored")
        case .wrongPIN(let retries):
            let left = retries.map { "; \($0) \($0 == 1 ? "try" : "tries") left before the key locks its PIN" } ?? ""
            return Explanation("the security key's PIN is incorrect\(left)")
        case .pinBlocked:
            return Explanation("the security key's PIN is blocked: only resetting the key (which erases its passkeys) clears it")
        case .pinAuthBlocked:
            return Explanation("the security key refuses PINs after too many wrong ones: unplug it, plug it in again and retry")
        case .cannotVerifyUser:
            // fido2-token is libfido2's own tool, not this command line's.
            return Explanation(
                "the pool requires user verification and this security key cannot give it (no PIN set, no fingerprint):"
                    + " set a PIN (fido2-token -S DEVICE), or use the browser")
        case .builtInVerificationFailed:
            return Explanation("the security key's built-in verification (a fingerprint) failed or is blocked: try again, or use the key's PIN")
        case .alreadyRegistered:
            return Explanation("this security key holds a passkey for this user already", nextStep: .seePasskeys)
        case .unsupportedAlgorithm(let algorithms):
            return Explanation(
                "Cognito asks for key types a security key cannot make (COSE \(algorithms.map(String.init).joined(separator: ", ")); ES256 is -7)")
        case .authenticatorFailed(let detail):
            return Explanation("the security key failed: \(detail.oneLine(limit: 160))")
        }
    }

    /// Refused before the key: nothing was signed for whoever sent the options.
    static let keyNotAsked = "the security key was not asked"
}
