// Which way `sign-in` goes: the command line's choices over the profile's.

/// How a profile signs in this time.
public enum SignInWay: Sendable, Equatable {
    /// A machine profile: its first access token from the token endpoint
    /// (`refresh`), with no user and no password.
    case clientCredentials
    /// Through the pool's managed login (`signInWithBrowser`).
    case browser
    /// Through Cognito's API (`signIn(username:password:flow:...)`) in
    /// `flow`, asking first for `method` in the choice flow.
    case api(AuthFlow, method: SignInMethod?)
}

extension TokenManager {
    /// `flow`, `method` and `browser` are this sign-in's own, given over
    /// the profile's settings; a method alone means the choice flow.
    public func signInWay(flow: AuthFlow?, method: SignInMethod?, browser: Bool) -> SignInWay {
        if profile.effectiveGrant == .clientCredentials { return .clientCredentials }
        let flow = flow ?? (method != nil ? .choice : profile.effectiveAuthFlow)
        if browser || flow == .browser { return .browser }
        return .api(flow, method: method ?? (flow == .choice ? profile.method.flatMap(SignInMethod.init(rawValue:)) : nil))
    }
}

extension AuthFlow {
    /// The password is read before anything is sent, so a mistyped one costs
    /// no request; the choice flow reads it only if the method needs one (a
    /// one-time code needs none), the custom flow never.
    public var readsPasswordFirst: Bool { self != .choice && self != .custom }
}
