/// What the person can do about a failure, named by what it achieves: the
/// commands and flags that do it are the executable's vocabulary, so the
/// executable words each step (cog-cred-cli's ErrorWording.swift) and the
/// library never spells its command line.
public enum NextStep: Sendable, Equatable {
    /// Sign in to the profile for the first time.
    case signIn(profile: String)
    /// Sign in to the profile again: its session is over.
    case signInAgain(profile: String)
    /// Sign in: the account may be confirmed already.
    case trySignIn
    /// Confirm the new account with the code sent by email.
    case confirmSignUp
    /// Reset the password: Cognito requires it.
    case resetPassword
    /// Sign in to the existing account, or reset its password.
    case signInOrResetPassword
    /// Ask for a new code: with the password reset that sent it, or with resend-code.
    case requestNewCode(forPasswordReset: Bool)
    /// Add the authenticator again (its first code was wrong).
    case enableTOTPAgain
    /// See the user's devices and their keys.
    case listDevices(profile: String)
    /// See the user's passkeys and their ids.
    case listPasskeys(profile: String)
    /// Sign in another way, then add a passkey on a security key.
    case addPasskey(profile: String)
    /// Check the profile's passkey relying party against the pool's.
    case checkRelyingParty
    /// Give the profile its passkey relying party: it has none.
    case setRelyingParty(profile: String)
    /// Suspect the endpoint: a wrong one, or a proxy that is not Cognito.
    case suspectEndpoint
    /// Plug in a security key, or name the one to use.
    case connectSecurityKey
    /// Use the security key the passkey was added on (the passkeys listed
    /// say which), or sign in another way.
    case useAddedSecurityKey
    /// See the user's passkeys: this key holds one already.
    case seePasskeys
    /// Give the challenge's answer without a terminal.
    case answerWithoutTerminal(ChallengeInput)
    /// Name the device to forget, as listed by the devices command.
    case nameDeviceToForget(profile: String)
    /// Allow the browser more time.
    case waitLongerForBrowser
    /// Check the profile's user pool and app client.
    case checkProfile
    /// Check the Cognito endpoint: the profile's and the environment's.
    case checkEndpoint
    /// Store the app client's secret again.
    case storeClientSecretAgain
    /// Check the app client's ID, and store its secret again.
    case checkClientAndSecret
    /// Check the profile's identity pool.
    case checkIdentityPool
    /// Check the IAM role and its trust policy.
    case checkRole
    /// Check the profile's scopes against the app client's.
    case checkScopes
    /// Check the profile's OAuth domain and the app client's OAuth settings.
    case checkDomain
    /// Sign in with the password, or ask for the admin scope in browser sign-ins.
    case getAdminScope
    /// Allow plain HTTP to another machine for the profile.
    case allowInsecureHTTP
    /// Set a redirect URI on this machine.
    case setLoopbackRedirectURI
    /// Free the redirect URI's port, or choose another one.
    case chooseAnotherPort
    /// Trust the private CA that signed the endpoint's certificate; the
    /// certificates it was checked against, and what chose them, say how.
    case trustPrivateCA(CABundle)
    /// Check the proxy setting in `variable` (its user name and password).
    case checkProxy(variable: String?)
    /// Use a region with FIPS endpoints, or turn FIPS off.
    case chooseFIPSRegion
}

/// An answer a challenge can be given on the command line when there is
/// no terminal to ask on; the executable names the option that gives it.
public enum ChallengeInput: Sendable, Equatable {
    /// The password.
    case password
    /// A new password (NEW_PASSWORD_REQUIRED).
    case newPassword
    /// A second factor's code.
    case mfaCode
    /// A one-time code that signs in (choice-based sign-in).
    case signInCode
    /// The pool's custom challenges' answers.
    case customAnswer
    /// The first factor, among those offered.
    case signInMethod([SignInMethod])
    /// The second factor, among those offered.
    case mfaKind([MFAKind])
    /// A new authenticator's first code: `needsURI`, its URI printed (the
    /// code is made from the secret it holds); `needsCode`, the code itself,
    /// from standard input, by the option `codeOption` names.
    case authenticatorFirstCode(needsURI: Bool, needsCode: Bool, codeOption: FirstCodeOption)

    /// Which option gives an authenticator's first code.
    public enum FirstCodeOption: Sendable, Equatable {
        /// The sign-in's MFA code.
        case mfaCode
        /// The command's code (adding the authenticator).
        case code
    }
}

/// A failure told in parts: what happened, the step out of it, what came
/// of it, and who said so. The executable joins them in that order, wording
/// the step; the library's own `message` leaves the step out.
public struct Explanation: Sendable, Equatable {
    /// What happened, with no command or flag in it.
    public var problem: String
    public var nextStep: NextStep?
    /// What was or was not done because of it ("the security key was not
    /// asked"), after the step.
    public var outcome: String?
    /// Whose words the failure rests on, last in parentheses ("Cognito: CODE: message").
    public var cause: String?

    public init(_ problem: String, nextStep: NextStep? = nil, outcome: String? = nil, cause: String? = nil) {
        self.problem = problem
        self.nextStep = nextStep
        self.outcome = outcome
        self.cause = cause
    }

    /// The problem, its outcome and its cause, without the step only the
    /// executable can word.
    public var withoutNextStep: String {
        problem + (outcome.map { "; \($0)" } ?? "") + (cause.map { " (\($0))" } ?? "")
    }
}

/// A failure that names its next step by intent (`NextStep`); its
/// `message` is the explanation without that step.
public protocol ExplainedFailure: CogCredFailure {
    var explanation: Explanation { get }
}

extension ExplainedFailure {
    public var message: String { explanation.withoutNextStep }
}
