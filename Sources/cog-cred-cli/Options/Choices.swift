import ArgumentParser
import CogCredWrite

// The options that take one of a fixed set of words, as the parser's own
// types: it refuses anything else (with the nearest word: UsageError),
// completes them, and lists them in each option's help from `allCases`
// with the words below, so no list of them is kept by hand.

extension AuthFlow: ExpressibleByArgument {
    public static var allValueDescriptions: [String: String] {
        allCases.reduce(into: [:]) { words, flow in
            words[flow.rawValue] =
                switch flow {
                case .srp: "the password is proved, never sent (default)"
                case .password: "the password is sent, over TLS"
                case .browser: "the pool's managed login, with --domain"
                case .choice: "the pool's choice-based sign-in: one-time codes, password, passkey"
                case .custom: "the pool's custom challenges"
                case .customSRP: "the pool's custom challenges, after the password is proved"
                }
        }
    }
}

extension SignInMethod: ExpressibleByArgument {}

extension Grant: ExpressibleByArgument {
    public static var allValueDescriptions: [String: String] {
        [
            Grant.userSignIn.rawValue: "a person signs in (default)",
            Grant.clientCredentials.rawValue: "a machine (the app client and its secret) gets access tokens from the domain's token endpoint",
        ]
    }
}

extension MFAKind: ExpressibleByArgument {
    public static var allValueDescriptions: [String: String] {
        [MFAKind.totp.rawValue: "an authenticator app", MFAKind.sms.rawValue: "a code by text message", MFAKind.email.rawValue: "a code by email"]
    }
}

extension TokenOutput.Format: ExpressibleByArgument {
    public static var allValueDescriptions: [String: String] {
        allCases.reduce(into: [:]) { words, format in
            words[format.rawValue] =
                switch format {
                case .bare: "the token alone (default)"
                case .header: "Authorization: Bearer TOKEN"
                case .json: "{\"token\", \"token_type\", \"expires_at\"}"
                case .env:
                    "export lines for eval that set what exec sets (COG_CRED_ACCESS_TOKEN, COG_CRED_ID_TOKEN, COG_CRED_AUTHORIZATION) and COG_CRED_TOKEN_EXPIRES_AT"
                }
        }
    }
}

/// A setting of configure's that takes one of `Value`'s words, or '' to
/// clear it.
enum Clearable<Value>: ExpressibleByArgument, Equatable
where Value: ExpressibleByArgument & CaseIterable & RawRepresentable & Equatable, Value.RawValue == String {
    case set(Value)
    case clear

    init?(argument: String) {
        if argument.isEmpty {
            self = .clear
        } else if let value = Value(rawValue: argument) {
            self = .set(value)
        } else {
            return nil
        }
    }

    static var allValueStrings: [String] { Value.allValueStrings }
    static var allValueDescriptions: [String: String] { Value.allValueDescriptions }
    static var defaultCompletionKind: CompletionKind { Value.defaultCompletionKind }

    /// As the config takes it: the word, or "" to clear.
    var text: String {
        switch self {
        case .set(let value): return value.rawValue
        case .clear: return ""
        }
    }
}
