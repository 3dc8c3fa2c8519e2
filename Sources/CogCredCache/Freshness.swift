/// When a token is too close to its expiry to hand out: the one rule, used
/// by the fast path and by the token manager alike.
///
/// The margin is the larger of 60 seconds and 10% of the token's lifetime,
/// so a caller always gets a token that outlives a slow request; `--min-ttl`
/// replaces it.
public enum Freshness {
    public static let minimumMargin: Int64 = 60

    public static func margin(exp: Int64?, iat: Int64?, minTTL: Int64?) -> Int64 {
        if let minTTL { return minTTL }
        guard let exp, let iat, exp > iat else { return minimumMargin }
        return max(minimumMargin, (exp - iat) / 10)
    }

    /// True when a token can be handed out as it is.
    public static func isUsable(exp: Int64?, iat: Int64?, minTTL: Int64?, now: Int64) -> Bool {
        guard let exp else { return false }
        return exp - now > margin(exp: exp, iat: iat, minTTL: minTTL)
    }
}
