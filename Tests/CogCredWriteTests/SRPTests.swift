import Foundation
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

/// Inputs and pycognito's outputs, from Fixtures/make-srp-vectors.py.
struct SRPVector: Decodable, CustomTestStringConvertible {
    var pool_id, private_a, public_a, salt, srp_b, user_id, password, secret_block, timestamp, signature: String
    var testDescription: String { "\(pool_id) \(user_id)" }
}

let srpVectors: [SRPVector] = {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/srp-vectors.json")
    return try! JSONDecoder().decode([SRPVector].self, from: Data(contentsOf: path))
}()

@Suite struct SRPTests {
    @Test func thereAreManyVectors() {
        #expect(srpVectors.count >= 52)
        // The shapes that read differently as text and as numbers are there.
        #expect(srpVectors.contains { $0.salt.hasPrefix("-") })
        #expect(srpVectors.contains { $0.salt.hasPrefix("007") })
        #expect(srpVectors.contains { $0.srp_b.hasPrefix("-") })
    }

    @Test(arguments: srpVectors)
    func agreesWithPycognito(_ v: SRPVector) throws {
        let client = try SRPClient(privateHex: v.private_a)
        #expect(client.publicA == v.public_a)
        let poolName = String(v.pool_id.split(separator: "_")[1])
        let signature = try client.passwordSignature(
            poolName: poolName, userID: v.user_id, password: v.password, saltHex: v.salt, serverBHex: v.srp_b,
            secretBlock: v.secret_block, timestamp: v.timestamp)
        #expect(signature == v.signature)
    }

    @Test func aWrongPasswordGivesAnotherSignature() throws {
        let v = srpVectors[0]
        let client = try SRPClient(privateHex: v.private_a)
        let signature = try client.passwordSignature(
            poolName: String(v.pool_id.split(separator: "_")[1]), userID: v.user_id, password: v.password + "x",
            saltHex: v.salt, serverBHex: v.srp_b, secretBlock: v.secret_block, timestamp: v.timestamp)
        #expect(signature != v.signature)
    }

    @Test func refusesAServerValueThatIsZeroModuloN() throws {
        let client = try SRPClient()
        #expect(throws: SRPError.malformed("SRP_B")) {
            try client.passwordSignature(
                poolName: "p", userID: "u", password: "pw", saltHex: "ab", serverBHex: SRPClient.nHex,
                secretBlock: "AAAA", timestamp: "t")
        }
        #expect(throws: SRPError.malformed("SRP_B")) {
            try client.passwordSignature(poolName: "p", userID: "u", password: "pw", saltHex: "ab", serverBHex: "zz", secretBlock: "AAAA", timestamp: "t")
        }
    }

    @Test func freshClientsDiffer() throws {
        #expect(try SRPClient().publicA != SRPClient().publicA)
    }

    @Test func timestampsLookLikeCognitos() {
        // 2026-11-06T04:03:01Z: the day has no leading zero, the hour keeps its.
        #expect(SRPClient.timestamp(1_793_937_781) == "Fri Nov 6 04:03:01 UTC 2026")
        #expect(SRPClient.timestamp(1_795_813_509) == "Fri Nov 27 21:05:09 UTC 2026")
    }

    @Test func padsHexLikeCognito() {
        #expect(SRPClient.padHex("abc") == "0abc")
        #expect(SRPClient.padHex("7f") == "7f")
        #expect(SRPClient.padHex("80") == "0080")
        #expect(SRPClient.padHex("F0") == "00F0")
    }

    /// The examples in amazon-cognito-identity-js's own padHex comment,
    /// plus the leading zeros it drops by reading the text as a number.
    @Test func padsChallengeNumbersAsTheJavaScriptSDKDoes() {
        let cases = [
            ("-ec", "ff14"), ("14", "14"), ("-c8", "ff38"), ("38", "38"), ("-14", "ec"), ("ec", "00ec"), ("-38", "c8"),
            ("c8", "00c8"), ("-80", "80"), ("-8000", "8000"), ("-1", "ff"), ("-100", "ff00"), ("007f", "7f"),
            ("0007f", "7f"), ("000f12", "0f12"), ("0085", "0085"), ("0", "00"), ("-0", "00"), ("-007F", "81"),
        ]
        for (text, padded) in cases {
            #expect(SRPClient.padHex(signedHex: text) == padded, "\(text)")
        }
        for bad in ["", "-", "--1", "+1", "0x1f", "1 2", "g"] {
            #expect(SRPClient.padHex(signedHex: bad) == nil, "\(bad)")
        }
    }

    /// A salt that reads differently as text and as a number gives another
    /// key, so the signature must differ from the one its text would give.
    @Test func aSaltIsReadAsANumber() throws {
        let v = srpVectors[0]
        let poolName = String(v.pool_id.split(separator: "_")[1])
        func sign(_ salt: String) throws -> String {
            try SRPClient(privateHex: v.private_a).passwordSignature(
                poolName: poolName, userID: v.user_id, password: v.password, saltHex: salt, serverBHex: v.srp_b,
                secretBlock: v.secret_block, timestamp: v.timestamp)
        }
        #expect(try sign("007f12") == sign("7f12"))
        #expect(try sign("0000007f12") == sign("7f12"))
        #expect(try sign("-7f12") != sign("7f12"))
        #expect(throws: SRPError.malformed("SALT")) { try sign("-") }
        #expect(throws: SRPError.malformed("SALT")) { try sign("7f 12") }
    }
}
