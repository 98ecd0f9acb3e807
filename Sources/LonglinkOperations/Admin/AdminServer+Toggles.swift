import LonglinkCore
import LonglinkHTTP
import LonglinkJSON
import LonglinkStores

extension AdminServer {
    /// `GET /admin/toggles[?app=]`, `GET|PUT|DELETE /admin/toggles/{app}/{name}`.
    func toggleEndpoint(_ path: [String], method: String, _ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        guard let toggles else { return .error(.notFound, "this node serves no feature toggles") }
        if path.count == 1 {
            toggles.list(app: request.queryValue("app")) { result in
                exchange.respond(
                    result.map { .json(.object([("toggles", .array($0.map(Self.json)))])) }.mapError { $0 }.get(or: AdminJSON.refusal)
                )
            }
            return nil
        }
        let app = path[1]
        let name = path[2]
        switch method {
        case "GET":
            toggles.read(app: app, name: name) { result in
                switch result {
                case .success(let read):
                    if let toggle = read.toggle {
                        exchange.respond(.json(Self.json(toggle)))
                    } else {
                        exchange.respond(.error(.notFound, "no toggle \(app)/\(name)"))
                    }
                case .failure(let error): exchange.respond(AdminJSON.refusal(error))
                }
            }
            return nil
        case "PUT":
            guard let body = try? JSONValue.parse(request.body), let value = Self.toggleValue(body["value"]) else {
                return .error(.badRequest, "expected {\"value\": true|false|\"NN%\"|\"text\"} or {\"value\": {\"rollout\": NN}}")
            }
            guard FeatureToggle(app: app, name: name, value: value) != nil else {
                return .error(.badRequest, "app must be [a-z0-9_-] (at most 32) and name [A-Za-z0-9_.-] (at most 64)")
            }
            toggles.set(app: app, name: name, value: value) { result in
                switch result {
                case .success(let toggle): exchange.respond(.json(Self.json(toggle)))
                case .failure(let error): exchange.respond(AdminJSON.refusal(error))
                }
            }
            return nil
        default:
            return .error(.methodNotAllowed, "toggles are switched off, not deleted: PUT {\"value\": false}")
        }
    }

    static func toggleValue(_ value: JSONValue?) -> ToggleValue? {
        switch value {
        case .bool(let on)?: return .bool(on)
        case .string(let text)?: return ToggleValue(parsing: text)
        case .object?:
            guard let percent = value?["rollout"]?.intValue, (0...100).contains(percent) else { return nil }
            return .rollout(percent: Int(percent))
        default: return nil
        }
    }

    static func json(_ toggle: FeatureToggle) -> JSONValue {
        let value: JSONValue =
            switch toggle.value {
            case .bool(let on): .bool(on)
            case .rollout(let percent): .object([("rollout", .int(Int64(percent)))])
            case .string(let text): .string(text)
            }
        return .object([
            ("route", .string(toggle.route.text)),
            ("app", .string(toggle.app)),
            ("name", .string(toggle.name)),
            ("value", value),
            ("offset", .int(Int64(clamping: toggle.position.offset))),
            ("updated_ms", .int(Int64(clamping: toggle.updatedAtMillis))),
        ])
    }
}

extension Result {
    /// The success value, or `failure`'s mapping.
    fileprivate func get(or failure: (Failure) -> Success) -> Success {
        switch self {
        case .success(let value): value
        case .failure(let error): failure(error)
        }
    }
}
