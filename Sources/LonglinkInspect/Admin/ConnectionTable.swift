import Foundation
import LonglinkJSON

/// One connected client as `GET /admin/connections` lists it.
public struct AdminConnection: Hashable, Sendable, Decodable {
    /// The gateway's connection id (`c1`).
    public var id: String
    /// The peer address.
    public var address: String
    /// The authenticated user (token subject), when known.
    public var user: String?
    /// Routes subscribed on this connection.
    public var subscriptions: [String]
    /// Bytes queued for the client.
    public var outboundBytes: Int
    /// Milliseconds since the last frame from the client.
    public var lastActivityMillisAgo: Int
    /// Whether the connection uses TLS.
    public var tls: Bool
    /// Client software (`longlink-swift`), from its connect frame.
    public var client: String?
    /// The event loop serving it.
    public var loop: Int?

    enum CodingKeys: String, CodingKey {
        case id, address, user, subscriptions, tls, client, loop
        case outboundBytes = "outbound_bytes"
        case lastActivityMillisAgo = "last_activity_ms_ago"
    }

    /// Creates a row (tests).
    public init(
        id: String, address: String, user: String?, subscriptions: [String], outboundBytes: Int,
        lastActivityMillisAgo: Int, tls: Bool, client: String?, loop: Int?
    ) {
        self.id = id
        self.address = address
        self.user = user
        self.subscriptions = subscriptions
        self.outboundBytes = outboundBytes
        self.lastActivityMillisAgo = lastActivityMillisAgo
        self.tls = tls
        self.client = client
        self.loop = loop
    }

    /// Decodes a row; only `id` is required (other fields default to empty values).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        address = try c.decodeIfPresent(String.self, forKey: .address) ?? "?"
        user = try c.decodeIfPresent(String.self, forKey: .user)
        subscriptions = try c.decodeIfPresent([String].self, forKey: .subscriptions) ?? []
        outboundBytes = try c.decodeIfPresent(Int.self, forKey: .outboundBytes) ?? 0
        lastActivityMillisAgo = try c.decodeIfPresent(Int.self, forKey: .lastActivityMillisAgo) ?? 0
        tls = try c.decodeIfPresent(Bool.self, forKey: .tls) ?? false
        client = try c.decodeIfPresent(String.self, forKey: .client)
        loop = try c.decodeIfPresent(Int.self, forKey: .loop)
    }

    /// Parses the endpoint's body: `{"connections":[…]}`.
    public static func list(json: [UInt8]) throws(AdminError) -> [AdminConnection] {
        struct Body: Decodable { var connections: [AdminConnection] }
        do {
            return try JSONValue.decode(Body.self, from: json).connections
        } catch {
            throw AdminError("unreadable /admin/connections answer: \(error)")
        }
    }

    /// The row as a JSON line.
    public var json: String {
        var members: [(String, JSONValue)] = [("id", .string(id)), ("address", .string(address))]
        if let user { members.append(("user", .string(user))) }
        members += [
            ("subscriptions", .array(subscriptions.map { .string($0) })), ("outbound_bytes", .int(Int64(outboundBytes))),
            ("last_activity_ms_ago", .int(Int64(lastActivityMillisAgo))), ("tls", .bool(tls)),
        ]
        if let client { members.append(("client", .string(client))) }
        if let loop { members.append(("loop", .int(Int64(loop)))) }
        return JSONText.object(members)
    }
}

/// Sorting, filtering and rendering the connection list as an aligned table (like NATS's `/connz` viewers).
public struct ConnectionTable: Sendable {
    /// A column to sort by.
    public enum SortField: String, Sendable, CaseIterable {
        case id, address, user, client, subscriptions, outbound, idle, loop, tls
    }

    /// The sort column.
    public var sort: SortField
    /// Largest first.
    public var descending: Bool
    /// Case-insensitive text a row must contain (in id, address, user, client or a subscription).
    public var filter: String?

