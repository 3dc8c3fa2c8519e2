// What a failed Cognito call means to the person who ran the command: its
// category (the exit code, README's table) and its explanation, both read
// from one rule per reason and operation. A new error is one row below.

extension AuthError {
    /// One row of the table: the failure's category, the problem in words
    /// with no command or flag in them, and the step out of it.
    struct Rule: Equatable {
        let category: FailureCategory
        let problem: String
        let nextStep: NextStep?

        init(_ category: FailureCategory, _ problem: String, _ nextStep: NextStep? = nil) {
            self.category = category
            self.problem = problem
            self.nextStep = nextStep
        }
    }

    /// The category and explanation of `error` met while doing `operation`.
    /// What the connection says comes first (an untrusted certificate, a
    /// passing fault, an endpoint that is not Cognito); a Cognito refusal
    /// reads as its reason's rule, with Cognito's own words as the cause.
    static func reading(_ error: CognitoError, _ operation: AuthOperation) -> (category: FailureCategory, explanation: Explanation) {
        if case .transport(let failure) = error, failure.kind == .tls {
            return (.temporary, Explanation(CognitoError.untrustedCertificate, nextStep: .trustPrivateCA(failure.caBundle ?? .system), cause: failure.detail.oneLine()))
        }
        if case .transport(let failure) = error, failure.kind == .proxyRefused || failure.kind == .proxySetting {
            return (.configuration, Explanation(error.summary, nextStep: .checkProxy(variable: failure.proxy?.source)))
        }
        if error.isTemporary {
            return (.temporary, Explanation("\(error.summary); try again later"))
        }
        if case .badResponse(let status, let detail) = error, error.isNotCognito {
            return (.configuration,
                    Explanation("this endpoint does not look like Cognito (HTTP \(status), \(detail.oneLine(limit: 120)))", nextStep: .checkEndpoint))
        }
        let said = "Cognito: \(error.summary)"
        guard let reason = error.reason else {
            // SECRET_HASH could not be had: nothing reached Cognito.
            var category = FailureCategory.other
            if case .noSecretHash(let failure) = error { category = failure.category }
            return (category, Explanation("\(operation.verb) failed", cause: said))
        }
        let rule = rule(for: reason, operation)
        return (rule.category, Explanation(rule.problem, nextStep: rule.nextStep, cause: said))
    }

