import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One thing `status --verify` checked, and what it found.
public struct VerificationCheck: Sendable, Equatable {
    public var name: String
    public var passed: Bool
    public var detail: String
}

/// Checks stored tokens the way an API that receives them would: the RS256
/// signature against the pool's published keys (JWKS), then issuer,
/// token_use, client and expiry.
public struct TokenVerifier: Sendable {
    /// The pool's endpoint's connection (plain HTTP if it was allowed to be).
    let retrying: RetryingPost

    public init(allowsCleartext: Bool = false, connection: Connection) {
        retrying = connection.post(allowsCleartext: allowsCleartext)
    }

    /// With a connection of its own.
    public init(
        transport: any HTTPTransport = CurlTransport(), timeouts: Timeouts, deadline: Deadline, caBundle: CABundle = .system,
        allowsCleartext: Bool = false, retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.init(
            allowsCleartext: allowsCleartext,
            connection: Connection(transport: transport, timeouts: timeouts, deadline: deadline, caBundle: caBundle, retryPolicy: retryPolicy))
    }

    /// Where a pool publishes its keys, and the issuers its tokens may name.
    public struct PoolKeys: Sendable {
        public var jwksURL: String
        public var issuers: [String]
    }

    /// The keys are below the endpoint, and only the issuer's own keys vouch
    /// for its tokens: for AWS's endpoint, FIPS or not, the issuer is
    /// `https://cognito-idp.<region>.amazonaws.com/<pool id>` (GovCloud's
    /// tokens name it too), and the keys are fetched from the endpoint in
    /// use, so a FIPS profile sends nothing to an ordinary host; a custom
    /// endpoint (an emulator, a proxy) serves keys below itself, and those
    /// keys can only speak for tokens whose `iss` is that same URL. A proxy
    /// or emulator that hands out tokens naming the real AWS issuer cannot
    /// prove them genuine with keys of its own. The keys are fetched with
    /// the endpoint's credentials, if it has any; the issuer, which the
    /// server names without them, has none.
    public static func poolKeys(endpoint: String, profile: Profile) -> PoolKeys {
        let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        let region = profile.effectiveRegion
        let awsEndpoints = [false, true].compactMap { AWSEndpoints.url(.userPools, region: region, fipsAsked: $0) }
        // libcurl's rebuilt URL ends its authority with a "/" the base has not.
        let named = LibcurlURL.shown(base)
        let issuer = awsEndpoints.contains(endpoint)
            ? AWSEndpoints.issuer(region: region, userPoolID: profile.userPoolID)
            : "\(named.hasSuffix("/") && !base.hasSuffix("/") ? String(named.dropLast()) : named)/\(profile.userPoolID)"
        return PoolKeys(jwksURL: "\(base)/\(profile.userPoolID)/.well-known/jwks.json", issuers: [issuer])
    }

    /// The pool's keys: a GET, which only reads, so retried as any request
    /// that may go out twice (RetryingPost).
    public func fetchKeys(_ url: String) throws(CognitoError) -> [JSONWebKey] {
        try retrying.send(
            url, method: "GET", headers: [("Accept", "application/json")], body: Data(), repeatable: true,
            retryIf: { RetryingPost.retries($0, repeatable: true) }
        ) { response throws(CognitoError) in
            guard response.status == 200, let set = try? JSONDecoder().decode(JSONWebKeySet.self, from: response.body) else {
                throw .badResponse(httpStatus: response.status, detail: "no JSON Web Key Set at \(LibcurlURL.shown(url))")
            }
            return set.keys
        }
    }

    /// Every check for one token; the token itself never appears in a detail.
    public func verify(
        _ token: String, kind: SecretKind, keys: [JSONWebKey], issuers: [String], clientID: String, now: Int64
    ) -> [VerificationCheck] {
        var checks: [VerificationCheck] = []
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = JWT.base64URLDecode(parts[0].utf8),
            let header = try? JSONDecoder().decode(JOSEHeader.self, from: Data(headerData)),
            let signature = JWT.base64URLDecode(parts[2].utf8), let claims = try? JWT.claims(of: token)
        else {
            return [VerificationCheck(name: "format", passed: false, detail: "not a readable JWT")]
        }

        if header.alg != "RS256" {
            checks.append(VerificationCheck(name: "signature", passed: false, detail: "algorithm \(header.alg ?? "none"), expected RS256"))
        } else if let key = keys.first(where: { $0.kid == header.kid && $0.kty == "RSA" }),
            let n = key.n.flatMap({ JWT.base64URLDecode($0[...].utf8) }), let e = key.e.flatMap({ JWT.base64URLDecode($0[...].utf8) })
        {
            let input = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
            let n = Array(n), e = Array(e), sig = Array(signature)
            let result = copenssl_rs256_verify(n, n.count, e, e.count, input, input.count, sig, sig.count)
            checks.append(
                VerificationCheck(
                    name: "signature", passed: result == 1,
                    detail: result == 1 ? "RS256, key \(key.kid ?? "?")" : result == 0 ? "does not match key \(key.kid ?? "?")" : "unusable key"))
        } else {
            checks.append(VerificationCheck(name: "signature", passed: false, detail: "no key '\(header.kid ?? "")' in the pool's JWKS"))
        }

        return checks + TokenVerifier.claimChecks(claims, kind: kind, issuers: issuers, clientID: clientID, now: now)
    }

    /// The checks of a token's claims, which need no key: issuer, token_use,
    /// the client (`aud` of an ID token, which may be an array, or
    /// `client_id` of an access token) and expiry. A browser sign-in makes
    /// them of the ID token it is given before storing it (OpenID Connect
    /// Core 3.1.3.7).
    public static func claimChecks(_ claims: JWTClaims, kind: SecretKind, issuers: [String], clientID: String, now: Int64)
        -> [VerificationCheck]
    {
        var checks: [VerificationCheck] = []
        let issuer = claims.issuer ?? ""
        let issuerDetail =
            issuer.isEmpty ? "missing"
            : issuers.contains(issuer) ? issuer : "\(issuer), not \(issuers.joined(separator: " or ")), whose keys were checked"
        checks.append(VerificationCheck(name: "issuer", passed: issuers.contains(issuer), detail: issuerDetail))
        let expectedUse = kind == .id ? "id" : "access"
        checks.append(
            VerificationCheck(name: "token_use", passed: claims.tokenUse == expectedUse, detail: claims.tokenUse ?? "missing"))
        let audiences = kind == .id ? claims.audiences : claims.clientID.map { [$0] } ?? []
        checks.append(
            VerificationCheck(
                name: kind == .id ? "audience" : "client_id", passed: audiences.contains(clientID),
                detail: audiences.isEmpty ? "missing" : audiences.joined(separator: ", ")))
        if let exp = claims.exp {
            checks.append(VerificationCheck(name: "expiry", passed: exp > now, detail: exp > now ? "valid until \(rfc3339(exp))" : "expired \(rfc3339(exp))"))
        } else {
            checks.append(VerificationCheck(name: "expiry", passed: false, detail: "no exp claim"))
        }
        return checks
    }
}

/// One key of a JWKS (RFC 7517); only what RS256 needs.
public struct JSONWebKey: Decodable, Sendable {
    public var kid: String?
    public var kty: String?
    public var n: String?
    public var e: String?
}

struct JSONWebKeySet: Decodable {
    var keys: [JSONWebKey]
}

struct JOSEHeader: Decodable {
    var alg: String?
    var kid: String?
}
