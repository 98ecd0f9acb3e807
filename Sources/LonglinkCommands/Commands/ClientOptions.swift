import Glibc
import LonglinkClient
import LonglinkCore
import LonglinkLoop
import LonglinkOpenSSL
import LonglinkServer

/// Options every client-side command shares, and the client they describe.
enum ClientOptions {
    static let specs: [OptionSpec] = [
        OptionSpec("server", default: "127.0.0.1:7070", valueName: "HOST:PORT", help: "gateway address"),
        OptionSpec("token", valueName: "JWT", help: "connection token (prefer LONGLINK_TOKEN: flags show in ps)"),
        OptionSpec("timeout", default: "10s", valueName: "DURATION", help: "give up after this long without the server"),
    ] + ClientTLSOptions.specs

    /// Builds a client from the resolved options.
    static func makeClient(
        _ options: ResolvedOptions,
        name: String,
        reconnects: Bool = true,
        io: CommandIO? = nil
    ) throws -> LonglinkClient {
        let server = try HostPort(parsing: options.required("server"), option: "server")
        let timeout = try options.duration("timeout") ?? .seconds(10)
        let configuration = ClientConfiguration(
            host: server.host,
            port: Int(server.port),
            token: options.string("token") ?? "",
            clientName: "longlink-\(name)",
            clientVersion: LonglinkVersion.current,
            connectTimeout: timeout,
            publishTimeout: timeout,
            reconnects: reconnects,
            tls: try ClientTLSOptions.settings(options, io: io),
            serverName: options.string("server-name").flatMap { $0.isEmpty ? nil : $0 }
        )
        do {
            return try LonglinkClient(configuration: configuration)
        } catch let error as ClientTLSError {
            throw CommandFailure("\(error)", exitCode: ClientExitCode.usage)
        }
    }

    /// Waits for the connection; the first failed attempt fails the command at once with its own message and exit
    /// code (`ClientExitCode`), instead of retrying until the timeout.
    static func connect(_ client: LonglinkClient, _ options: ResolvedOptions) async throws {
        let timeout = try options.duration("timeout") ?? .seconds(10)
        do throws(ClientError) {
            try await client.waitUntilConnected(timeout: timeout, failingFast: true)
        } catch {
            throw failure(error, options)
        }
    }

    /// The message and exit code for a failed client call.
    static func failure(_ error: ClientError, _ options: ResolvedOptions) -> CommandFailure {
        ClientExitCode.failure(error, server: options.string("server") ?? "the gateway")
    }
}

/// Readable one-line renderings of changes, shared by `subscribe`, `orders show` and `inspect`.
enum ChangeFormatter {
    static func line(_ change: ContentChange) -> String {
        let record = change.record
        let time = isoTime(millis: record.timestampMillis)
        switch change.kind {
        case .change:
            let from = record.fromState.map(\.name) ?? "∅"
            return "\(time) \(change.route) \(record.position) \(from) → \(record.toState)\(fields(record.fields))"
        case .snapshot, .resync:
            return "\(time) \(change.route) \(record.position) \(change.kind == .snapshot ? "snapshot" : "resync") state=\(record.toState)\(fields(change.snapshot.fields))"
        }
    }

    static func fields(_ fields: OrderFields) -> String {
        var text = ""
        if let driver = fields.driverID { text += " driver=\(driver)" }
        if let eta = fields.etaSeconds { text += " eta=\(eta)s" }
        if let location = fields.location { text += " loc=\(location)" }
        if let reason = fields.cancellationReason { text += " reason=\"\(reason)\"" }
        if !fields.payload.isEmpty { text += " payload=\(fields.payload.count)B" }
        return text
    }

    static func json(_ change: ContentChange) -> String {
        let record = change.record
        var parts = [
            "\"kind\":\"\(change.kind)\"",
            "\"route\":\"\(change.route)\"",
            "\"epoch\":\(record.position.epoch)",
            "\"offset\":\(record.position.offset)",
            "\"time\":\"\(isoTime(millis: record.timestampMillis))\"",
            "\"to\":\(StderrLogSink.quote(record.toState.name))",
            "\"state\":\(StderrLogSink.quote(change.snapshot.state.name))",
        ]
        if let from = record.fromState { parts.append("\"from\":\(StderrLogSink.quote(from.name))") }
        let f = change.kind == .change ? record.fields : change.snapshot.fields
        if let driver = f.driverID { parts.append("\"driver_id\":\(StderrLogSink.quote(driver))") }
        if let eta = f.etaSeconds { parts.append("\"eta_seconds\":\(eta)") }
        if let location = f.location {
            parts.append("\"lat_e6\":\(location.latitudeE6),\"lon_e6\":\(location.longitudeE6)")
        }
        if let reason = f.cancellationReason { parts.append("\"cancellation_reason\":\(StderrLogSink.quote(reason))") }
        return "{" + parts.joined(separator: ",") + "}"
    }

    /// ISO 8601 UTC with milliseconds.
    static func isoTime(millis: UInt64) -> String { TimestampText.iso8601(millis: millis) }
}
