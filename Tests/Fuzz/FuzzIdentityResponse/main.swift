import CFuzzer
import Foundation
import Glibc
import CogCredWrite

/// An HTTP transport that answers every request with the fuzzer's bytes.
struct Canned: HTTPTransport {
    let status: Int
    let body: Data
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse { HTTPResponse(status: status, body: body) }
}

/// libFuzzer entry: what `aws-credentials` reads from outside: the identity
/// pool's and STS's answers (the first byte picks the HTTP status), and the
/// stored credentials item (another program may have written it).
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let statuses = [200, 400, 403, 500]
    let status = statuses[Int(data[0]) % statuses.count]
    let body = Data(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let client = CognitoIdentityHTTPClient(
        identityEndpoint: "https://i", stsEndpoint: "https://s", timeouts: Timeouts(connect: 1, request: 1, command: 1),
        deadline: Deadline(secondsFromNow: 60), transport: Canned(status: status, body: body),
        retryPolicy: RetryPolicy(maxAttempts: 1, sleeper: { _ in }))
    let logins = ["cognito-idp.us-east-1.amazonaws.com/us-east-1_A": "a.b.c"]
    // Each answer either gives complete credentials (only with a 200) or an
    // error that can be worded. (Called one by one: an array of typed-throws
    // closures crashes Swift 6.3's SIL generation.)
    do {
        let got = try client.credentials(identityID: "us-east-1:x", logins: logins, roleARN: nil)
        precondition(status == 200 && !got.accessKeyID.isEmpty && !got.secretAccessKey.isEmpty, "credentials from a refusal")
    } catch {
        precondition(!AuthError.cognito(error, operation: .awsCredentials).message.isEmpty)
    }
    do {
        let got = try client.basicFlowCredentials(
            identityID: "us-east-1:x", logins: logins, roleARN: "arn:aws:iam::1:role/r", sessionName: "s")
        precondition(status == 200 && !got.accessKeyID.isEmpty && !got.secretAccessKey.isEmpty, "credentials from a refusal")
    } catch {
        precondition(!AuthError.cognito(error, operation: .awsCredentials).message.isEmpty)
    }
    _ = try? client.getID(poolID: "us-east-1:x", logins: logins)
    // The stored item: whatever reads as credentials writes back the same.
    if let stored = AWSCredentials(stored: String(decoding: body, as: UTF8.self)) {
        precondition(AWSCredentials(stored: stored.stored) == stored, "stored credentials did not round-trip")
        _ = stored.credentialProcess
        _ = stored.isFresh(now: Int64(data[0]) << 56, margin: 300)
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data, size) })
