import LonglinkCore
import LonglinkHTTP
import Synchronization

extension AdminServer {
    /// `GET /admin/tap?route=PATTERN&line=LINE&state=STATE`: a Server-Sent Events stream of every stored record
    /// that matches, fed by the Store's `ObserverRegistry`. The observer only posts to the listener's loop, so it
    /// never slows the writer; a reader that falls behind is cut (see `HTTPExchange.send`).
    func tap(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        var pattern = RoutePattern.all
        if let text = request.queryValue("route"), !text.isEmpty {
            do { pattern = try RoutePattern(parsing: text) } catch { return .error(.badRequest, "\(error)") }
        }
        var line: BusinessLine?
        if let text = request.queryValue("line"), !text.isEmpty {
            guard let parsed = BusinessLine(text) else { return .error(.badRequest, "'\(text)' is not a business line") }
            line = parsed
        }
        let state = request.queryValue("state").flatMap { $0.isEmpty ? nil : OrderState($0) }
        exchange.startStream(
            HTTPResponse(
                status: .ok,
                headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no")]
            )
        )
        exchange.send(Array(": tap \(pattern)\n\n".utf8))
        let token = observers.observe(pattern, TapObserver(exchange: exchange, line: line, state: state), limit: 4_096)
        tapClients.add(1, ordering: .relaxed)
        exchange.onClose { [self] in
            token.cancel()
            tapClients.subtract(1, ordering: .relaxed)
            if exchange.wasCut {
                tapClientsCut.add(1, ordering: .relaxed)
                logger.notice("admin tap client cut: it fell behind")
            }
        }
        return nil
    }
}

/// Forwards matching records to one tap client as `data: {json}` events.
final class TapObserver: ContentObserver {
    let exchange: HTTPExchange
    let line: BusinessLine?
    let state: OrderState?

    init(exchange: HTTPExchange, line: BusinessLine?, state: OrderState?) {
        self.exchange = exchange
        self.line = line
        self.state = state
    }

    func contentDidChange(_ change: ContentChange) {
        if let line, change.record.line != line { return }
        if let state, change.record.toState != state { return }
        var text = "data: "
        AdminJSON.record(change.record, route: change.route).write(into: &text)
        text += "\n\n"
        exchange.send(Array(text.utf8))
    }
}
