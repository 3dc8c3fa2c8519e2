import CFuzzer
import Glibc
import CogCredWrite

let request = AuthorizationRequest(
    domain: "https://my-app.auth.us-east-1.amazoncognito.com", clientID: "client123",
    redirectURI: "http://localhost:8400/callback", scopes: ["openid"], identityProvider: nil, state: "st4te",
    nonce: "n0nce", verifier: "v")

/// libFuzzer entry: what reaches browser sign-in from outside: the query of
/// a request to the loopback listener (anyone on this machine can send
/// one), and the address pasted back in the --no-browser flow.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for result in [Result { try request.callback(query: text) }, Result { try request.pasted(text) }] {
        guard case .success(let callback) = result else { continue }
        // Accepted only with this request's state (or as a bare code with no
        // separators in it); a code is never empty.
        if case .code(let code) = callback { precondition(!code.isEmpty, "an empty code accepted") }
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data, size) })
