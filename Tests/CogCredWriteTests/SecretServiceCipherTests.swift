import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

/// The "dh-ietf1024-sha256-aes128-cbc-pkcs7" transfer encryption. Its
/// interoperation with gnome-keyring is checked end to end
/// (test_secret_transport.py); these check the parts on their own.
@Suite struct SecretServiceCipherTests {
    func pair() -> (SecretServiceCipher, SecretServiceCipher) {
        let ours = SecretServiceCipher(), theirs = SecretServiceCipher()
        #expect(ours.agree(serverPublicKey: theirs.publicKey))
        #expect(theirs.agree(serverPublicKey: ours.publicKey))
        return (ours, theirs)
    }

    @Test func bothSidesDeriveTheSameKey() throws {
        let (ours, theirs) = pair()
        let secret = Array("eyJraWQiOiJ0ZXN0In0.payload.signature".utf8)
        let sealed = try #require(ours.encrypt(secret))
        #expect(sealed.parameters.count == 16)
        #expect(sealed.value.count % 16 == 0 && sealed.value.count > secret.count)
        #expect(sealed.value != secret)
        #expect(theirs.decrypt(parameters: sealed.parameters, value: sealed.value) == secret)
    }

    @Test func everySecretGetsAFreshIV() throws {
        let (ours, _) = pair()
        let a = try #require(ours.encrypt(Array("same".utf8))), b = try #require(ours.encrypt(Array("same".utf8)))
        #expect(a.parameters != b.parameters && a.value != b.value)
    }

    @Test func aThirdPartyCannotRead() throws {
        let (ours, _) = pair()
        let stranger = SecretServiceCipher()
        #expect(stranger.agree(serverPublicKey: SecretServiceCipher().publicKey))
        let secret = Array("a refresh token".utf8)
        let sealed = try #require(ours.encrypt(secret))
        #expect(stranger.decrypt(parameters: sealed.parameters, value: sealed.value) != secret)
    }

    @Test func degeneratePublicKeysAreRefused() {
        let prime = bytes(fromHex: SecretServiceCipher.primeHex)
        var primeMinusOne = prime
        primeMinusOne[primeMinusOne.count - 1] -= 1
        for bad in [[0], [1], primeMinusOne, prime] as [[UInt8]] {
            #expect(!SecretServiceCipher().agree(serverPublicKey: bad))
        }
    }

    @Test func nothingIsDecryptedBeforeAgreement() {
        let cipher = SecretServiceCipher()
        #expect(cipher.encrypt([1, 2, 3]) == nil)
        #expect(cipher.decrypt(parameters: [UInt8](repeating: 0, count: 16), value: [UInt8](repeating: 0, count: 16)) == nil)
    }
}
