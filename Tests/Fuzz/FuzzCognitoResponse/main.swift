import CFuzzer
import Glibc
import CogCredWrite

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// libFuzzer entry: an HTTP answer from whatever sits at the endpoint. The
/// first byte picks the status code; the rest is the body.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    guard size > 0 else { return 0 }
    let statuses = [200, 400, 403, 500, 502, 503]
    let status = statuses[Int(data[0]) % statuses.count]
    let body = Data(UnsafeBufferPointer(start: data + 1, count: size - 1))
    do {
        _ = try CognitoHTTPClient.authOutcome(from: HTTPResponse(status: status, body: body))
    } catch {
        _ = error.summary
        _ = error.isTemporary
        _ = AuthError.cognito(error, operation: .signIn).message
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data, size) })
