import CogCredWrite

/// The words a failure gets on the command line. The libraries say what
/// happened and name the way out by intent (`NextStep`); the commands and
/// flags that take it are spelled here, and only here.
enum ErrorWording {
    /// The one line a failure gets: an explained one's problem, its step in
    /// this command line's words, then its cause; a Secret Service's in the
    /// words of its provider (Wiring.describe); any other's own message.
    static func line(_ failure: any CogCredFailure) -> String {
        switch failure {
        case let failure as any ExplainedFailure: return line(explaining: failure.explanation)
        case let failure as AttributeError: return line(attribute: failure)
        case let failure as SetupError: return line(setup: failure)
        default: return failure.message
        }
    }

    static func line(explaining explanation: Explanation) -> String {
        let step = explanation.nextStep.map(words) ?? ""
        let outcome = explanation.outcome.map { "; \($0)" } ?? ""
        let cause = explanation.cause.map { " (\($0))" } ?? ""
        return explanation.problem + step + outcome + cause
    }

    /// A step, with what joins it to the problem.
    static func words(_ step: NextStep) -> String {
        switch step {
        case .signIn(let profile): return "; run: cog-cred sign-in\(profileFlag(profile))"
        case .signInAgain(let profile): return "; sign in again: cog-cred sign-in\(profileFlag(profile))"
        case .trySignIn: return ": try cog-cred sign-in"
        case .confirmSignUp: return "; check your email for the code and run cog-cred confirm-sign-up"
        case .resetPassword: return ": run cog-cred forgot-password"
        case .signInOrResetPassword: return ": sign in, or reset the password with cog-cred forgot-password"
        case .requestNewCode(let forPasswordReset):
            return forPasswordReset ? ": run cog-cred forgot-password again for a new one" : ": run cog-cred resend-code for a new one"
        case .enableTOTPAgain: return ": check the app's clock and run cog-cred mfa enable totp again"
        case .listDevices(let profile): return ": cog-cred devices\(profileFlag(profile)) lists them"
        case .listPasskeys(let profile): return ": cog-cred passkey list\(profileFlag(profile)) lists them"
        case .addPasskey(let profile):
            return ": sign in another way, then add one on your security key with cog-cred passkey add\(profileFlag(profile))"
        case .checkRelyingParty: return ": check --passkey-rp-id (cog-cred configure) against the pool's WebAuthn relying party id"
        case .setRelyingParty(let profile):
            return ": cog-cred configure --profile \(profile) --passkey-rp-id ID (the pool's WebAuthn relying party id; by default the host of --domain)"
        case .suspectEndpoint: return " (a wrong --endpoint-url, or a proxy that is not Cognito?)"
        case .connectSecurityKey: return ": plug one in, or name it with --authenticator PATH"
        case .useAddedSecurityKey: return ": use the key you added (cog-cred passkey list), or sign in another way"
        case .seePasskeys: return " (cog-cred passkey list)"
        case .answerWithoutTerminal(let input): return "; pass \(option(input))"
        case .nameDeviceToForget(let profile): return ": name the device to forget; cog-cred devices\(profileFlag(profile)) lists them"
        case .waitLongerForBrowser: return " (--timeout SECONDS allows longer)"
        case .checkProfile: return "; check it with cog-cred configure"
        case .checkEndpoint:
            return ": check --endpoint-url with cog-cred configure, and AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER and AWS_ENDPOINT_URL"
        case .storeClientSecretAgain: return ": set it again with cog-cred configure --client-secret-stdin"
        case .checkClientAndSecret: return ": check --client-id, and set the secret again with cog-cred configure --client-secret-stdin"
        case .checkIdentityPool: return ": check --identity-pool-id with cog-cred configure"
        case .checkRole: return ": check --role-arn and that its trust policy allows this identity pool"
        case .checkScopes: return ": check --scopes against the app client's allowed scopes"
        case .checkDomain: return ": check --domain and the app client's OAuth settings"
        case .getAdminScope:
            return ": sign in with the password (not the browser), or add that scope with cog-cred configure --scopes and sign in again"
        case .allowInsecureHTTP: return "; use https://, or allow it for this profile with: cog-cred configure --allow-insecure-http"
        case .setLoopbackRedirectURI: return " (configure --redirect-uri)"
        case .trustPrivateCA(let bundle):
            // Never ask for what is already set: name the file in use, and
            // what chose it, and what would change it.
            switch bundle.source {
            case .system:
                return "; it was checked against \(bundle.described): if a private CA signed it, set AWS_CA_BUNDLE or cog-cred configure --ca-bundle FILE"
            case .profile:
                return "; it was checked against \(bundle.described): check that this file holds the CA that signed the endpoint's certificate"
            case .environment:
                return "; it was checked against \(bundle.described): check that this file holds the CA that signed the endpoint's certificate, or unset AWS_CA_BUNDLE"
            }
        case .checkProxy(let variable?):
            return "; check the proxy URL in \(variable), user name and password (http://USER:PASSWORD@HOST:PORT, percent-encoded)"
        case .checkProxy(nil): return "; check the proxy variables (HTTPS_PROXY, ALL_PROXY)"
        case .chooseFIPSRegion:
            return "; FIPS endpoints are in \(AWSEndpoints.fipsRegionsInWords): use one of those regions, or turn FIPS off (configure --no-fips, AWS_USE_FIPS_ENDPOINT=false)"
        case .chooseAnotherPort:
            return ": close it, or use another port with cog-cred configure --redirect-uri http://localhost:PORT/callback (and add that URL to the app client's callback URLs)"
        }
    }

    /// The option (with its value) that answers a challenge without a terminal.
    static func option(_ input: ChallengeInput) -> String {
        switch input {
        case .password: return "--password-stdin"
        case .newPassword: return "--new-password-stdin"
        case .mfaCode: return "--mfa-code"
        case .signInCode: return "--code"
        case .customAnswer: return "--answer -"
        case .signInMethod(let methods): return "--method \(methods.map(\.rawValue).joined(separator: "|"))"
        case .mfaKind(let kinds): return "--mfa-type \(kinds.map(\.rawValue).joined(separator: "|"))"
        case .authenticatorFirstCode(let needsURI, let needsCode, let codeOption):
            let uri = needsURI ? ["--print-uri (its otpauth:// URI, on standard output, holds the secret the code is made from)"] : []
            let code = needsCode ? ["\(codeOption == .mfaCode ? "--mfa-code" : "--code") -"] : []
            return (uri + code).joined(separator: " and ")
        }
    }

    /// setup-git's failures whose way out is its own option or the command
    /// again; any other setup failure's own message.
    static func line(setup error: SetupError) -> String {
        switch error.reason {
        case .repositoryScopeOutsideRepository:
            return "--local writes the repository's .git/config: run it inside a git repository, or leave --local out for your global git configuration"
        case .helpersCleared(let host, let failure):
            return "\(failure) (the helpers for https://\(host) are now cleared; run setup-git again)"
        case nil: return error.message
        }
    }

    /// The option's name is the command line's, so the whole line is worded here.
    static func line(attribute error: AttributeError) -> String {
        switch error {
        case .notNameValue: return "--attribute takes name=value, such as name=Alice"
        case .emptyName: return "--attribute takes name=value with a non-empty name"
        }
    }
}
