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
    /// Cognito refused the answer just given and takes another in the same
    /// session: says why, and whether another answer can be had (a person
    /// at the terminal; never an answer a script gave). False ends the
    /// sign-in with the refusal.
    func mayAnswerAgain(_ refused: RefusedAnswer) -> Bool
}

/// An answer Cognito refused while its session takes another: Cognito's
/// sessions take another one-time code after a wrong one, and another new
/// password after one its policy refuses, as AWS's Amplify libraries rely
/// on. The sign-in asks again, at most `tries` answers in all.
public struct RefusedAnswer: Sendable, Equatable {
    public enum Problem: Sendable, Equatable {
        /// Not the code sent, or that the authenticator app shows (CodeMismatchException).
        case wrongCode
        /// A new password the pool's policy refuses, in Cognito's words (InvalidPasswordException).
        case passwordPolicy(String)
        /// The answer ended the sign-in's session (a pool's custom
        /// challenge that failed it, a session past its 3 minutes): the
        /// sign-in starts again, the password not asked again.
        case sessionEnded
    }

    public var problem: Problem
    /// What was answered, by the input that answers it.
    public var input: ChallengeInput
    /// The try to come: 2 after the first refusal.
    public var nextTry: Int

    public static let tries = 3

    public init(_ problem: Problem, input: ChallengeInput, nextTry: Int) {
        self.problem = problem
        self.input = input
        self.nextTry = nextTry
    }

    /// The refusal `error` is, of an answer given for `input`; nil when the
    /// sign-in cannot take another for it, or the tries are spent.
    init?(_ error: any Error, input: ChallengeInput, nextTry: Int) {
        guard nextTry <= Self.tries, case .cognito(let cause, _)? = error as? AuthError else { return nil }
        switch (cause.reason, input) {
        case (.refused(.challengeSession)?, _), (.refused?, .customAnswer):
            self.init(.sessionEnded, input: input, nextTry: nextTry)
        case (.codeMismatch?, .mfaCode), (.codeMismatch?, .signInCode), (.codeMismatch?, .authenticatorFirstCode):
            self.init(.wrongCode, input: input, nextTry: nextTry)
        case (.invalidPassword?, .newPassword):
            guard case .service(_, let message, _) = cause else { return nil }
            self.init(.passwordPolicy(message), input: input, nextTry: nextTry)
        default:
            return nil
        }
    }
}

extension ChallengeAnswers {
    /// Answers with no one to ask again: the refusal ends the sign-in.
    public func mayAnswerAgain(_ refused: RefusedAnswer) -> Bool { false }
}
