import LonglinkCore
import LonglinkHTTP
import LonglinkJSON
import Synchronization

extension AdminServer {
    /// `GET /admin/tap?route=PATTERN&line=LINE&state=STATE&recent=N`: a Server-Sent Events stream of every stored
    /// record that matches, fed by the Store's `ObserverRegistry`; with `recent=N`, the last N matching records this
    /// node stored (at most 200) come first. The observer only posts to the listener's loop, so it
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
        let observer = TapObserver(exchange: exchange, pattern: pattern, line: line, state: state)
        if let count = request.queryValue("recent").flatMap({ Int($0) }), count > 0 {
            let backlog = recent.changes.filter(observer.matches).suffix(count)
            for change in backlog { observer.contentDidChange(change) }
        }
        let token = observers.observe(pattern, observer, limit: 4_096)
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
    let pattern: RoutePattern
    let line: BusinessLine?
    let state: OrderState?

    init(exchange: HTTPExchange, pattern: RoutePattern, line: BusinessLine?, state: OrderState?) {
        self.exchange = exchange
        self.pattern = pattern
        self.line = line
        self.state = state
    }

    /// Whether the tap's filters admit `change`.
    func matches(_ change: ContentChange) -> Bool {
        pattern.matches(change.route) && (line.map { change.record.line == $0 } ?? true)
            && (state.map { change.record.toState == $0 } ?? true)
    }

    func contentDidChange(_ change: ContentChange) {
        guard matches(change) else { return }
        var text = "data: "
        AdminJSON.record(change.record, route: change.route).write(into: &text)
        text += "\n\n"
        exchange.send(Array(text.utf8))
    }
}
