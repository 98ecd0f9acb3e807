/// Redis Cluster's key space: 16,384 hash slots. A key's slot is CRC16 (the XMODEM variant: polynomial 0x1021,
/// initial value 0) of the key modulo 16,384; when the key holds a hash tag (the bytes between the first `{` and
/// the first `}` after it, when there is at least one byte between them), only the tag is hashed, so keys
/// sharing a tag share a slot. The cluster spec's reference values: `CRC16("123456789") == 0x31C3`,
/// `slot("foo") == 12182`, `slot("{user1000}.following") == slot("{user1000}.followers")`.
///
/// Shard channels (`SSUBSCRIBE`/`SPUBLISH`) are placed by the same rule.
public enum RedisClusterSlot {
    /// Number of hash slots.
    public static let count = 16_384

    /// The slot of a key given as bytes.
    public static func of(_ key: [UInt8]) -> Int {
        key.withUnsafeBufferPointer { of($0) }
    }

    /// The slot of a key given as text (its UTF-8 bytes).
    public static func of(_ key: String) -> Int {
        var key = key
        return key.withUTF8 { of($0) }
    }

    /// The slot of a key in a buffer.
    public static func of(_ key: UnsafeBufferPointer<UInt8>) -> Int {
        let hashed = hashTag(key) ?? 0..<key.count
        return Int(crc16(UnsafeBufferPointer(rebasing: key[hashed])) & 0x3FFF)
    }

    /// The range of the key's hash tag (the bytes inside the first `{…}` pair), nil when it has none or it is empty.
    static func hashTag(_ key: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard let open = key.firstIndex(of: UInt8(ascii: "{")) else { return nil }
        guard let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1 else { return nil }
        return (open + 1)..<close
    }

    /// CRC16/XMODEM.
    public static func crc16(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        return crc
    }

    /// CRC16/XMODEM of text.
    public static func crc16(_ text: String) -> UInt16 {
        var text = text
        return text.withUTF8 { crc16($0) }
    }

    /// A short text whose slot is `slot` (the first in the order `0`…`9`, `a`…`z`, `A`…`Z`, then two characters,
    /// three, …). Keys named `…{TAG}…` with it land in that slot: how per-slot structures are named.
    public static func tag(for slot: Int) -> String { tags[slot] }

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }

    /// One tag per slot, found by enumerating short texts until every slot has one (about 240,000 CRCs, once).
    private static let tags: [String] = {
        let alphabet = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        var found = [String?](repeating: nil, count: count)
        var missing = count
        var candidate: [UInt8] = []
        var length = 1
        while missing > 0 {
            // Enumerate every text of `length` characters as a number in base `alphabet.count`.
            var digits = [Int](repeating: 0, count: length)
            enumerate: while true {
                candidate = digits.map { alphabet[$0] }
                let slot = candidate.withUnsafeBufferPointer { Int(crc16($0) & 0x3FFF) }
                if found[slot] == nil {
                    found[slot] = String(decoding: candidate, as: UTF8.self)
                    missing -= 1
                    if missing == 0 { break enumerate }
                }
                var position = length - 1
                while position >= 0 {
                    digits[position] += 1
                    if digits[position] < alphabet.count { break }
                    digits[position] = 0
                    position -= 1
                }
                if position < 0 { break }
            }
            length += 1
        }
        return found.map { $0! }
    }()
}
