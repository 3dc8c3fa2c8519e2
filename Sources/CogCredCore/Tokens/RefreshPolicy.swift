import CogCredCache

/// When a stored token is too close to its expiry to hand out.
///
/// The margin is the larger of 60 seconds and 10% of the token's lifetime, so
/// a caller always gets a token that outlives a slow request; `--min-ttl`
/// replaces it.
public struct RefreshPolicy: Sendable, Equatable {
    public static let minimumMargin = Freshness.minimumMargin

    /// Seconds of life a token must still have, when the user set it.
    public var minTTL: Int64?

    public init(minTTL: Int64? = nil) {
        self.minTTL = minTTL
    }

    /// The margin for a token with these claims.
    public func margin(for claims: JWTClaims) -> Int64 {
        Freshness.margin(exp: claims.exp, iat: claims.iat, minTTL: minTTL)
    }

    /// True when the token can be handed out as it is.
    public func isUsable(_ claims: JWTClaims, now: Int64) -> Bool {
        Freshness.isUsable(exp: claims.exp, iat: claims.iat, minTTL: minTTL, now: now)
    }
}
