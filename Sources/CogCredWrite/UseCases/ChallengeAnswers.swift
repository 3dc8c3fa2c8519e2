/// What a person (or a script, through flags) answers when Cognito asks for
/// more than the password. The executable implements it with prompts and
/// flags; each method throws `AuthError.challengeNeedsInput` when it has
/// neither a terminal nor a flag to answer from.
public protocol ChallengeAnswers: PasskeyPrompts {
    /// A new password is required (the administrator's temporary one was used): the password to set.
    func newPassword(for username: String) throws -> String
    /// The current code of an authenticator app, or the code sent by SMS
    /// or email (to `destination`, masked, as Cognito says it).
    func mfaCode(_ kind: MFAKind, destination: String?) throws -> String
    /// Which second factor, of those the user has.
    func chooseMFA(from options: [MFAKind]) throws -> MFAKind
    /// Setting up an authenticator before signing in: show the otpauth://
    /// URI (and a QR code) and return the first code the app shows.
    func setUpAuthenticator(uri: String) throws -> String
    /// Choice-based sign-in: how to sign in, of the methods the pool offers this user.
    func chooseSignInMethod(from methods: [SignInMethod]) throws -> SignInMethod
    /// A one-time code as the first factor: the code sent by email or SMS to
    /// `destination` (masked, as Cognito says it).
    func signInCode(_ kind: MFAKind, destination: String?) throws -> String
    /// The pool's own challenge: the answer to the challenge whose public
    /// parameters these are (one round of several, perhaps).
    func customAnswer(_ parameters: [String: String]) throws -> String
    /// A pool where users choose whether to remember a device: whether to
    /// remember this one, named `name`. Never throws for want of a terminal:
    /// the sign-in is done by then, and the answer is then no.
    func rememberDevice(name: String) -> Bool
}
