/// Writes capture files in memory, the way tcpdump and tshark lay them out, for synthetic capture tests.
struct CaptureBuilder {
    /// Link-layer framing of a packet.
    enum Link: UInt32, CaseIterable, Sendable {
        case null = 0, ethernet = 1, linuxSLL = 113, linuxSLL2 = 276, raw = 101
    }

    /// One side of a connection.
    struct Host: Sendable {
        var address: [UInt8]
        var port: UInt16
        static func v4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, port: UInt16) -> Host { Host(address: [a, b, c, d], port: port) }
        static func loopback6(port: UInt16) -> Host { Host(address: [UInt8](repeating: 0, count: 15) + [1], port: port) }
    }

    static let fin: UInt8 = 0x01, syn: UInt8 = 0x02, rst: UInt8 = 0x04, psh: UInt8 = 0x08, ack: UInt8 = 0x10

    /// A TCP segment inside IP inside the link framing.
    static func packet(
        _ link: Link, from source: Host, to destination: Host, sequence: UInt32, flags: UInt8, payload: [UInt8] = []
    ) -> [UInt8] {
        var tcp = be16(source.port) + be16(destination.port) + be32(sequence) + be32(0)
        tcp += [0x50, flags] + be16(65_535) + [0, 0, 0, 0]
        tcp += payload
        let isV6 = source.address.count == 16
        var ip: [UInt8]
        if isV6 {
            ip = [0x60, 0, 0, 0] + be16(UInt16(tcp.count)) + [6, 64] + source.address + destination.address
        } else {
            ip = [0x45, 0] + be16(UInt16(20 + tcp.count)) + [0, 0, 0x40, 0, 64, 6, 0, 0] + source.address + destination.address
        }
        ip += tcp
        let type: [UInt8] = isV6 ? [0x86, 0xDD] : [0x08, 0x00]
        switch link {
        case .null: return le32(isV6 ? 10 : 2) + ip
        case .ethernet: return [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] + type + ip
        case .linuxSLL: return [0, 0, 0, 1, 0, 6] + [UInt8](repeating: 0, count: 8) + type + ip
        case .linuxSLL2: return type + [0, 0, 0, 0, 0, 1, 0, 1, 0, 6] + [UInt8](repeating: 0, count: 8) + ip
        case .raw: return ip
        }
    }

    /// A UDP datagram over Ethernet (something that is not TCP).
    static func udp(from source: Host, to destination: Host) -> [UInt8] {
        let udp = be16(source.port) + be16(destination.port) + be16(12) + [0, 0, 1, 2, 3, 4]
        let ip = [0x45, 0] + be16(UInt16(20 + udp.count)) + [0, 0, 0x40, 0, 64, 17, 0, 0] + source.address + destination.address
        return [UInt8](repeating: 0, count: 12) + [0x08, 0x00] + ip + udp
    }

    /// A classic little-endian microsecond pcap file.
    static func pcap(link: Link, _ packets: [(micros: UInt64, bytes: [UInt8])]) -> [UInt8] {
        var file: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1] + le16(2) + le16(4) + le32(0) + le32(0) + le32(262_144) + le32(link.rawValue)
        for (micros, bytes) in packets {
            file += le32(UInt32(micros / 1_000_000)) + le32(UInt32(micros % 1_000_000))
            file += le32(UInt32(bytes.count)) + le32(UInt32(bytes.count)) + bytes
        }
        return file
    }

    /// A big-endian pcapng file with one interface per link type given; interface 1 (if any) uses nanoseconds.
    static func pcapng(links: [Link], _ packets: [(micros: UInt64, interface: Int, bytes: [UInt8])]) -> [UInt8] {
        var file = block(0x0A0D_0D0A, [0x1A, 0x2B, 0x3C, 0x4D] + be16(1) + be16(0) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        for (index, link) in links.enumerated() {
            var body = be16(UInt16(link.rawValue)) + be16(0) + be32(262_144)
            if index == 1 { body += be16(9) + be16(1) + [9, 0, 0, 0] }  // if_tsresol = 10^-9
            body += be16(0) + be16(0)  // opt_endofopt
            file += block(1, body)
        }
        file += block(5, be32(0) + be32(0) + be32(0))  // an interface statistics block: skipped
        for (micros, interface, bytes) in packets {
            let stamp = interface == 1 ? micros * 1000 : micros
            var body = be32(UInt32(interface)) + be32(UInt32(stamp >> 32)) + be32(UInt32(stamp & 0xFFFF_FFFF))
            body += be32(UInt32(bytes.count)) + be32(UInt32(bytes.count)) + bytes
            body += [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
            file += block(6, body)
        }
        return file
    }

    private static func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
        let length = UInt32(12 + body.count)
        return be32(type) + be32(length) + body + be32(length)
    }

    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func be32(_ v: UInt32) -> [UInt8] { be16(UInt16(v >> 16)) + be16(UInt16(v & 0xFFFF)) }
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { le16(UInt16(v & 0xFFFF)) + le16(UInt16(v >> 16)) }
}
