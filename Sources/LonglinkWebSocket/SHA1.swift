/// SHA-1 (FIPS 180-4), only for `Sec-WebSocket-Accept`: RFC 6455 fixes the hash, and the digest of a public key
/// and a public constant protects nothing, so SHA-1's weakness does not matter here. Self-contained so the
/// WebSocket module needs no crypto library for plain `ws`; the padded message and the schedule live on the stack
/// (an upgrade hashes 60 bytes: two blocks).
enum SHA1 {
    /// The 20-byte digest of `message`.
    static func digest(_ message: [UInt8]) -> [UInt8] {
        let padded = (message.count + 8) / 64 * 64 + 64
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: padded) { block in
            block.initialize(repeating: 0)
            _ = message.withUnsafeBufferPointer { source in block.initialize(fromContentsOf: source) }
            block[message.count] = 0x80
            let bits = UInt64(message.count) &* 8
            for index in 0..<8 { block[padded - 1 - index] = UInt8(truncatingIfNeeded: bits >> (8 * UInt64(index))) }
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
                for start in stride(from: 0, to: padded, by: 64) {
                    for i in 0..<16 {
                        let at = start + i * 4
                        w[i] = UInt32(block[at]) << 24 | UInt32(block[at + 1]) << 16 | UInt32(block[at + 2]) << 8 | UInt32(block[at + 3])
                    }
                    for i in 16..<80 { w[i] = rotate(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
                    var (a, b, c, d, e) = h
                    for i in 0..<80 {
                        let f: UInt32
                        let k: UInt32
                        switch i {
                        case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                        case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                        case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                        default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                        }
                        let t = rotate(a, 5) &+ f &+ e &+ k &+ w[i]
                        (e, d, c, b, a) = (d, c, rotate(b, 30), a, t)
                    }
                    h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
                }
            }
        }
        return [UInt8](unsafeUninitializedCapacity: 20) { out, initialized in
            for (index, word) in [h.0, h.1, h.2, h.3, h.4].enumerated() {
                out[index * 4] = UInt8(word >> 24)
                out[index * 4 + 1] = UInt8(truncatingIfNeeded: word >> 16)
                out[index * 4 + 2] = UInt8(truncatingIfNeeded: word >> 8)
                out[index * 4 + 3] = UInt8(truncatingIfNeeded: word)
            }
            initialized = 20
        }
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        value << count | value >> (32 - count)
    }
}
