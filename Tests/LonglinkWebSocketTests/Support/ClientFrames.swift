/// Client-to-server WebSocket frames built by hand for tests (masked unless asked otherwise).
enum ClientFrames {
    /// One frame: `first` byte flags from `fin`/`rsv`/`opcode`, the length in its shortest form (or `longForm`),
    /// and the payload masked with `key`.
    static func frame(
        _ opcode: UInt8,
        _ payload: [UInt8],
        fin: Bool = true,
        rsv: UInt8 = 0,
        masked: Bool = true,
        key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D],
        longForm: Int? = nil
    ) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | (rsv << 4) | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        let count = payload.count
        switch longForm ?? (count <= 125 ? 0 : count <= 0xFFFF ? 2 : 8) {
        case 0: out.append(maskBit | UInt8(count))
        case 2: out += [maskBit | 126, UInt8(count >> 8), UInt8(count & 0xFF)]
        default:
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift))) }
        }
        if masked {
            out += key
            for (index, byte) in payload.enumerated() { out.append(byte ^ key[index & 3]) }
        } else {
            out += payload
        }
        return out
    }

    static func binary(_ payload: [UInt8], fin: Bool = true) -> [UInt8] { frame(0x2, payload, fin: fin) }
    static func continuation(_ payload: [UInt8], fin: Bool = true) -> [UInt8] { frame(0x0, payload, fin: fin) }
    static func ping(_ payload: [UInt8] = []) -> [UInt8] { frame(0x9, payload) }
    static func close(_ code: UInt16?, _ reason: String = "") -> [UInt8] {
        guard let code else { return frame(0x8, []) }
        return frame(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }
}
