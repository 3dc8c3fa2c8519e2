/// A sign-in, in the words of what it asks and answers. Cognito's names for
/// all of it (challenge names, AuthParameters, ChallengeResponses) live in
/// CognitoWire.swift alone; the sign-in use case speaks only these types.

/// The second factors Cognito can ask for, by their names on the command
/// line (`--mfa-type`).
public enum MFAKind: String, Sendable, Equatable, CaseIterable {
    /// An authenticator app.
    case totp
    /// A code by text message.
    case sms
    /// A code by email.
    case email

}

/// How a sign-in begins (InitiateAuth).
public enum SignInStart: Sendable, Equatable {
    /// SRP: the password is proved, never sent; `srpA` is the client's public value.
    case srp(srpA: String)
    /// The password itself, over TLS.
    case password(String)
    /// Choice-based sign-in, with the first factor the user prefers (and
    /// what it needs up front), or none: then Cognito offers the choice.
    case choice(FirstFactor?)
    /// The pool's own challenges; with `srpA`, the password proved by SRP first.
    case custom(srpA: String?)
}

/// A first factor of choice-based sign-in, with what it sends.
public enum FirstFactor: Sendable, Equatable {
    case password(String)
    case srp(srpA: String)
    case emailOTP
    case smsOTP
    /// A passkey: Cognito answers with the WebAuthn challenge.
    case passkey

    /// The method this factor is.
    public var method: SignInMethod {
        switch self {
        case .password: return .password
        case .srp: return .srp
        case .emailOTP: return .emailOTP
        case .smsOTP: return .smsOTP
        case .passkey: return .passkey
        }
    }
}

/// What Cognito asks before it hands out tokens.
public enum Challenge: Sendable, Equatable {
    /// Prove the user's password by SRP.
    case passwordVerifier(SRPServerStep)
    /// A remembered device: begin proving the device's own password by SRP.
    case deviceSRP
    /// A remembered device: prove its password.
    case devicePasswordVerifier(SRPServerStep)
    /// A second factor's code (after the password), sent to `destination`
    /// (masked, as Cognito says it) unless it is an authenticator's.
    case mfaCode(MFAKind, destination: String?)
    /// A one-time code by email or SMS. As a first factor it signs in; after
    /// the password, Cognito sends the same challenge for email MFA.
    case oneTimeCode(MFAKind, destination: String?)
    /// Choose the second factor among these.
    case chooseMFA([MFAKind])
    /// Choose how to sign in, among the first factors this tool can answer.
    case chooseSignInMethod([SignInMethod])
    /// Set a new password (an administrator's temporary one was used); the
    /// pool requires these attributes too, which a terminal cannot give.
    case newPassword(requiredAttributes: [String])
    /// Set up a second factor before signing in: the kinds the pool allows
    /// (nil: it did not say).
    case setUpMFA([MFAKind]?)
    /// The pool's own challenge (Lambda triggers), with its public
    /// parameters (the names the user is addressed by left out).
    case custom([String: String])
    /// Sign with a passkey: the WebAuthn request options, read (nil:
    /// Cognito sent none), or why they cannot be read.
    case passkey(requestOptions: Result<WebAuthn.RequestOptions, PasskeyError>?)
    /// A challenge this tool does not know, by Cognito's name.
    case unknown(String)

    /// A remembered device proves itself here (its refusal means the device).
    var provesDevice: Bool {
        switch self {
        case .deviceSRP, .devicePasswordVerifier: return true
        default: return false
        }
    }
}

/// SRP's server step: what Cognito sends for the client to prove a password.
public struct SRPServerStep: Sendable, Equatable {
    /// Hex.
    public var salt: String
    /// The server's public value, hex.
    public var serverB: String
    /// Opaque, signed into the proof and sent back.
    public var secretBlock: String
    /// The name the proof is computed over (a device's key, for a device).
    public var userID: String?
}

/// A challenge as Cognito sent it: what it asks, and what an answer must
/// carry back (the session, the name Cognito knows the user by, and its
/// own wording, which only CognitoWire reads).
public struct PendingChallenge: Sendable, Equatable {
    public var challenge: Challenge
    /// The sign-in's session; MFA set-up moves it on.
    public var session: String?
    /// The name Cognito knows the user by (not an alias they typed), when
    /// the challenge says it.
    public var userID: String?
    /// Cognito's name of the challenge (for messages) and its parameters.
    public let name: String
    let parameters: [String: String]
}

/// An answer to a challenge.
public enum ChallengeAnswer: Sendable, Equatable {
    /// An SRP proof (of the user's or the device's password).
    case passwordProof(PasswordProof)
    /// The device's SRP public value.
    case deviceSRP(srpA: String)
    /// The code asked for (MFA or a one-time code).
    case code(String)
    /// The second factor chosen.
    case mfa(MFAKind)
    /// The first factor chosen, with what it sends.
    case signInMethod(FirstFactor)
    case newPassword(String)
    /// The answer to the pool's own challenge.
    case custom(String)
    /// MFA is set up (VerifySoftwareToken accepted the first code).
    case mfaSetUp
    /// A passkey's assertion: the WebAuthn credential, as JSON.
    case passkey(credential: String)
}

/// The client's proof of a password, for `Challenge.passwordVerifier` and
/// `.devicePasswordVerifier`.
public struct PasswordProof: Sendable, Equatable {
    public var secretBlock: String
    /// Base64.
    public var signature: String
    /// The time the proof was computed for, as Cognito writes it.
    public var timestamp: String
}
