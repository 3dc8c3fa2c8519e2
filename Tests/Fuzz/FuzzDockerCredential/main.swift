import CFuzzer
import Glibc
import CogCredWrite

let token = IssuedToken("eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjE4MDAwMDAwMDB9.c2ln")!

/// libFuzzer entry: what docker (or anyone) writes to
/// `docker-credential-cog-cred get` on stdin.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let serverURL = DockerCredential.serverURL(Array(UnsafeBufferPointer(start: data, count: size)))
    let host = DockerCredential.registryHost(serverURL)
    precondition(!host.contains("/"), "a registry host with a path in it")
    // The answer is JSON that gives back exactly the server URL it was asked for.
    let answer = DockerCredential.answer(serverURL: serverURL, token: token)
    guard case .object(let members)? = JSONValue.parse(Array(answer.utf8)),
        case .string(let url)? = members["ServerURL"], url == serverURL,
        case .string(let secret)? = members["Secret"], secret == token.value
    else { preconditionFailure("a docker answer that does not read back") }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data, size) })
