// What the unit tests of both libraries share: fixed JWTs, a clock the
// test sets, the test profile, and folders that a run removes.
import Foundation
import Synchronization
import CogCredRead

/// Folders for tests that need real files, all inside one folder of this
/// test process, removed when it exits: a run leaves nothing behind in /tmp.
public enum TestDirectories {
    public static let root: String = {
        let path = NSTemporaryDirectory() + "cog-cred-unit-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestDirectories.root) }
        return path
    }()

    /// A new path under the root (not created).
    public static func path(_ name: String) -> String {
        root + "/\(name)-\(UUID().uuidString)"
    }
}

/// A clock the test sets.
public final class FakeClock: Clock {
    private let current: Mutex<Int64>
    public init(_ now: Int64) { current = Mutex(now) }
    public func now() -> Int64 { current.withLock { $0 } }
    public func advance(_ seconds: Int64) { current.withLock { $0 += seconds } }
}

/// Makes unsigned-but-well-formed JWTs with the claims a test needs.
public enum TestJWT {
    public static func make(_ claims: [String: Any]) -> String {
        func b64url(_ data: Data) -> String {
            data.base64EncodedString()
                .replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = try! JSONSerialization.data(withJSONObject: ["alg": "RS256", "kid": "test", "typ": "JWT"])
        let payload = try! JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        return "\(b64url(header)).\(b64url(payload)).c2lnbmF0dXJl"
    }

    public static func access(iat: Int64, lifetime: Int64, username: String = "alice", jti: String = UUID().uuidString) -> String {
        make([
            "iat": iat, "exp": iat + lifetime, "username": username, "token_use": "access", "jti": jti,
            "iss": "https://cognito-idp.us-east-1.amazonaws.com/\(testProfile.userPoolID)", "client_id": testProfile.clientID,
        ])
    }

    public static func id(iat: Int64, lifetime: Int64, username: String = "alice", jti: String = UUID().uuidString) -> String {
        make([
            "iat": iat, "exp": iat + lifetime, "cognito:username": username, "sub": "sub-of-\(username)", "token_use": "id",
            "email": "alice@example.com",
            "jti": jti, "iss": "https://cognito-idp.us-east-1.amazonaws.com/\(testProfile.userPoolID)", "aud": testProfile.clientID,
        ])
    }
}

public let testProfile = Profile(userPoolID: "us-east-1_Test", clientID: "client123")

public let context = ItemContext(userPoolID: "us-east-1_Test", clientID: "client123", username: "alice")
