import COpenSSL

/// SHA-256, HMAC-SHA256 and HKDF-SHA256 from OpenSSL's libcrypto.
enum Digest {
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        _ = bytes.withUnsafeBufferPointer { SHA256($0.baseAddress, bytes.count, &out) }
        return out
    }

    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = key.withUnsafeBytes { k in
            message.withUnsafeBufferPointer { m in
                HMAC(EVP_sha256(), k.baseAddress, Int32(key.count), m.baseAddress, message.count, &digest, &length)
            }
        }
        // HMAC over in-memory buffers cannot fail short of memory exhaustion.
        precondition(ok != nil && length == 32, "HMAC-SHA256 failed")
        return Array(digest[0..<32])
    }

    static func hkdfSHA256(ikm: [UInt8], salt: [UInt8], info: [UInt8], length: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: length)
        let ok = copenssl_hkdf_sha256(ikm, ikm.count, salt, salt.count, info, info.count, &out, length)
        return ok == 1 ? out : nil
    }
}
