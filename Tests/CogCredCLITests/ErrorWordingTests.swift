import Testing
import CogCredWrite
@testable import cog_cred_cli

/// The lines people see for the libraries' explained failures: word for
/// word what they were when the libraries wrote them (the end-to-end tests
/// match several).
@Suite struct ErrorWordingTests {
    static func cognito(_ code: String, _ operation: AuthOperation, said: String = "m") -> AuthError {
        .cognito(.service(code: code, message: said, httpStatus: 400), operation: operation)
    }

    /// A TLS failure checked against `bundle`.
    static func tls(_ bundle: CABundle) -> TransportError {
        var failure = TransportError(.tls, "SSL certificate problem: self-signed certificate")
        failure.caBundle = bundle
        return failure
    }

    @Test(arguments: [
        (AuthError.notSignedIn(profile: "default"), "not signed in (profile 'default'); run: cog-cred sign-in"),
        (.notSignedIn(profile: "work"), "not signed in (profile 'work'); run: cog-cred sign-in --profile work"),
        (.browserTimedOut(seconds: 5), "no answer from the browser within 5 s; nothing was stored: sign in again (--timeout SECONDS allows longer)"),
        (.noDevice(profile: "work"), "this machine is not one of the user's devices (profile 'work'): name the device to forget; cog-cred devices --profile work lists them"),
        (.noPasskey(profile: "work", offered: [.password, .emailOTP]), "Cognito offers this user no passkey (it offers password, email-otp): sign in another way, then add one on your security key with cog-cred passkey add --profile work"),
        (.cognito(.badResponse(httpStatus: 404, detail: "Not Found"), operation: .signIn), "this endpoint does not look like Cognito (HTTP 404, Not Found): check --endpoint-url with cog-cred configure, and AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER and AWS_ENDPOINT_URL"),
        (cognito("NotAuthorizedException", .signIn, said: "Unable to verify secret hash for client c"), "the app client's secret does not match: set it again with cog-cred configure --client-secret-stdin (Cognito: NotAuthorizedException: Unable to verify secret hash for client c)"),
        (cognito("ResourceNotFoundException", .awsCredentials), "the identity pool (or the identity in it) does not exist: check --identity-pool-id with cog-cred configure (Cognito: ResourceNotFoundException: m)"),
        (cognito("AccessDenied", .awsCredentials), "STS refused to assume the role: check --role-arn and that its trust policy allows this identity pool (Cognito: AccessDenied: m)"),
        (cognito("NotAuthorizedException", .refresh(profile: "work")), "the session has expired or was revoked; sign in again: cog-cred sign-in --profile work (Cognito: NotAuthorizedException: m)"),
        (cognito("NotAuthorizedException", .confirmSignUp), "the account cannot be confirmed; it may be confirmed already: try cog-cred sign-in (Cognito: NotAuthorizedException: m)"),
        (cognito("NotAuthorizedException", .devices(profile: "default"), said: "no scope"), "the access token lacks the aws.cognito.signin.user.admin scope listing or forgetting devices needs: sign in with the password (not the browser), or add that scope with cog-cred configure --scopes and sign in again (Cognito: NotAuthorizedException: no scope)"),
        (cognito("NotAuthorizedException", .mfaSettings(profile: "default")), "the session is no longer valid; sign in again: cog-cred sign-in (Cognito: NotAuthorizedException: m)"),
        (cognito("NotAuthorizedException", .changePassword(profile: "w"), said: "Access Token has expired"), "the session is no longer valid; sign in again: cog-cred sign-in --profile w (Cognito: NotAuthorizedException: Access Token has expired)"),
        (cognito("ResourceNotFoundException", .devices(profile: "w")), "you have no such device: cog-cred devices --profile w lists them (Cognito: ResourceNotFoundException: m)"),
        (cognito("CodeMismatchException", .mfaSettings(profile: "default")), "the authenticator's code is incorrect: check the app's clock and run cog-cred mfa enable totp again (Cognito: CodeMismatchException: m)"),
        (cognito("UserNotConfirmedException", .signIn), "the account is not confirmed yet; check your email for the code and run cog-cred confirm-sign-up (Cognito: UserNotConfirmedException: m)"),
        (cognito("PasswordResetRequiredException", .signIn), "Cognito requires a password reset for this user: run cog-cred forgot-password (Cognito: PasswordResetRequiredException: m)"),
        (cognito("ResourceNotFoundException", .signIn), "the user pool or app client in this profile does not exist; check it with cog-cred configure (Cognito: ResourceNotFoundException: m)"),
        (cognito("UsernameExistsException", .signUp), "an account with this username already exists: sign in, or reset the password with cog-cred forgot-password (Cognito: UsernameExistsException: m)"),
        (cognito("ExpiredCodeException", .confirmForgotPassword), "the code has expired: run cog-cred forgot-password again for a new one (Cognito: ExpiredCodeException: m)"),
        (cognito("ExpiredCodeException", .confirmSignUp), "the code has expired: run cog-cred resend-code for a new one (Cognito: ExpiredCodeException: m)"),
        (cognito("invalid_grant", .refresh(profile: "default")), "the session has expired or was revoked; sign in again: cog-cred sign-in (Cognito: invalid_grant: m)"),
        (cognito("invalid_client", .clientCredentials), "the app client or its secret was refused: check --client-id, and set the secret again with cog-cred configure --client-secret-stdin (Cognito: invalid_client: m)"),
        (cognito("invalid_scope", .clientCredentials), "a scope was refused: check --scopes against the app client's allowed scopes (Cognito: invalid_scope: m)"),
        (cognito("unsupported_grant_type", .clientCredentials), "the pool's OAuth endpoint refused the request: check --domain and the app client's OAuth settings (Cognito: unsupported_grant_type: m)"),
        (.cognito(.transport(TransportError(.tls, "SSL certificate problem: self-signed certificate")), operation: .refresh(profile: "default")), "the TLS certificate of the Cognito endpoint could not be verified; it was checked against the system's CA certificates: if a private CA signed it, set AWS_CA_BUNDLE or cog-cred configure --ca-bundle FILE (SSL certificate problem: self-signed certificate)"),
        // The bundle in use is named, with what chose it; what is set is never asked for.
        (.cognito(.transport(tls(CABundle(path: "/p.pem", source: .profile))), operation: .refresh(profile: "default")), "the TLS certificate of the Cognito endpoint could not be verified; it was checked against the profile's /p.pem (configure --ca-bundle): check that this file holds the CA that signed the endpoint's certificate (SSL certificate problem: self-signed certificate)"),
        (.cognito(.transport(tls(CABundle(path: "/e.pem", source: .environment, overridden: "/p.pem"))), operation: .refresh(profile: "default")), "the TLS certificate of the Cognito endpoint could not be verified; it was checked against AWS_CA_BUNDLE's /e.pem (over the profile's /p.pem): check that this file holds the CA that signed the endpoint's certificate, or unset AWS_CA_BUNDLE (SSL certificate problem: self-signed certificate)"),
        // No step: the library's message as it is.
        (cognito("NotAuthorizedException", .signIn), "incorrect username or password (Cognito: NotAuthorizedException: m)"),
        (.stateMismatch, "the browser's answer belongs to another sign-in (its state does not match); nothing was stored: sign in again"),
    ])
    func authErrorsReadAsBefore(error: AuthError, line: String) {
        #expect(ErrorWording.line(error) == line)
    }

