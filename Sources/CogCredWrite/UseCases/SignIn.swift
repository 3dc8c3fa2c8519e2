// Sign-in as a story: begin (SRP, the password, a one-time code, the pool's
// own challenges), answer each challenge Cognito sends, store the tokens,
// then make this machine the user's device. Cognito's own words for all of
// it are CognitoWire's; the people's answers come through ChallengeAnswers.

extension TokenManager {
    /// At most this many challenges in one sign-in (new password, then
    /// MFA choice, then MFA code is the longest built-in sequence; a pool's
    /// custom challenges may ask more rounds).
    static let maxChallenges = 16

    /// Signs in, answers every challenge Cognito sends, and stores the three
    /// tokens. Nothing is stored unless the whole sign-in succeeds.
    @discardableResult
    public func signIn(
        username: String, password: String, flow: AuthFlow = .srp, device options: DeviceOptions = DeviceOptions(),
        answers: any ChallengeAnswers
    ) throws -> RefreshedTokens {
        try signIn(username: username, password: { password }, flow: flow, device: options, answers: answers)
    }

    /// The same, asking for the password only when a step needs it: a
    /// choice-based sign-in with a one-time code needs none. `method` is
    /// the choice flow's preferred first factor.
    ///
    /// On a pool that tracks devices, this machine signs in as the user's
    /// device when it is one (a remembered device skips MFA), and becomes
    /// one when Cognito offers (DeviceConfirmation). A device Cognito no
    /// longer knows is deleted and the sign-in made again without it.
    @discardableResult
    public func signIn(
        username: String, password readPassword: () throws -> String, flow: AuthFlow, method: SignInMethod? = nil,
        device options: DeviceOptions = DeviceOptions(), answers: any ChallengeAnswers
    ) throws -> RefreshedTokens {
        store.prepareWrites()
        let cognito: any CognitoSignIn & CognitoDevices = try makeCognito()
        var typed: String? = nil
        func password() throws -> String {
            if let typed { return typed }
            let read = try readPassword()
            typed = read
            return read
        }
        // Only the same user's confirmed device is offered to Cognito.
        var device = try stored.rememberedDevice().flatMap { $0.confirmed && $0.belongs(to: username) ? $0 : nil }
        // The keyring was read (unlocked, or found locked: 69) before the
        // password is asked for; the password before anything is sent.
        if flow.readsPasswordFirst { _ = try password() }
        var result: (tokens: AuthenticationResult, provedDevice: Bool, askedMFA: Bool)
        var restarts = 0
        while true {
            do {
                result = try authenticate(
                    cognito, username: username, password: password, flow: flow, method: method, device: device, answers: answers)
                break
            } catch is DeviceRefused {
                warn("cog-cred: Cognito no longer knows this machine as a device of \(username) (forgotten elsewhere?); signing in without it")
                if let refused = device { try stored.changeDevice(ifStill: refused.key, to: nil) }
                device = nil
            } catch let ended as SessionEnded {
                // Where Cognito's session takes no other answer, the sign-in
                // starts over, with the password already typed.
                restarts += 1
                guard let again = RefusedAnswer(ended.cause, input: ended.input, nextTry: restarts + 1), answers.mayAnswerAgain(again)
                else { throw ended.cause }
            }
        }
        let sessionDevice = sessionDevice(result.tokens, used: device, signInName: username, name: options.name)
        // Under the refresh lock, so a refresh running now cannot store the
        // old session's tokens over the new ones.
        var tokens = try lock.withLock(profile: profileName) {
            try stored.save(result.tokens, requireRefreshToken: true, device: sessionDevice.stored)
        }
        tokens.device = finishDevice(
            sessionDevice, accessToken: result.tokens.accessToken, provedDevice: result.provedDevice, askedMFA: result.askedMFA,
            cognito: cognito, options: options, answers: answers)
        return tokens
    }

    /// An answer ended the sign-in's session (RefusedAnswer.Problem.sessionEnded).
    struct SessionEnded: Error {
        var cause: any Error
        var input: ChallengeInput
    }

