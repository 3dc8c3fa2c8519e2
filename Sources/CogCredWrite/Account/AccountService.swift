/// The account's life from the terminal: sign up, confirm, resend the code,
/// reset and change the password. Validates before any request and words
/// Cognito's errors for the step that failed.
public struct AccountService: Sendable {
    let cognito: any CognitoAccount

    public init(cognito: any CognitoAccount) {
        self.cognito = cognito
    }

    public func signUp(username: String, password: String, attributes: [UserAttribute]) throws -> SignUpResult {
        guard !password.isEmpty else { throw InputError("the password is empty") }
        let all = try AccountValidation.signUpAttributes(username: username, given: attributes)
        return try attempt(.signUp) { () throws(CognitoError) in try cognito.signUp(username: username, password: password, attributes: all) }
    }

    public func confirmSignUp(username: String, code: String) throws {
        let code = try AccountValidation.normalizedCode(code)
        try attempt(.confirmSignUp) { () throws(CognitoError) in try cognito.confirmSignUp(username: username, code: code) }
    }

    public func resendCode(username: String) throws -> CodeDelivery? {
        try attempt(.resendCode) { () throws(CognitoError) in try cognito.resendConfirmationCode(username: username) }
    }

    public func forgotPassword(username: String) throws -> CodeDelivery? {
        try attempt(.forgotPassword) { () throws(CognitoError) in try cognito.forgotPassword(username: username) }
    }

    public func confirmForgotPassword(username: String, code: String, newPassword: String) throws {
        let code = try AccountValidation.normalizedCode(code)
        guard !newPassword.isEmpty else { throw InputError("the new password is empty") }
        try attempt(.confirmForgotPassword) { () throws(CognitoError) in
            try cognito.confirmForgotPassword(username: username, code: code, newPassword: newPassword)
        }
    }

    /// Needs a valid access token: the caller gets it from the TokenManager,
    /// which refreshes first when needed.
    public func changePassword(accessToken: String, old: String, new: String, profile: String) throws {
        guard !old.isEmpty else { throw InputError("the current password is empty") }
        try AccountValidation.checkNewPassword(new, old: old)
        try attempt(.changePassword(profile: profile)) { () throws(CognitoError) in
            try cognito.changePassword(accessToken: accessToken, previousPassword: old, proposedPassword: new)
        }
    }

    private func attempt<T>(_ operation: AuthOperation, _ body: () throws(CognitoError) -> T) throws(AuthError) -> T {
        do {
            return try body()
        } catch {
            throw .cognito(error, operation: operation)
        }
    }
}

extension CodeDelivery {
    /// "by EMAIL to a***@e***", for messages.
    public var sentence: String {
        let medium = medium.map { " by \($0)" } ?? ""
        let destination = destination.map { " to \($0)" } ?? ""
        return medium + destination
    }
}
