import CFuzzer
import Glibc
import CogCredWrite

/// libFuzzer entry: a config file someone edited by hand.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let file = try? ConfigFile.decode(bytes, path: "fuzz") else { return 0 }
    // A file that loads must round-trip and resolve.
    let again = try? ConfigFile.decode(file.encoded(), path: "fuzz")
    precondition(again == file, "config did not round-trip")
    for profile in file.profiles.values {
        _ = try? Endpoint.resolve(profile: profile, environment: [:])
        _ = Endpoint.profileProblem(profile)
        if let url = profile.endpointURL { _ = Endpoint.isLoopback(url) }
        _ = profile.effectiveRegion
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data, size) })
