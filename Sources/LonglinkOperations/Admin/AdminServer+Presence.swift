import LonglinkCore
import LonglinkGateway
import LonglinkHTTP
import LonglinkJSON

/// `GET /admin/presence?route=order://taxi/8812`: who is subscribed to a route over every node, as JSON.
extension AdminServer {
    func presence(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        guard let text = request.queryValue("route"), let route = try? Route(parsingSubscription: text) else {
            return .error(.badRequest, "give ?route=order://<line>/<id> (or order://<line>/*)")
        }
        gateway.presence(of: route) { result in
            switch result {
            case .success(let reply): exchange.respond(.json(Self.json(reply)))
            case .failure(let error): exchange.respond(.error(.serviceUnavailable, "\(error)"))
            }
        }
        return nil
    }

    /// `{"route","count","users","counts_only","members":[{"user","client","connection","since_ms","node"}]}`.
    static func json(_ reply: PresenceReply) -> JSONValue {
        .object([
            ("route", .string(reply.route.text)),
            ("count", .int(Int64(reply.count))),
            ("users", .int(Int64(reply.users))),
            ("counts_only", .bool(reply.countsOnly)),
            ("members", .array(reply.members.map { member in
                .object([
                    ("user", .string(member.userID)),
                    ("client", .string(member.clientName)),
                    ("connection", .string(member.connectionID)),
                    ("since_ms", .int(Int64(clamping: member.sinceMillis))),
                    ("node", .string(member.nodeID)),
                ])
            })),
        ])
    }
}
