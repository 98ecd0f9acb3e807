import LonglinkCore
import LonglinkHTTP
import LonglinkInspect
import LonglinkJSON
import LonglinkServer

/// `longlink toggles set APP/NAME VALUE` and `longlink toggles list [APP]`: remote feature toggles through the
/// admin API of a running gateway. Values: `on`/`true`, `off`/`false`, `NN%` (rollout by user-id hash), or text.
public enum TogglesCommand {
    /// The command.
    public static let command = Command(
        name: "toggles",
        summary: "set or list remote feature toggles (config://APP/NAME) on a running gateway",
        usage: "set APP/NAME VALUE | list [APP] [options]",
        details: """
            Toggles are stored in the gateway's order store and pushed to every client subscribed to
            config://APP/NAME, like any other change. VALUE is on|true, off|false, NN% (a rollout to NN percent of
            users by a stable hash of their id), or any other text (a string value).
            Examples:
              longlink toggles set rider/new_home_screen on
              longlink toggles set rider/new_home_screen 25%
              longlink toggles set driver/map_style night
              longlink toggles list rider
            """,
        maximumPositionals: 3,
        options: [
            OptionSpec("admin", default: "127.0.0.1:9170", valueName: "HOST:PORT", help: "the gateway's operations listener"),
            OptionSpec("token", valueName: "JWT", help: "admin token (prefer LONGLINK_TOKEN: flags show in ps)"),
            OptionSpec("timeout", default: "10s", valueName: "DURATION", help: "give up after this long"),
        ]
    ) { options, context in
        let address = try HostPort(parsing: options.required("admin"), option: "admin")
        let timeout = try options.duration("timeout") ?? .seconds(10)
        let client = AdminHTTPClient(
            host: address.host,
            port: Int(address.port),
            token: options.string("token") ?? "",
            connectTimeout: timeout
        )
        /// One admin call: the JSON answer, or the refusal / unreachable gateway as a command failure.
        func call(_ method: String, _ path: String, body: JSONValue? = nil) throws(CommandFailure) -> JSONValue {
            do {
                let (_, bytes) = try client.request(method, path, json: body.map { Array($0.serialized.utf8) }, timeout: timeout)
                return (try? JSONValue.parse(bytes)) ?? .string(String(decoding: bytes, as: UTF8.self))
            } catch {
                guard let status = error.status else {
                    throw CommandFailure("cannot reach the admin API at \(address): \(error)", exitCode: 3)
                }
                throw CommandFailure("refused (\(status)): \(error)")
            }
        }
        let words = options.positionals
        switch words.first {
        case "set":
            guard words.count == 3 else { throw CommandLineError("usage: longlink toggles set APP/NAME VALUE") }
            let parts = words[1].split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let route = LonglinkToggleRoute(app: String(parts[0]), name: String(parts[1])) else {
                throw CommandLineError("'\(words[1])' is not APP/NAME (app [a-z0-9_-], name [A-Za-z0-9_.-])")
            }
            let value: JSONValue =
                switch ToggleValue(parsing: words[2]) {
                case .bool(let on): .bool(on)
                case .rollout(let percent): .object([("rollout", .int(Int64(percent)))])
                case .string(let text): .string(text)
                }
            let body = try call("PUT", "/admin/toggles/\(route.app)/\(route.name)", body: .object([("value", value)]))
            context.io.out(line(body))
            return 0
        case "list":
            let path = words.count > 1 ? "/admin/toggles?app=\(HTTPRequest.percentEncode(words[1]))" : "/admin/toggles"
            let body = try call("GET", path)
            for toggle in body["toggles"]?.arrayValue ?? [] { context.io.out(line(toggle)) }
            return 0
        default:
            throw CommandLineError("expected 'set APP/NAME VALUE' or 'list [APP]'")
        }
    }

    /// `config://rider/new_home_screen = 25% (offset 3)`.
    static func line(_ toggle: JSONValue) -> String {
        let value: String =
            switch toggle["value"] {
            case .bool(let on)?: on ? "on" : "off"
            case .object?: "\(toggle["value"]?["rollout"]?.intValue ?? 0)%"
            case .string(let text)?: "\"\(text)\""
            default: "?"
            }
        return "\(toggle["route"]?.stringValue ?? "?") = \(value) (offset \(toggle["offset"]?.intValue ?? 0))"
    }
}

/// A validated toggle address.
private struct LonglinkToggleRoute {
    let app: String
    let name: String

    init?(app: String, name: String) {
        guard FeatureToggle(app: app, name: name, value: .bool(false)) != nil else { return nil }
        self.app = app
        self.name = name
    }
}
