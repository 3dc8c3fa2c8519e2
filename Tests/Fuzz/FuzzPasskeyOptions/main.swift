import CFuzzer
import Glibc
import CogCredWrite

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// libFuzzer entry: passkey answers from whatever sits at the endpoint. The
/// first byte picks which (modulo 3): 0, a WEB_AUTHN challenge's
/// CREDENTIAL_REQUEST_OPTIONS (a JSON string); 1, the body of
/// StartWebAuthnRegistration's answer (CredentialCreationOptions, an
/// object); 2, the body of ListWebAuthnCredentials' answer. The rest is it.
/// Options go through the whole ceremony with a key that signs anything, so
/// the relying-party pin and the credential's JSON run too.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let rest = Data(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let ceremony = PasskeyCeremony(relyingParty: "auth.example.com", authenticator: AnyKey(), prompts: Nobody())
    let client = CognitoHTTPClient(
        endpoint: "http://127.0.0.1:1/", clientID: "client", timeouts: Timeouts(connect: 1, request: 1, command: 1),
        deadline: Deadline(secondsFromNow: 1), transport: Answer(body: rest))
    switch data[0] % 3 {
    case 0:
        if let options = try? WebAuthn.RequestOptions(json: String(decoding: rest, as: UTF8.self)) {
            _ = try? ceremony.signIn(options, username: "alice")
        }
    case 1:
        if let options = try? client.startPasskeyRegistration(accessToken: "token") {
            _ = try? ceremony.register(options)
        }
    default: _ = try? client.listPasskeys(accessToken: "token", nextToken: nil)
    }
    return 0
}

struct Answer: HTTPTransport {
    let body: Data
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse { HTTPResponse(status: 200, body: body) }
}

struct AnyKey: Authenticator {
    func assertion(_ request: AssertionRequest, prompts: any PasskeyPrompts) throws -> Assertion {
        Assertion(credentialID: request.allowCredentials.first ?? [1], authenticatorData: request.clientData, signature: [2], userHandle: nil)
    }

    func makeCredential(_ request: CredentialRequest, prompts: any PasskeyPrompts) throws -> NewCredential {
        NewCredential(id: request.userID, authenticatorData: request.clientData, format: "none", attestationStatement: [0xA0], transports: ["usb"])
    }
}

struct Nobody: PasskeyPrompts {
    func securityKeyPIN(retriesLeft: Int?) throws -> String { "0000" }
    func touchSecurityKey(choosing: Bool) {}
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data, size) })
