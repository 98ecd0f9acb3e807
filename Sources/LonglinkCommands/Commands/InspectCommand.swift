import Foundation
import LonglinkCore
import LonglinkInspect
import LonglinkServer

/// `longlink inspect decode|pcap|tap|connections`: what went over the wire, from files, captures or a live
/// gateway. The work is in the LonglinkInspect module; this file maps options onto it.
public enum InspectCommand {
    /// The command.
    public static let command = Command(
        name: "inspect",
        summary: "decode frames from files and pcap captures, follow a gateway live, list its connections",
        usage: "decode [FILE|-] | pcap FILE | tap | connections  [options]",
        details: """
            modes:
              decode [FILE|-]   length-prefixed frames (binary, --hex or --base64) from FILE or stdin, one line each
              pcap FILE         TCP sessions in a tcpdump/tshark capture (pcap or pcapng), both directions
              tap               live records of a running gateway (admin listener, --server, admin token)
              connections       the gateway's connected clients as a table (admin listener)
            Exit code: 0 = clean, 1 = malformed frames or framing errors found, 2 = usage, 3 = unreachable.
            """,
        options: [
            OptionSpec("hex", kind: .flag, help: "decode: input is hex text", configurable: false),
            OptionSpec("base64", kind: .flag, help: "decode: input is base64 text", configurable: false),
            OptionSpec("direction", default: "auto", valueName: "client|server|auto",
                       help: "decode: frame direction (auto: by frame kind)", configurable: false),
            OptionSpec("json", kind: .flag, help: "print JSON lines", configurable: false),
            OptionSpec("verbose", kind: .flag, help: "print every field of each frame", configurable: false),
            OptionSpec("max-frame-size", default: "65536", valueName: "BYTES",
                       help: "decode/pcap: largest frame body accepted", configurable: false),
            OptionSpec("no-resync", kind: .flag, help: "decode/pcap: stop at the first framing error", configurable: false),
            OptionSpec("port", default: "7070", valueName: "PORT",
                       help: "pcap: the gateway's TCP port (0: any port, server side by SYN)", configurable: false),
            OptionSpec("server", default: "127.0.0.1:9170", valueName: "HOST:PORT",
                       help: "tap/connections: the gateway's admin listener (serve --metrics-listen)", configurable: false),
            OptionSpec("token", valueName: "TOKEN", help: "tap/connections: admin token (prefer LONGLINK_TOKEN)"),
            OptionSpec("route", valueName: "PATTERN", help: "tap: only records on matching routes", configurable: false),
            OptionSpec("line", valueName: "LINE", help: "tap: only this business line", configurable: false),
            OptionSpec("state", valueName: "STATE", help: "tap: only records entering this state", configurable: false),
            OptionSpec("stats", kind: .flag, help: "tap: print a rate summary every second (stderr)", configurable: false),
            OptionSpec("count", valueName: "N", help: "tap: exit after N records", configurable: false),
            OptionSpec("duration", valueName: "DURATION", help: "tap: exit after this long", configurable: false),
            OptionSpec("sort", default: "id", valueName: "FIELD",
                       help: "connections: sort by id|address|user|client|subscriptions|outbound|idle|loop|tls (-FIELD: descending)",
                       configurable: false),
            OptionSpec("filter", valueName: "TEXT", help: "connections: only rows containing TEXT", configurable: false),
            OptionSpec("timeout", default: "10s", valueName: "DURATION",
                       help: "tap/connections: give up connecting after this long", configurable: false),
        ]
    ) { options, context in
        guard let mode = options.positionals.first else {
            throw CommandLineError("give a mode: decode, pcap, tap or connections")
        }
        let arguments = Array(options.positionals.dropFirst())
        switch mode {
        case "decode": return try decode(arguments, options, context)
        case "pcap": return try pcap(arguments, options, context)
        case "tap": return try await InspectAdminModes.tap(arguments, options, context)
        case "connections": return try await InspectAdminModes.connections(arguments, options, context)
        default: throw CommandLineError("unknown mode '\(mode)': use decode, pcap, tap or connections")
        }
    }

    static func style(_ options: ResolvedOptions) throws(CommandLineError) -> FrameRenderer.Style {
        if options.flag("json") && options.flag("verbose") { throw CommandLineError("--json and --verbose exclude each other") }
        return options.flag("json") ? .json : options.flag("verbose") ? .verbose : .line
    }

    static func streamDecoder(_ options: ResolvedOptions) throws(CommandLineError) -> FrameStreamDecoder {
        guard let direction = DirectionChoice(rawValue: options.string("direction") ?? "auto") else {
            throw CommandLineError("--direction expects client, server or auto")
        }
        let maxFrameSize = try options.bytes("max-frame-size") ?? FrameReader.defaultMaxFrameSize
        guard maxFrameSize > 0 else { throw CommandLineError("--max-frame-size must be positive") }
        return FrameStreamDecoder(direction: direction, maxFrameSize: maxFrameSize, resynchronise: !options.flag("no-resync"))
    }

