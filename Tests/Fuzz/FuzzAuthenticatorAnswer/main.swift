import CFuzzer
import Glibc
import CogCredWrite

/// libFuzzer entry: what libfido2 hands over from a security key, which the
/// key wrote: an assertion's authenticator data wrapped as a CBOR byte
/// string (read out by CBOR.byteString), and a registration's attestation
/// statement (checked to be a map, then written into the attestation object).
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let content = CBOR.byteString(bytes) {
        // What was read is the whole of what the header said, no more.
        precondition(content.count < bytes.count, "a byte string's content cannot be longer than its encoding")
    }
    if CBOR.isMap(bytes) {
        let object = CBOR.attestationObject(format: "packed", statement: bytes, authenticatorData: bytes)
        precondition(object.count > 2 * bytes.count, "the attestation object holds both")
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data, size) })
