import CFuzzer
import Glibc
import CogCredWrite

/// libFuzzer entry: a stored or received token, which may be anything, and
/// the JSON parser its claims (and the config file) go through.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let json = JSONValue.parse(bytes) { _ = json.compactText }
    let text = String(decoding: bytes, as: UTF8.self)
    if let token = IssuedToken(text) { precondition(IssuedToken.isWellFormed(token.value)) }
    if let claims = try? JWT.claims(of: text) {
        _ = RefreshPolicy().isUsable(claims, now: 1_800_000_000)
        _ = RefreshPolicy().margin(for: claims)
        if let exp = claims.exp { _ = rfc3339(exp) }
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data, size) })
