import CFuzzer
import Foundation
import Glibc
import CogCredWrite

/// An HTTP transport that answers with the fuzzer's bytes.
struct Canned: HTTPTransport {
    let status: Int
    let body: Data
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse { HTTPResponse(status: status, body: body) }
}

/// libFuzzer entry: the token endpoint's answers (the first byte picks the
/// HTTP status), as the pool's domain (or whatever answers there) sends them.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let statuses = [200, 400, 401, 500, 503]
    let status = statuses[Int(data[0]) % statuses.count]
    let body = Data(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let client = OAuthHTTPClient(
        domain: "https://d", clientID: "c", clientSecret: "s", timeouts: Timeouts(connect: 1, request: 1, command: 1),
        deadline: Deadline(secondsFromNow: 60), transport: Canned(status: status, body: body),
        retryPolicy: RetryPolicy(maxAttempts: 1, sleeper: { _ in }))
    do {
        let result = try client.clientCredentials(scopes: ["a/b"])
        precondition(status == 200 && !result.accessToken.isEmpty, "tokens from a refusal, or an empty access token")
    } catch {
        // Whatever failed is said in one line.
        let message = AuthError.cognito(error, operation: .clientCredentials).message
        precondition(!message.oneLine(limit: 10_000).isEmpty)
    }
    _ = try? client.revoke(refreshToken: "r")
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data, size) })
