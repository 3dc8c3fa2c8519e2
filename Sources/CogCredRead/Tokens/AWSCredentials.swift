/// Temporary AWS credentials from a Cognito identity pool, as kept in the
/// Secret Service (`kind=aws-credentials`, a JSON secret) and as printed for
/// the AWS CLI's and SDKs' `credential_process`.
public struct AWSCredentials: Sendable, Equatable {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String
    /// Seconds since the epoch.
    public var expiration: Int64
    /// The identity pool they came from: credentials of another pool than
    /// the profile names now are never handed out.
    public var identityPoolID: String
    /// The `sub` of the ID token they were fetched with: credentials of
    /// another user than the one whose ID token is stored now are never
    /// handed out (the items are the profile's, the IAM role the user's).
    public var subject: String

    public init(
        accessKeyID: String, secretAccessKey: String, sessionToken: String, expiration: Int64, identityPoolID: String, subject: String
    ) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
        self.identityPoolID = identityPoolID
        self.subject = subject
    }

    /// From the stored secret; nil when it is not one cog-cred wrote (items
    /// written before credentials carried their user's `sub` included: they
    /// are fetched again).
    public init?(stored text: String) {
        guard case .object(let members)? = JSONValue.parse(Array(text.utf8)),
            case .string(let key)? = members["AccessKeyId"], case .string(let secret)? = members["SecretAccessKey"],
            case .string(let session)? = members["SessionToken"], case .string(let pool)? = members["IdentityPoolId"],
            case .int(let expiration)? = members["Expiration"], case .string(let subject)? = members["Sub"],
            !key.isEmpty, !secret.isEmpty, !session.isEmpty, !subject.isEmpty
        else { return nil }
        self.init(
            accessKeyID: key, secretAccessKey: secret, sessionToken: session, expiration: expiration, identityPoolID: pool,
            subject: subject)
    }

    /// What `init?(found:identityPoolID:)` needs read, in one call.
    public static let kinds: [SecretKind] = [.awsCredentials, .id]

    /// The stored credentials that belong to the profile as it is now: in
    /// cog-cred's shape, from the identity pool it names, and fetched for the
    /// user whose ID token is stored (read bound to the profile's pool and
    /// client). Fresh or not: the caller decides. The one rule both binaries
    /// and `status` apply.
    public init?(found: [SecretKind: StoredSecret], identityPoolID: String?) {
        guard case .found(let text)? = found[.awsCredentials], let credentials = AWSCredentials(stored: text),
            credentials.identityPoolID == identityPoolID,
            let subject = found[.id]?.value.flatMap(IssuedToken.init)?.claims.sub, credentials.subject == subject
        else { return nil }
        self = credentials
    }

    /// The secret as stored.
    public var stored: String {
        JSONValue.object([
            "AccessKeyId": .string(accessKeyID), "SecretAccessKey": .string(secretAccessKey), "SessionToken": .string(sessionToken),
            "Expiration": .int(expiration), "IdentityPoolId": .string(identityPoolID), "Sub": .string(subject),
        ]).compactText
    }

    /// The credential_process object (Version 1; Expiration in ISO 8601 UTC),
    /// exactly what the AWS CLI and SDKs read.
    public var credentialProcess: String {
        JSONValue.object([
            "Version": .int(1), "AccessKeyId": .string(accessKeyID), "SecretAccessKey": .string(secretAccessKey),
            "SessionToken": .string(sessionToken), "Expiration": .string(rfc3339(expiration)),
        ]).compactText
    }

    /// More than `margin` seconds left at `now` (saturating: a far-future
    /// expiration cannot overflow).
    public func isFresh(now: Int64, margin: Int64) -> Bool {
        let (left, overflow) = expiration.subtractingReportingOverflow(now)
        return expiration > now && (overflow || left > margin)
    }

    /// What `exec --aws` sets.
    public var environment: [(String, String)] {
        [
            ("AWS_ACCESS_KEY_ID", accessKeyID), ("AWS_SECRET_ACCESS_KEY", secretAccessKey), ("AWS_SESSION_TOKEN", sessionToken),
            // The SDKs (botocore, the JS and Java SDKs) read it to know when the keys run out.
            ("AWS_CREDENTIAL_EXPIRATION", rfc3339(expiration)),
        ]
    }

    /// The margin `aws-credentials` keeps unless --min-ttl says otherwise.
    public static let defaultMinTTL: Int64 = 300
}
