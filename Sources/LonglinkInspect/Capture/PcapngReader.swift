/// pcapng files: blocks of `type, total length, body, total length`. Reads section headers (byte order),
/// interface descriptions (link type, timestamp resolution) and enhanced, simple and obsolete packet blocks;
/// skips every other block.
enum PcapngReader {
    static let sectionHeader: UInt32 = 0x0A0D_0D0A
    static let interfaceDescription: UInt32 = 1
    static let obsoletePacket: UInt32 = 2
    static let simplePacket: UInt32 = 3
    static let enhancedPacket: UInt32 = 6

    /// One interface of the current section.
    struct Interface {
        var linkType: UInt32
        /// Timestamp units per second.
        var unitsPerSecond: UInt64
    }

    static func read(_ bytes: [UInt8]) throws(CaptureError) -> ([CapturedPacket], Bool) {
        var packets: [CapturedPacket] = []
        var interfaces: [Interface] = []
        var reader = BinaryReader(bytes: bytes, littleEndian: true)
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 12 else { return (packets, true) }
            if BinaryReader.be32(bytes, offset) == sectionHeader {
                let magic = Array(bytes[(offset + 8)..<(offset + 12)])
                guard magic == [0x4D, 0x3C, 0x2B, 0x1A] || magic == [0x1A, 0x2B, 0x3C, 0x4D] else {
                    throw CaptureError("pcapng section at byte \(offset) has a bad byte-order magic")
                }
                reader = BinaryReader(bytes: bytes, littleEndian: magic[0] == 0x4D)
                interfaces = []
            }
            let type = reader.u32(offset)
            let length = Int(reader.u32(offset + 4))
            guard length >= 12, length % 4 == 0 else {
                throw CaptureError("pcapng block at byte \(offset) has an invalid length \(length)")
            }
            guard bytes.count - offset >= length else { return (packets, true) }
            let body = offset + 8
            let bodyEnd = offset + length - 4
            switch type {
            case interfaceDescription:
                guard bodyEnd - body >= 8 else { throw CaptureError("pcapng interface block at byte \(offset) is too short") }
                let resolution = timestampResolution(reader, options: body + 8, end: bodyEnd)
                interfaces.append(Interface(linkType: UInt32(reader.u16(body)), unitsPerSecond: resolution))
            case enhancedPacket, obsoletePacket:
                guard bodyEnd - body >= 20 else { throw CaptureError("pcapng packet block at byte \(offset) is too short") }
                let index = type == enhancedPacket ? Int(reader.u32(body)) : Int(reader.u16(body))
                guard index < interfaces.count else {
                    throw CaptureError("pcapng packet block at byte \(offset) names interface \(index), which is not described")
                }
                let stamp = UInt64(reader.u32(body + 4)) << 32 | UInt64(reader.u32(body + 8))
                let captured = Int(reader.u32(body + 12))
                guard captured <= bodyEnd - (body + 20) else {
                    throw CaptureError("pcapng packet block at byte \(offset) claims \(captured) bytes beyond its block")
                }
                let interface = interfaces[index]
                packets.append(CapturedPacket(
                    timeMicros: micros(stamp, unitsPerSecond: interface.unitsPerSecond),
                    linkType: interface.linkType,
                    data: Array(bytes[(body + 20)..<(body + 20 + captured)])))
            case simplePacket:
                guard let interface = interfaces.first else {
                    throw CaptureError("pcapng simple packet block at byte \(offset) before any interface")
                }
                let captured = min(Int(reader.u32(body)), bodyEnd - (body + 4))
                packets.append(CapturedPacket(
                    timeMicros: 0, linkType: interface.linkType, data: Array(bytes[(body + 4)..<(body + 4 + captured)])))
            default:
                break
            }
            offset += length
        }
        return (packets, false)
    }

    /// The `if_tsresol` option (code 9) of an interface block: units per second (default microseconds).
    static func timestampResolution(_ reader: BinaryReader, options start: Int, end: Int) -> UInt64 {
        var offset = start
        while end - offset >= 4 {
            let code = reader.u16(offset)
            let length = Int(reader.u16(offset + 2))
            if code == 0 { break }
            if code == 9, length >= 1, offset + 4 < end {
                let value = reader.bytes[offset + 4]
                let exponent = UInt64(value & 0x7F)
                guard exponent < 64 else { return 1_000_000 }
                if value & 0x80 == 0 {
                    guard exponent <= 19 else { return 1_000_000 }
                    var units: UInt64 = 1
                    for _ in 0..<exponent { units *= 10 }
                    return units
                }
                return 1 << exponent
            }
            offset += 4 + (length + 3) / 4 * 4
        }
        return 1_000_000
    }

    /// A timestamp in `unitsPerSecond` as microseconds.
    static func micros(_ stamp: UInt64, unitsPerSecond: UInt64) -> UInt64 {
        let seconds = stamp / unitsPerSecond
        let rest = stamp % unitsPerSecond
        let fraction = rest.multipliedReportingOverflow(by: 1_000_000)
        let micros = fraction.overflow ? UInt64(Double(rest) / Double(unitsPerSecond) * 1e6) : fraction.partialValue / unitsPerSecond
        return seconds &* 1_000_000 &+ micros
    }
}
