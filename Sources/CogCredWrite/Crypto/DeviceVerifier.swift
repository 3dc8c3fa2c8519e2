import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// DeviceSecretVerifierConfig: what ConfirmDevice registers so that the
/// device can later prove, by SRP (DEVICE_SRP_AUTH), that it holds its device
/// password, which never leaves the machine.
///
/// Cognito's device SRP is its user SRP (SRPClient) with the DeviceGroupKey
/// in place of the pool name, the DeviceKey in place of the user, and a
/// random password: verifier = g^x mod N, x = H(salt | H(group | key | ":" |
/// password)), both sent as the bytes of their padded hex in base64, as
/// amazon-cognito-identity-js's generateHashDevice and pycognito's
/// generate_hash_device make them. The tests pin this to fixed vectors made
/// with pycognito.
public struct DeviceVerifier: Sendable, Equatable {
    /// PasswordVerifier.
    public var passwordVerifier: String
    /// Salt.
    public var salt: String

    /// The verifier of `password` for the device, over a salt given as hex
    /// (16 random bytes, read as a number as the SDKs do).
    public init(groupKey: String, deviceKey: String, password: String, saltHex: String) throws(SRPError) {
        guard let paddedSalt = SRPClient.padHex(signedHex: saltHex) else { throw .malformed("device salt") }
        guard let n = BigNumber(hex: SRPClient.nHex), let g = BigNumber(hex: SRPClient.gHex) else { throw .malformed("group") }
        let x = SRPClient.privateKey(poolName: groupKey, userID: deviceKey, password: password, paddedSalt: paddedSalt)
        let verifier = ModularArithmetic(modulus: n).power(g, x)
        passwordVerifier = Data(bytes(fromHex: SRPClient.padHex(verifier.hex))).base64EncodedString()
        salt = Data(bytes(fromHex: paddedSalt)).base64EncodedString()
    }

    /// A new device password, as the SDKs make one: 40 random bytes in base64.
    public static func randomPassword() throws(SRPError) -> String {
        Data(try randomBytes(40)).base64EncodedString()
    }

    /// A new salt: 16 random bytes, as hex.
    public static func randomSaltHex() throws(SRPError) -> String {
        hexString(try randomBytes(16))
    }

    static func randomBytes(_ count: Int) throws(SRPError) -> [UInt8] {
        var random = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&random, Int32(count)) == 1 else { throw .randomFailed }
        return random
    }
}
