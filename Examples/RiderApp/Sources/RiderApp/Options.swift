import LonglinkClient

/// The rider app's command line:
///
///     rider-app --server HOST:PORT --ca-file CA.pem [--pin-sha256 HEX[,HEX]] [--server-name NAME]
///               --token-file FILE --order [LINE/]ID [--changes N] [--duration 60s]
struct Options: Sendable {
    /// The gateway's TLS listener.
    var host: String
    var port: Int
    /// The CA that issued the gateway's certificate (a private CA bundled with the app).
    var caFile: String
    /// Accepted server public keys (SHA-256 of the SPKI); empty trusts any key the CA certified.
    var pins: [PublicKeyPin] = []
    /// The name the certificate must match; nil uses the host.
    var serverName: String?
    /// Where the app's login flow keeps the current token.
    var tokenFile: String
    /// The order to follow.
    var route: Route
    /// Stop after this many changes (each seen by all three observers); nil follows until `duration`.
    var changes: Int?
    /// Stop after this long.
    var duration: Duration = .seconds(60)

    static let usage = """
        usage: rider-app --server HOST:PORT --ca-file CA.pem [--pin-sha256 HEX[,HEX]] [--server-name NAME]
                         --token-file FILE --order [LINE/]ID [--changes N] [--duration 60s]
        """

    init(_ arguments: some Sequence<String>) throws(UsageError) {
        var values: [String: String] = [:]
        var iterator = arguments.makeIterator()
        while let flag = iterator.next() {
            let names = ["--server", "--ca-file", "--pin-sha256", "--server-name", "--token-file", "--order", "--changes", "--duration"]
            guard names.contains(flag) else { throw UsageError("unknown option '\(flag)'") }
            guard let value = iterator.next() else { throw UsageError("\(flag) needs a value") }
            values[String(flag.dropFirst(2))] = value
        }
        func required(_ name: String) throws(UsageError) -> String {
            guard let value = values[name], !value.isEmpty else { throw UsageError("--\(name) is required") }
            return value
        }

        let server = try required("server")
        guard let colon = server.lastIndex(of: ":"), let port = Int(server[server.index(after: colon)...]) else {
            throw UsageError("--server takes HOST:PORT, not '\(server)'")
        }
        host = String(server[..<colon])
        self.port = port
        caFile = try required("ca-file")
        for hex in values["pin-sha256"]?.split(separator: ",") ?? [] {
            guard let pin = PublicKeyPin(hex: String(hex)) else { throw UsageError("--pin-sha256 takes 64 hex digits, not '\(hex)'") }
            pins.append(pin)
        }
        serverName = values["server-name"]
        tokenFile = try required("token-file")

        let order = try required("order")
        let parts = order.split(separator: "/", maxSplits: 1).map(String.init)
        let line = parts.count == 2 ? BusinessLine(parts[0]) : .taxi
        guard let line, let id = OrderID(parts.last ?? "") else { throw UsageError("--order takes [LINE/]ID, not '\(order)'") }
        route = .order(line, id)

        if let text = values["changes"] {
            guard let count = Int(text), count > 0 else { throw UsageError("--changes takes a positive count, not '\(text)'") }
            changes = count
        }
        if let text = values["duration"] {
            guard let duration = Self.duration(text) else { throw UsageError("--duration takes e.g. 500ms, 30s or 2m, not '\(text)'") }
            self.duration = duration
        }
    }

    /// `500ms`, `30s`, `2m`, or plain seconds.
    static func duration(_ text: String) -> Duration? {
        for (suffix, scale) in [("ms", 1), ("s", 1000), ("m", 60_000)] where text.hasSuffix(suffix) {
            return Int(text.dropLast(suffix.count)).map { .milliseconds($0 * scale) }
        }
        return Int(text).map { .seconds($0) }
    }
}

/// A command line the app does not understand.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
