internal import CLonglinkOpenSSL

/// HMAC-SHA256 through OpenSSL, and a constant-time comparison for checking MACs.
public enum HMACSHA256 {
    /// Bytes in a MAC.
    public static let byteCount = 32

    /// The MAC of `message` under `key`.
    public static func authenticationCode(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        let key = Array(key)
        let message = Array(message)
        var out = [UInt8](repeating: 0, count: byteCount)
        let ok = key.withUnsafeBytes { k in
            message.withUnsafeBytes { m in
                out.withUnsafeMutableBufferPointer { o in
                    CLonglinkOpenSSL_hmac_sha256(k.baseAddress, k.count, m.baseAddress, m.count, o.baseAddress)
                }
            }
        }
        precondition(ok == 1, "HMAC-SHA256 failed: \(OpenSSLErrors.last())")
        return out
    }

    /// Whether `a` and `b` are equal, in time that depends only on their length (`CRYPTO_memcmp`), so a forger
    /// learns nothing from how long a wrong signature took to reject.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 } }
    }
}