    /// Parses `--sort` (`idle`, `-outbound`, also the JSON names `outbound_bytes`, `last_activity_ms_ago`).
    public init(sort text: String, filter: String?) throws(AdminError) {
        descending = text.hasPrefix("-")
        let name = descending ? String(text.dropFirst()) : text
        let aliases: [String: SortField] = ["outbound_bytes": .outbound, "last_activity_ms_ago": .idle, "last_activity": .idle,
                                             "subs": .subscriptions, "addr": .address]
        guard let field = SortField(rawValue: name) ?? aliases[name] else {
            throw AdminError("--sort expects one of \(SortField.allCases.map(\.rawValue).joined(separator: ", ")) (prefix - for descending), got '\(text)'")
        }
        sort = field
        self.filter = filter.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The rows to show, filtered and sorted (ties by id).
    public func rows(_ connections: [AdminConnection]) -> [AdminConnection] {
        let needle = filter?.lowercased()
        let kept = connections.filter { row in
            guard let needle else { return true }
            return ([row.id, row.address, row.user ?? "", row.client ?? ""] + row.subscriptions)
                .contains { $0.lowercased().contains(needle) }
        }
        return kept.sorted { a, b in
            let order = compare(a, b)
            if order != .orderedSame { return descending ? order == .orderedDescending : order == .orderedAscending }
            return Self.natural(a.id, b.id) == .orderedAscending
        }
    }

    private func compare(_ a: AdminConnection, _ b: AdminConnection) -> ComparisonResult {
        func numbers(_ x: Int, _ y: Int) -> ComparisonResult { x == y ? .orderedSame : x < y ? .orderedAscending : .orderedDescending }
        switch sort {
        case .id: return Self.natural(a.id, b.id)
        case .address: return Self.natural(a.address, b.address)
        case .user: return Self.natural(a.user ?? "", b.user ?? "")
        case .client: return Self.natural(a.client ?? "", b.client ?? "")
        case .subscriptions: return numbers(a.subscriptions.count, b.subscriptions.count)
        case .outbound: return numbers(a.outboundBytes, b.outboundBytes)
        case .idle: return numbers(a.lastActivityMillisAgo, b.lastActivityMillisAgo)
        case .loop: return numbers(a.loop ?? -1, b.loop ?? -1)
        case .tls: return numbers(a.tls ? 1 : 0, b.tls ? 1 : 0)
        }
    }

    /// Text order with digit runs compared as numbers (`c2` < `c10`).
    static func natural(_ a: String, _ b: String) -> ComparisonResult {
        a.compare(b, options: [.numeric, .caseInsensitive])
    }

    /// The table: a header, one aligned line per row, and a count line.
    public func render(_ connections: [AdminConnection]) -> [String] {
        let shown = rows(connections)
        let header = ["ID", "ADDRESS", "USER", "CLIENT", "TLS", "LOOP", "OUTBOUND", "IDLE", "SUBSCRIPTIONS"]
        let cells = shown.map { row in
            [
                row.id, row.address, row.user ?? "-", row.client ?? "-", row.tls ? "yes" : "no",
                row.loop.map(String.init) ?? "-", Self.bytes(row.outboundBytes), Self.duration(millis: row.lastActivityMillisAgo),
                row.subscriptions.isEmpty ? "-" : "\(row.subscriptions.count): " + row.subscriptions.joined(separator: ", "),
            ]
        }
        var widths = header.map(\.count)
        for line in cells { for (index, cell) in line.enumerated() { widths[index] = max(widths[index], cell.count) } }
        let rightAligned: Set<Int> = [5, 6, 7]
        func format(_ line: [String]) -> String {
            line.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                if index == line.count - 1 { return cell }
                return rightAligned.contains(index) ? padding + cell : cell + padding
            }.joined(separator: "  ")
        }
        var lines = [format(header)] + cells.map(format)
        lines.append(shown.count == connections.count
            ? "\(connections.count) connections"
            : "\(shown.count) of \(connections.count) connections (filter '\(filter ?? "")')")
        return lines
    }

    /// `512 B`, `1.5 KiB`, `3.0 MiB`.
    static func bytes(_ count: Int) -> String {
        if count < 1024 { return "\(count) B" }
        if count < 1024 * 1024 { return TapStats.oneDecimal(Double(count) / 1024) + " KiB" }
        return TapStats.oneDecimal(Double(count) / (1024 * 1024)) + " MiB"
    }

    /// `120ms`, `3.4s`, `2m05s`, `1h02m`.
    static func duration(millis: Int) -> String {
        if millis < 1000 { return "\(millis)ms" }
        if millis < 60_000 { return TapStats.oneDecimal(Double(millis) / 1000) + "s" }
        let seconds = millis / 1000
        if seconds < 3600 { return "\(seconds / 60)m" + JSONText.pad(seconds % 60, 2) + "s" }
        return "\(seconds / 3600)h" + JSONText.pad(seconds % 3600 / 60, 2) + "m"
    }
}