    /// Begins the sign-in and answers every challenge up to the tokens;
    /// whether the device answered its challenges (and so proved itself) on
    /// the way, and whether the user was asked for MFA (a second factor, or
    /// setting one up).
    func authenticate(
        _ cognito: any CognitoSignIn, username: String, password: () throws -> String, flow: AuthFlow, method: SignInMethod?,
        device: RememberedDevice?, answers: any ChallengeAnswers
    ) throws -> (tokens: AuthenticationResult, provedDevice: Bool, askedMFA: Bool) {
        var srp: SRPClient? = nil
        var deviceSRP: SRPClient? = nil
        func newSRP() throws -> String {
            let client = try SRPClient()
            srp = client
            return client.publicA
        }
        /// One ceremony, made when a passkey is chosen (a profile with no
        /// relying party refused before anything is sent) and used to answer.
        var madeCeremony: PasskeyCeremony? = nil
        func ceremony() throws -> PasskeyCeremony {
            if let madeCeremony { return madeCeremony }
            let made = try passkeyCeremony(prompts: answers)
            madeCeremony = made
            return made
        }
        /// A first factor of choice, with what it sends. The password is read
        /// before anything is sent: one that cannot be read must not leave a
        /// challenge begun.
        func factor(_ method: SignInMethod) throws -> FirstFactor {
            switch method {
            case .password: return .password(try password())
            case .srp:
                _ = try password()
                return .srp(srpA: try newSRP())
            case .emailOTP: return .emailOTP
            case .smsOTP: return .smsOTP
            case .passkey:
                _ = try ceremony()
                return .passkey
            }
        }
        let start: SignInStart
        switch flow {
        case .srp: start = .srp(srpA: try newSRP())
        case .password: start = .password(try password())
        case .choice: start = .choice(try method.map(factor))
        case .custom: start = .custom(srpA: nil)
        case .customSRP:
            // Amplify's custom flow with SRP: the password proved first, then the pool's challenges.
            _ = try password()
            start = .custom(srpA: try newSRP())
        case .browser: throw AuthError.unsupportedChallenge("the browser flow")
        }
        var outcome = try signInCall(offeringDevice: device != nil) { () throws(CognitoError) in
            try cognito.startSignIn(start, username: username, deviceKey: device?.key)
        }

        var userID = username
        // A one-time code chosen as the first factor is still to come.
        var codeSignsIn = flow == .choice && (method == .emailOTP || method == .smsOTP)
        var askedMFA = false
        // Answers refused while the session takes another (RefusedAnswer).
        var refused = 0
        for _ in 0..<(TokenManager.maxChallenges + RefusedAnswer.tries) {
            guard case .challenge(var pending) = outcome else { break }
            // Every answer names the user as Cognito knows them (not an alias they typed).
            userID = pending.userID ?? userID
            let unsupported = AuthError.unsupportedChallenge(pending.name)
            let answer: ChallengeAnswer
            // What gives the answer a person may give again (RefusedAnswer).
            var asked: ChallengeInput? = nil
            switch pending.challenge {
            case .passwordVerifier(let step):
                guard let srp else { throw unsupported }
                let poolName = SRPClient.poolName(userPoolID: profile.userPoolID)
                answer = .passwordProof(
                    try srp.proof(step, poolName: poolName, userID: step.userID ?? userID, password: try password(), now: clock.now()))
            case .deviceSRP:
                // A remembered device proves its own password, by SRP, instead of the user answering MFA.
                guard device != nil else { throw unsupported }
                let client = try SRPClient()
                deviceSRP = client
                answer = .deviceSRP(srpA: client.publicA)
            case .devicePasswordVerifier(let step):
                guard let device, let deviceSRP else { throw unsupported }
                answer = .passwordProof(
                    try deviceSRP.proof(step, poolName: device.groupKey, userID: device.key, password: device.password, now: clock.now()))
            case .chooseSignInMethod(let methods):
                // Only when asked for: offered to an SRP profile, answering
                // "password" would send the password to whoever asked.
                guard flow == .choice else { throw unsupported }
                let chosen = try answers.chooseSignInMethod(from: methods)
                codeSignsIn = chosen == .emailOTP || chosen == .smsOTP
                answer = .signInMethod(try factor(chosen))
            case .oneTimeCode(let kind, let destination) where codeSignsIn || kind == .sms:
                codeSignsIn = false
                asked = .signInCode
                answer = .code(try answers.signInCode(kind, destination: destination))
            case .oneTimeCode(let kind, let destination), .mfaCode(let kind, let destination):
                askedMFA = true
                asked = .mfaCode
                answer = .code(try answers.mfaCode(kind, destination: destination))
            case .chooseMFA(let options):
                guard !options.isEmpty else { throw unsupported }
                askedMFA = true
                answer = .mfa(try answers.chooseMFA(from: options))
            case .newPassword(let required):
                if !required.isEmpty { throw AuthError.requiredAttributes(required) }
                asked = .newPassword
                answer = .newPassword(try answers.newPassword(for: userID))
            case .custom(let parameters):
                // The pool's Lambda triggers ask; the public parameters are shown.
                asked = .customAnswer
                answer = .custom(try answers.customAnswer(parameters))
            case .setUpMFA(let kinds):
                guard kinds?.contains(.totp) ?? true else { throw unsupported }
                askedMFA = true
                pending.session = try setUpAuthenticator(cognito, session: pending.session, userID: userID, answers: answers)
                answer = .mfaSetUp
            case .passkey(let options):
                // Only for a passkey chosen (or preferred) as the first factor.
                guard flow == .choice, let options else { throw unsupported }
                // The relying party before the options: as when it is chosen.
                answer = .passkey(credential: try ceremony().signIn(try options.get(), username: userID))
            case .unknown:
                throw unsupported
            }
            let answering = pending
            let name = userID
            do {
                outcome = try signInCall(pending.challenge, offeringDevice: device != nil) { () throws(CognitoError) in
                    try cognito.respond(to: answering, with: answer, username: name, deviceKey: device?.key)
                }
                refused = 0
            } catch {
                // The same challenge again, its session as it was, when
                // Cognito takes another answer and one can be had.
                guard let asked, let again = RefusedAnswer(error, input: asked, nextTry: refused + 2) else { throw error }
                // Over: the whole sign-in again (signIn), if it may be.
                if again.problem == .sessionEnded { throw SessionEnded(cause: error, input: asked) }
                guard answers.mayAnswerAgain(again) else { throw error }
                refused += 1
                // A first factor's code is asked for as one again.
                if asked == .signInCode { codeSignsIn = true }
            }
        }
        guard case .authenticated(let result) = outcome else {
            throw AuthError.cognito(.badResponse(httpStatus: 200, detail: "too many challenges"), operation: .signIn)
        }
        return (result, deviceSRP != nil, askedMFA)
    }
}