    @Test func loopbackRefusalsNameTheRedirectURIOption() {
        #expect(
            ErrorWording.line(LoopbackError.notLoopback("https://example.com/cb"))
                == "the redirect URI https://example.com/cb is not http://localhost:PORT/PATH: browser sign-in listens on this machine (configure --redirect-uri)")
        #expect(
            ErrorWording.line(LoopbackError.portTaken(8400))
                == "port 8400 of the redirect URI is taken by another program: close it, or use another port with cog-cred configure --redirect-uri http://localhost:PORT/callback (and add that URL to the app client's callback URLs)")
        #expect(ErrorWording.line(LoopbackError.failed("no socket")) == "cannot listen for the browser's answer: no socket")
    }

    @Test func plainHTTPNamesTheOptionThatAllowsIt() {
        #expect(
            ErrorWording.line(EndpointError.cleartext(setting: "AWS_ENDPOINT_URL", url: "http://minio:9000/"))
                == "invalid AWS_ENDPOINT_URL: http://minio:9000/ is plain http:// to another machine: refresh tokens and passwords would cross the network unencrypted; use https://, or allow it for this profile with: cog-cred configure --allow-insecure-http")
    }

    @Test func anAttributeIsNamedByItsOption() {
        #expect(ErrorWording.line(AttributeError.notNameValue) == "--attribute takes name=value, such as name=Alice")
        #expect(ErrorWording.line(AttributeError.emptyName) == "--attribute takes name=value with a non-empty name")
    }

    /// The passkey failures read as when PasskeyError wrote its own lines,
    /// options and commands included.
    @Test(arguments: [
        (PasskeyError.noRelyingParty(profile: "work"), "profile work has no passkey relying party: cog-cred configure --profile work --passkey-rp-id ID (the pool's WebAuthn relying party id; by default the host of --domain)"),
        (.relyingPartyMismatch(sent: "evil.example", pinned: "auth.example.com"), "refused a passkey challenge for relying party 'evil.example': this profile's is 'auth.example.com' (a wrong --endpoint-url, or a proxy that is not Cognito?); the security key was not asked"),
        (.malformedOptions("the passkey challenge is not base64url"), "the passkey challenge is not base64url; the security key was not asked"),
        (.noAuthenticator(tried: "/dev/hidraw0"), "no security key found (tried /dev/hidraw0): plug one in, or name it with --authenticator PATH"),
        (.noCredential, "this security key holds no passkey for this user here: use the key you added (cog-cred passkey list), or sign in another way"),
        (.alreadyRegistered, "this security key holds a passkey for this user already (cog-cred passkey list)"),
        (.wrongPIN(retriesLeft: 1), "the security key's PIN is incorrect; 1 try left before the key locks its PIN"),
        (.cannotVerifyUser, "the pool requires user verification and this security key cannot give it (no PIN set, no fingerprint): set a PIN (fido2-token -S DEVICE), or use the browser"),
    ])
    func passkeyFailuresReadAsBefore(error: PasskeyError, line: String) {
        #expect(ErrorWording.line(error) == line)
        #expect(!error.message.contains("--") && !error.message.contains("cog-cred "))
    }

    /// A challenge with no terminal to ask on names the option that answers it.
    @Test(arguments: [
        (ChallengeInput.newPassword, "--new-password-stdin"),
        (.password, "--password-stdin"),
        (.mfaCode, "--mfa-code"),
        (.signInCode, "--code"),
        (.customAnswer, "--answer -"),
        (.signInMethod([.password, .emailOTP]), "--method password|email-otp"),
        (.mfaKind([.totp, .sms]), "--mfa-type totp|sms"),
        (.authenticatorFirstCode(needsURI: true, needsCode: true, codeOption: .mfaCode), "--print-uri (its otpauth:// URI, on standard output, holds the secret the code is made from) and --mfa-code -"),
        (.authenticatorFirstCode(needsURI: false, needsCode: true, codeOption: .code), "--code -"),
        (.authenticatorFirstCode(needsURI: true, needsCode: false, codeOption: .code), "--print-uri (its otpauth:// URI, on standard output, holds the secret the code is made from)"),
    ])
    func aChallengeWithoutATerminalNamesItsOption(input: ChallengeInput, option: String) {
        let error = AuthError.challengeNeedsInput(challenge: "a new password (NEW_PASSWORD_REQUIRED)", input: input)
        #expect(ErrorWording.line(error) == "Cognito asks for a new password (NEW_PASSWORD_REQUIRED), and there is no terminal to ask on; pass \(option)")
        #expect(error.message == "Cognito asks for a new password (NEW_PASSWORD_REQUIRED), and there is no terminal to ask on")
    }

    @Test func setupGitsOwnWaysOutAreNamedHere() {
        #expect(
            ErrorWording.line(SetupError(.repositoryScopeOutsideRepository, category: .usage))
                == "--local writes the repository's .git/config: run it inside a git repository, or leave --local out for your global git configuration")
        #expect(
            ErrorWording.line(SetupError(.helpersCleared(host: "git.example.com", failure: "git config: error: could not lock config file"), category: .configuration))
                == "git config: error: could not lock config file (the helpers for https://git.example.com are now cleared; run setup-git again)")
        #expect(ErrorWording.line(SetupError("git config: fatal: bad config", category: .configuration)) == "git config: fatal: bad config")
    }

    /// Failures that name no step keep their own message.
    @Test func otherFailuresKeepTheirMessage() {
        let error = InputError("the code must be exactly 6 digits")
        #expect(ErrorWording.line(error) == error.message)
    }

    /// Every step is worded, and none of them leaks into the library's message.
    @Test func theLibraryMessageLeavesTheStepOut() {
        let error = AuthError.notSignedIn(profile: "work")
        #expect(error.message == "not signed in (profile 'work')")
        #expect(!ErrorWording.words(.signInAgain(profile: "w")).isEmpty)
    }
}