    private static func decode(_ arguments: [String], _ options: ResolvedOptions, _ context: CommandContext) throws -> Int32 {
        guard arguments.count <= 1 else { throw CommandLineError("decode takes one FILE (or - for stdin)") }
        if options.flag("hex") && options.flag("base64") { throw CommandLineError("--hex and --base64 exclude each other") }
        let encoding: InputEncoding = options.flag("hex") ? .hex : options.flag("base64") ? .base64 : .binary
        let style = try style(options)
        let decoder = try streamDecoder(options)
        let input = try readInput(arguments.first ?? "-")
        let bytes: [UInt8]
        do {
            bytes = try encoding.decode(input)
        } catch {
            throw CommandFailure("cannot read \(encoding.rawValue) input: \(error)", exitCode: 1)
        }
        let renderer = FrameRenderer(style: style)
        var tally = FrameTally()
        for event in decoder.decode(bytes) {
            tally.count(event)
            context.io.out(renderer.render(event))
        }
        context.io.err(tally.summary(style: .line))
        return tally.isClean ? 0 : 1
    }

    private static func pcap(_ arguments: [String], _ options: ResolvedOptions, _ context: CommandContext) throws -> Int32 {
        guard arguments.count == 1 else { throw CommandLineError("pcap takes one capture FILE") }
        guard let port = try options.int("port"), (0...65_535).contains(port) else {
            throw CommandLineError("--port expects 0…65535")
        }
        let data = try readInput(arguments[0])
        let analysis: CaptureAnalysis
        do {
            analysis = try CaptureAnalysis(capture: data, serverPort: UInt16(port), decoder: try streamDecoder(options))
        } catch {
            throw CommandFailure("cannot read capture \(arguments[0]): \(error)", exitCode: 1)
        }
        let renderer = FrameRenderer(style: try style(options))
        for line in analysis.lines(renderer) { context.io.out(line) }
        return analysis.tally.isClean ? 0 : 1
    }

    /// The whole of FILE, or of stdin for `-`.
    static func readInput(_ path: String) throws -> [UInt8] {
        if path == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("cannot read \(path)", exitCode: 2)
        }
        return Array(data)
    }
}

/// `inspect tap` and `inspect connections`: HTTP clients of the gateway's admin listener.
enum InspectAdminModes {
    static func client(_ options: ResolvedOptions, _ context: CommandContext) throws -> AdminHTTPClient {
        let server = try HostPort(parsing: options.required("server"), option: "server")
        let token = options.string("token") ?? context.environment["LONGLINK_TOKEN"] ?? ""
        return AdminHTTPClient(
            host: server.host, port: Int(server.port), token: token,
            connectTimeout: try options.duration("timeout") ?? .seconds(10))
    }

    /// An admin failure as a command failure: unreachable or not served (404) = 3, refused token = 1.
    static func failure(_ error: AdminError, _ options: ResolvedOptions, path: String) -> CommandFailure {
        let server = options.string("server") ?? "?"
        switch error.status {
        case 404?:
            return CommandFailure(
                "\(server) does not serve \(path) (404): is it the gateway's admin listener (serve --metrics-listen)?",
                exitCode: 3)
        case 401?, 403?:
            return CommandFailure("\(server) refused the admin token (HTTP \(error.status!)): set --token or LONGLINK_TOKEN")
        case nil: return CommandFailure("\(error)", exitCode: 3)
        default: return CommandFailure("\(error)")
        }
    }

    static func tap(_ arguments: [String], _ options: ResolvedOptions, _ context: CommandContext) async throws -> Int32 {
        guard arguments.isEmpty else { throw CommandLineError("tap takes no arguments (filters are --route, --line, --state)") }
        let session = TapSession(
            client: try client(options, context), route: options.string("route"), line: options.string("line"),
            state: options.string("state"))
        let limit = try options.int("count")
        let deadline = try options.duration("duration").map { ContinuousClock.now + $0 }
        let colour = context.io.stdoutIsTerminal
        let stats = options.flag("stats")
        let io = context.io
        let printed: Int
        do {
            printed = try await BlockingWork.run { () throws(AdminError) -> Int in
                try session.run(
                    colour: colour, stats: stats, limit: limit, deadline: deadline,
                    out: { io.out($0) }, note: { io.err($0) })
            }
        } catch {
            throw failure(error, options, path: "/admin/tap")
        }
        if let limit, printed < limit { return 1 }
        return 0
    }

    static func connections(_ arguments: [String], _ options: ResolvedOptions, _ context: CommandContext) async throws -> Int32 {
        guard arguments.isEmpty else { throw CommandLineError("connections takes no arguments") }
        let table: ConnectionTable
        do {
            table = try ConnectionTable(sort: options.string("sort") ?? "id", filter: options.string("filter"))
        } catch {
            throw CommandLineError(error.message)
        }
        let client = try client(options, context)
        let rows: [AdminConnection]
        do {
            rows = try await BlockingWork.run { () throws(AdminError) -> [AdminConnection] in
                let (_, body) = try client.get("/admin/connections")
                return try AdminConnection.list(json: body)
            }
        } catch {
            throw failure(error, options, path: "/admin/connections")
        }
        if options.flag("json") {
            for row in table.rows(rows) { context.io.out(row.json) }
        } else {
            for line in table.render(rows) { context.io.out(line) }
        }
        return 0
    }
}
