import CFuzzer
import Glibc
import CogCredWrite

/// A token the answers are built around: well formed, so `IssuedToken` takes it.
let token = IssuedToken("eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjE4MDAwMDAwMDB9.c2ln")!

/// libFuzzer entry: KUBERNETES_EXEC_INFO, as kubectl (or whatever sets the
/// variable) could send it. The environment gives bytes; getenv's text is
/// read as UTF-8 with repairs, as here.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    switch KubernetesExecInfo.parse(text) {
    case .failure(let error):
        // The refusal is one line on stderr, whatever the input held.
        precondition(!error.message.contains("\n"), "a refusal spanning lines")
    case .success(let info):
        // What is accepted is answered in the version asked for, as JSON
        // that reads back to the same version and the same token.
        let answer = TokenOutput.execCredential(token, apiVersion: info.apiVersion)
        guard case .object(let members)? = JSONValue.parse(Array(answer.utf8)),
            case .string(let version)? = members["apiVersion"], version == info.apiVersion.rawValue,
            case .object(let status)? = members["status"], case .string(let value)? = status["token"], value == token.value
        else { preconditionFailure("an ExecCredential that does not read back") }
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data, size) })