    /// The table: the first row that matches decides. Rows for one reason
    /// run from the narrowest operation to any.
    static func rule(for reason: CognitoError.Reason, _ operation: AuthOperation) -> Rule {
        let failed = "\(operation.verb) failed"
        switch (reason, operation) {
        // Cognito refused the call (NotAuthorized): what its message blames, then the operation.
        case (.refused(.secretHash), _):
            return Rule(.configuration, "the app client's secret does not match", .storeClientSecretAgain)
        case (.refused, .confirmSignUp):
            return Rule(.dataError, "the account cannot be confirmed; it may be confirmed already", .trySignIn)
        case (.refused, .awsCredentials):
            return Rule(
                .notAuthenticated,
                "the identity pool does not accept this user pool's ID token: check that the identity pool's authentication providers name this user pool and app client")
        case (.refused, .refresh(let profile)), (.refused, .checkSession(let profile)),
            (.oauth(.invalidGrant), .refresh(let profile)), (.oauth(.invalidToken), .checkSession(let profile)):
            return Rule(.notAuthenticated, "the session has expired or was revoked", .signInAgain(profile: profile))
        // A browser sign-in's tokens carry only the scopes it asked for.
        case (.refused(.missingScope), .mfaSettings), (.refused(.missingScope), .devices), (.refused(.missingScope), .passkeys):
            return Rule(.notAuthenticated, "the access token lacks the \(OAuthScope.cognitoUserAdmin) scope \(operation.verb) needs", .getAdminScope)
        case (.refused, .mfaSettings(let profile)), (.refused, .devices(let profile)), (.refused, .passkeys(let profile)),
            (.refused(.accessToken), .changePassword(let profile)), (.refused(.missingScope), .changePassword(let profile)):
            return Rule(.notAuthenticated, "the session is no longer valid", .signInAgain(profile: profile))
        case (.refused, .changePassword):
            return Rule(.notAuthenticated, "the current password is incorrect")
        // Before the password's row below, which would take it.
        case (.refused(.challengeSession), .signIn):
            return Rule(.notAuthenticated, "the sign-in session is over (Cognito keeps one for 3 minutes unless the app client says longer): sign in again")
        case (.refused, _):
            return Rule(.notAuthenticated, "incorrect username or password")

        case (.userNotFound, _):
            return Rule(.notAuthenticated, "the user does not exist in this user pool; check the username")
        case (.userNotConfirmed, _):
            return Rule(.notAuthenticated, "the account is not confirmed yet", .confirmSignUp)
        case (.passwordResetRequired, _):
            return Rule(.notAuthenticated, "Cognito requires a password reset for this user", .resetPassword)

        // A code Cognito refuses, wrong or expired, is a rejected credential
        // in every command (77); one malformed before it is sent is 65.
        case (.codeMismatch, .mfaSettings):
            return Rule(.notAuthenticated, "the authenticator's code is incorrect", .enableTOTPAgain)
        case (.codeMismatch, .signIn):
            return Rule(.notAuthenticated, "the code is incorrect: check it and sign in again")
        case (.codeMismatch, _):
            return Rule(.notAuthenticated, "the code is incorrect: check it and try again")
        case (.codeExpired, .confirmForgotPassword):
            return Rule(.notAuthenticated, "the code has expired", .requestNewCode(forPasswordReset: true))
        case (.codeExpired, _):
            return Rule(.notAuthenticated, "the code has expired", .requestNewCode(forPasswordReset: false))

        case (.notFound, .awsCredentials):
            return Rule(.configuration, "the identity pool (or the identity in it) does not exist", .checkIdentityPool)
        case (.notFound, .devices(let profile)):
            return Rule(.dataError, "you have no such device", .listDevices(profile: profile))
        case (.notFound, .passkeys(let profile)):
            return Rule(.dataError, "you have no passkey with that id", .listPasskeys(profile: profile))
        case (.notFound, _):
            return Rule(.configuration, "the user pool or app client in this profile does not exist", .checkProfile)

        case (.usernameExists, _):
            return Rule(.dataError, "an account with this username already exists", .signInOrResetPassword)
        case (.invalidPassword, _):
            return Rule(.dataError, "the password does not meet the user pool's password policy")
        case (.invalidParameter, _):
            return Rule(.dataError, "Cognito rejected the request")
        case (.aliasExists, _):
            return Rule(.dataError, failed)
        case (.codeDeliveryFailed, _):
            return Rule(.temporary, failed)

        case (.passkeyChallengeExpired, _):
            return Rule(.temporary, "Cognito's passkey challenge expired before the key answered; try again")
        case (.passkeysNotOffered, _):
            return Rule(.configuration, "the user pool does not offer passkeys (docs/passkeys.md says what it needs)")
        case (.passkeyRelyingPartyMismatch, _):
            return Rule(.configuration, "Cognito's passkey relying party is not this profile's", .checkRelyingParty)
        case (.passkeyClientMismatch, _):
            return Rule(.notAuthenticated, "the passkey registration began with another app client's token: sign in again")
        case (.passkeyNotSupported, _):
            return Rule(.dataError, "Cognito does not accept this security key's passkey")

        case (.identityPoolMisconfigured, _):
            return Rule(
                .configuration,
                "the identity pool's IAM roles are not set up for it: the role's trust policy must allow cognito-identity.amazonaws.com for this pool")
        case (.roleRefused, _):
            return Rule(.configuration, "STS refused to assume the role", .checkRole)
        case (.identityTokenRefused, _), (.identityTokenExpired, _):
            return Rule(.notAuthenticated, failed)

        // The OAuth 2.0 endpoints' codes (RFC 6749 5.2).
        case (.oauth(.invalidGrant), _):
            return Rule(.notAuthenticated, "\(operation.verb) was refused")
        case (.oauth(.accessDenied), _):
            return Rule(.notAuthenticated, "the sign-in was cancelled or refused in the browser")
        case (.oauth(.invalidToken), _):
            return Rule(.notAuthenticated, failed)
        case (.oauth(.invalidClient), _):
            return Rule(.configuration, "the app client or its secret was refused", .checkClientAndSecret)
        case (.oauth(.unauthorizedClient), _):
            return Rule(.configuration, "the app client may not use this OAuth flow: allow it in the app client's settings (Allowed OAuth flows)")
        case (.oauth(.invalidScope), _):
            return Rule(.configuration, "a scope was refused", .checkScopes)
        case (.oauth(.unsupportedRequest), _):
            return Rule(.configuration, "the pool's OAuth endpoint refused the request", .checkDomain)

        // Throttling and Cognito's own faults are temporary whatever their
        // status, so `reading` words them before asking this table.
        case (.throttled, _), (.serviceFault, _):
            return Rule(.temporary, failed)
        case (.refreshTokenReused, _), (.unsupportedOperation, _), (.other, _):
            return Rule(.other, failed)
        }
    }
}
