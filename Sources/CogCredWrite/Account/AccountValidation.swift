/// Checks made before any request, so a typo costs no round trip and no
/// attempt against Cognito's rate limits. Each failure exits 65.
public enum AccountValidation {
    /// A plausible email address: one '@', a non-empty local part, and a
    /// domain with a dot and no empty labels. Cognito's own check is the
    /// final word; this catches typos such as a missing domain.
    public static func emailProblem(_ address: String) -> String? {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        let bad = "'\(address.oneLine(limit: 80))' is not an email address"
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return bad }
        let domain = parts[1]
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }) else { return bad }
        let allowed = address.unicodeScalars.allSatisfy { !$0.properties.isWhitespace && $0.value > 0x20 && $0.value != 0x7F }
        return allowed ? nil : bad
    }

    /// Usernames that contain '@' are taken to be email addresses.
    public static func looksLikeEmail(_ username: String) -> Bool {
        username.contains("@")
    }

    /// The code from the email: surrounding white space removed, then exactly six digits.
    public static func normalizedCode(_ raw: String) throws(InputError) -> String {
        let code = raw.trimmingWhitespace()
        guard code.utf8.count == 6, code.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw InputError("the code must be exactly 6 digits")
        }
        return code
    }

    public static func checkNewPassword(_ new: String, old: String) throws(InputError) {
        if new.isEmpty { throw InputError("the new password is empty") }
        if new == old { throw InputError("the new password is the same as the current one") }
    }

    /// `name=value`, as a user attribute is typed.
    public static func attribute(_ text: String) throws(AttributeError) -> UserAttribute {
        guard let equals = text.firstIndex(of: "=") else { throw .notNameValue }
        let name = String(text[..<equals])
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace }) else { throw .emptyName }
        return UserAttribute(name: name, value: String(text[text.index(after: equals)...]))
    }

    /// The attributes to send with SignUp: the given ones (any `email` among
    /// them checked), plus the username as `email` when it is an address and
    /// no email was given.
    public static func signUpAttributes(username: String, given: [UserAttribute]) throws(InputError) -> [UserAttribute] {
        var attributes = given
        if let email = given.first(where: { $0.name == "email" }) {
            if let problem = emailProblem(email.value) { throw InputError(problem) }
        } else if looksLikeEmail(username) {
            if let problem = emailProblem(username) { throw InputError(problem) }
            attributes.append(UserAttribute(name: "email", value: username))
        }
        return attributes
    }
}

/// A user attribute typed as something other than `name=value`. The
/// executable names the option it was typed with.
public enum AttributeError: CogCredFailure, Equatable {
    /// No `=` in it.
    case notNameValue
    /// Nothing (or whitespace) before the `=`.
    case emptyName

    public var category: FailureCategory { .usage }

    public var message: String {
        switch self {
        case .notNameValue: return "an attribute takes name=value, such as name=Alice"
        case .emptyName: return "an attribute takes name=value with a non-empty name"
        }
    }
}
