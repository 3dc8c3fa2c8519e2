/// When a stored token is too close to its expiry to hand out: the one rule,
/// for the front binary and cog-cred-cli alike.
///
/// The margin is the larger of 60 seconds and 10% of the token's lifetime, so
/// a caller always gets a token that outlives a slow request; `--min-ttl`
/// replaces it. Claims are clamped when decoded (see `JWTClaims`), so none of
/// this arithmetic can overflow.
public struct RefreshPolicy: Sendable, Equatable {
    public static let minimumMargin: Int64 = 60

    /// Seconds of life a token must still have, when the user set it.
    public var minTTL: Int64?

    public init(minTTL: Int64? = nil) {
        self.minTTL = minTTL
    }

    /// The margin for a token with these claims.
    public func margin(for claims: JWTClaims) -> Int64 {
        if let minTTL { return minTTL }
        guard let exp = claims.exp, let iat = claims.iat, exp > iat else { return Self.minimumMargin }
        return max(Self.minimumMargin, (exp - iat) / 10)
    }

    /// True when the token can be handed out as it is.
    public func isUsable(_ claims: JWTClaims, now: Int64) -> Bool {
        guard let exp = claims.exp else { return false }
        let (left, overflow) = exp.subtractingReportingOverflow(now)
        return !overflow && left > margin(for: claims)
    }
}
