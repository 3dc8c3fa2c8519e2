import CFuzzer
import Glibc
import CogCredWrite

/// libFuzzer entry: git credential helper input, as git (or anyone) could send it.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let request = try? GitCredential.parse(bytes) else { return 0 }
    // Whatever parsed must be usable without trapping.
    _ = request.capabilities
    _ = request.target
    _ = GitCredential.erases(request, token: "a.b.c")
    for attribute in request.attributes {
        precondition(!attribute.key.contains("\n") && !attribute.value.contains("\n"), "a line break inside an attribute")
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data, size) })
