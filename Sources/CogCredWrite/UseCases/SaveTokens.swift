// Storing what Cognito returned, in an order an interruption cannot break.

extension StoredSession {
    /// Stores a Cognito result: checks every token first, then writes refresh,
    /// ID, access in that order, so an interruption at any point leaves a
    /// usable refresh token. A result without a refresh token keeps the old one.
    /// A sign-in (`requireRefreshToken`) stores `device`, the device its
    /// session is bound to, first (a refresh needs it), or deletes the
    /// profile's device when there is none: it may be another user's.
    func save(_ result: AuthenticationResult, requireRefreshToken: Bool, device: RememberedDevice? = nil) throws -> RefreshedTokens {
        guard let access = IssuedToken(result.accessToken) else { throw AuthError.malformedToken(.access) }
        var id: IssuedToken? = nil
        if let idToken = result.idToken {
            guard let token = IssuedToken(idToken) else { throw AuthError.malformedToken(.id) }
            id = token
        }
        let newRefresh = result.refreshToken.flatMap { $0.isEmpty ? nil : $0 }
        if requireRefreshToken && newRefresh == nil {
            throw AuthError.cognito(.badResponse(httpStatus: 200, detail: "no refresh token in the answer"), operation: .signIn)
        }
        let context = ItemContext(
            userPoolID: profile.userPoolID, clientID: profile.clientID,
            username: access.claims.subjectName ?? id?.claims.subjectName)
        let tokens = RefreshedTokens(access: access, id: id)
        if requireRefreshToken {
            // A sign-in, perhaps of another user: the identity pool's items
            // are the previous user's (their identity and IAM credentials),
            // and go before anything of the new session is stored.
            try store.delete(.awsCredentials, profile: profileName)
            try store.delete(.identityID, profile: profileName)
            if let device {
                try storeDevice(device, username: context.username)
            } else {
                try store.delete(.device, profile: profileName)
            }
        }
        if let newRefresh {
            if requireRefreshToken {
                try store.write(.refresh, profile: profileName, secret: newRefresh, context: context)
            } else if !storeRotatedRefreshToken(newRefresh, context) {
                // The old refresh token is spent and the new one is not
                // stored: the session ends when these tokens expire. Hand
                // them out anyway (the keyring may have been only slow), and
                // store what can be stored.
                warn("cog-cred: warning: the new refresh token could not be stored in the Secret Service; these tokens work until they expire, then sign in again")
                if let id { try? store.write(.id, profile: profileName, secret: id.value, context: context) }
                try? store.write(.access, profile: profileName, secret: access.value, context: context)
                return tokens
            }
        }
        if let id {
            try store.write(.id, profile: profileName, secret: id.value, context: context)
        } else if requireRefreshToken {
            // A new sign-in without an ID token must not leave the previous user's.
            try store.delete(.id, profile: profileName)
        }
        try store.write(.access, profile: profileName, secret: access.value, context: context)
        return tokens
    }

    /// Stores a rotated refresh token, the only copy of the session there
    /// is: a failed or timed-out write is tried again with a longer time
    /// limit, and the result read back. True when it is in the store.
    func storeRotatedRefreshToken(_ token: String, _ context: ItemContext) -> Bool {
        if (try? store.write(.refresh, profile: profileName, secret: token, context: context)) != nil { return true }
        guard (try? store.writePatiently(.refresh, profile: profileName, secret: token, context: context)) != nil else {
            return false
        }
        return (try? store.read(.refresh, profile: profileName, binding: context.binding)) == token
    }
}
