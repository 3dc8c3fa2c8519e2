extension TokenManager {
    /// Temporary AWS credentials from the profile's identity pool: the
    /// stored ones while they have more than `margin` seconds left, else new
    /// ones for the user's ID token (refreshed first when it is within its
    /// own margin), so they keep coming for as long as the refresh token
    /// works. The fetch happens under the profile's refresh lock: a burst of
    /// `aws` commands makes one GetCredentialsForIdentity, the rest read what
    /// it stored.
    public func awsCredentials(margin: Int64 = AWSCredentials.defaultMinTTL) throws -> AWSCredentials {
        guard let poolID = profile.identityPoolID else { throw ConfigError.missingIdentityPool(profile: profileName) }
        let stored = { () throws -> AWSCredentials? in
            let found = try store.read(AWSCredentials.kinds, profile: profileName, binding: profile.binding)
            guard let credentials = AWSCredentials(found: found, identityPoolID: poolID),
                credentials.isFresh(now: clock.now(), margin: margin)
            else { return nil }
            return credentials
        }
        if let found = try stored() { return found }
        // The user's ID token, refreshed first when it is within its margin,
        // by whoever keeps the session (here, or an agent), before the lock.
        let idToken = try currentToken(.id)
        return try lock.withLock(profile: profileName) {
            if let found = try stored() { return found }
            return try fetchAWSCredentials(poolID: poolID, idToken: idToken)
        }
    }

    /// The key the identity pool knows the user pool by.
    var identityProviderName: String { "cognito-idp.\(profile.effectiveRegion).amazonaws.com/\(profile.userPoolID)" }

    func fetchAWSCredentials(poolID: String, idToken: IssuedToken) throws -> AWSCredentials {
        guard let makeIdentity else { throw ConfigError.missingIdentityPool(profile: profileName) }
        // Whose credentials they are: stored with them, checked at every read.
        guard let subject = idToken.claims.sub, !subject.isEmpty else { throw AuthError.malformedToken(.id) }
        let logins = [identityProviderName: idToken.value]
        let identity = try makeIdentity()
        store.prepareWrites()
        let context = ItemContext(userPoolID: profile.userPoolID, clientID: profile.clientID, username: idToken.claims.subjectName)
        func call<T>(_ body: () throws(CognitoError) -> T) throws(AuthError) -> T {
            do {
                return try body()
            } catch {
                throw .cognito(error, operation: .awsCredentials)
            }
        }
        // The identity id is the user's for good: asked for once, kept.
        var identityID = try store.read(.identityID, profile: profileName, binding: profile.binding)
        var fetched: (accessKeyID: String, secretAccessKey: String, sessionToken: String, expiration: Int64)? = nil
        for attempt in 0..<2 {
            let id: String
            if let known = identityID {
                id = known
            } else {
                id = try call { () throws(CognitoError) in try identity.getID(poolID: poolID, logins: logins) }
                try store.write(.identityID, profile: profileName, secret: id, context: context)
            }
            do {
                if profile.basicFlow == true, let role = profile.roleARN {
                    fetched = try identity.basicFlowCredentials(identityID: id, logins: logins, roleARN: role, sessionName: "cog-cred")
                } else {
                    fetched = try identity.credentials(identityID: id, logins: logins, roleARN: profile.roleARN)
                }
                break
            } catch where error.isNotFound && identityID != nil && attempt == 0 {
                // The stored identity is gone (deleted in the pool): ask for the user's identity again, once.
                identityID = nil
            } catch {
                throw AuthError.cognito(error, operation: .awsCredentials)
            }
        }
        guard let fetched else { throw AuthError.cognito(.badResponse(httpStatus: 200, detail: "no credentials"), operation: .awsCredentials) }
        let credentials = AWSCredentials(
            accessKeyID: fetched.accessKeyID, secretAccessKey: fetched.secretAccessKey, sessionToken: fetched.sessionToken,
            expiration: fetched.expiration, identityPoolID: poolID, subject: subject)
        try store.write(.awsCredentials, profile: profileName, secret: credentials.stored, context: context)
        return credentials
    }
}
