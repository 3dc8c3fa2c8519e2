import Testing
import CogCredTestSupport
@testable import CogCredWrite

/// `configure`'s rule for what a changed profile leaves behind, case by case.
@Suite struct ProfileChangeTests {
    static let old: Profile = {
        var profile = Profile(userPoolID: "us-east-1_Old", clientID: "oldclient")
        profile.endpointURL = "https://cognito.example"
        profile.domain = "https://auth.example"
        profile.identityPoolID = "us-east-1:11111111-1111-1111-1111-111111111111"
        profile.roleARN = "arn:aws:iam::123456789012:role/Old"
        profile.clientSecretInKeyring = true
        return profile
    }()

    static let endsSession = ProfileChange(endsSession: true, dropsClientSecret: true)
    static let endsSessionKeepingSecret = ProfileChange(endsSession: true)
    static let dropsAWSCredentials = ProfileChange(dropsAWSCredentials: true)

    /// (what changes, what must go)
    static let cases: [(String, @Sendable (inout Profile) -> Void, ProfileChange)] = [
        ("nothing", { _ in }, ProfileChange()),
        ("the username", { $0.username = "someone" }, ProfileChange()),
        ("the timeouts", { $0.commandTimeout = 5 }, ProfileChange()),
        ("the git URLs", { $0.gitURLs = ["https://git.example/"] }, ProfileChange()),
        ("the scopes", { $0.scopes = ["openid"] }, ProfileChange()),
        ("the auth flow", { $0.authFlow = "srp" }, ProfileChange()),
        ("the user pool", { $0.userPoolID = "us-east-1_New" }, endsSession),
        ("the app client", { $0.clientID = "newclient" }, endsSession),
        ("the endpoint", { $0.endpointURL = nil }, endsSessionKeepingSecret),
        ("the domain", { $0.domain = "https://other.example" }, endsSessionKeepingSecret),
        ("the grant", { $0.grant = Grant.clientCredentials.rawValue }, endsSessionKeepingSecret),
        ("the identity pool", { $0.identityPoolID = nil }, dropsAWSCredentials),
        ("the role", { $0.roleARN = "arn:aws:iam::123456789012:role/New" }, dropsAWSCredentials),
        ("the basic flow", { $0.basicFlow = true }, dropsAWSCredentials),
        // A new session already loses its AWS credentials with its tokens.
        ("the pool and the identity pool", { $0.userPoolID = "us-east-1_New"; $0.identityPoolID = nil }, endsSession),
    ]

    @Test(arguments: cases.indices)
    func whatAChangeLeavesBehind(_ index: Int) {
        let (what, change, expected) = Self.cases[index]
        var new = Self.old
        change(&new)
        #expect(ProfileChange(from: Self.old, to: new, newClientSecret: false) == expected, "changing \(what)")
    }

    @Test func aNewClientSecretStaysWithTheNewClient() {
        var new = Self.old
        new.clientID = "newclient"
        #expect(ProfileChange(from: Self.old, to: new, newClientSecret: true) == Self.endsSessionKeepingSecret)
    }

    @Test func withoutAStoredSecretThereIsNoneToDrop() {
        var old = Self.old
        old.clientSecretInKeyring = nil
        var new = old
        new.userPoolID = "us-east-1_New"
        #expect(ProfileChange(from: old, to: new, newClientSecret: false) == Self.endsSessionKeepingSecret)
    }

    @Test func aNewProfileLeavesNothing() {
        #expect(ProfileChange(from: nil, to: Self.old, newClientSecret: false) == ProfileChange())
    }
}
