/// Line-wide routes: `order://taxi/*`, every order of one business line (or every toggle of one app), as one
/// subscription. A line-wide route is a `Route` whose key is `*`, a character no order id may contain, so it can
/// never be mistaken for one order's route; it names a subscription, never a record (records keep their order's
/// route, and so do the pushes a line-wide subscriber receives).
extension Route {
    /// The line-wide route of `namespace` within `kind`: `order://taxi/*`.
    public static func lineWide(_ kind: RouteKind, _ namespace: String) -> Route {
        Route(scheme: kind.scheme, namespace: namespace, key: "*")
    }

    /// Whether this is a line-wide route (`kind://namespace/*`). One byte compared: no string is built.
    public var isLineWide: Bool { keyIsWildcard }

    /// Whether this line-wide route covers `route` (a route of its kind and namespace), without building strings.
    public func lineCovers(_ route: Route) -> Bool {
        guard isLineWide, !route.isLineWide else { return false }
        let prefix = text.utf8.dropLast()  // "order://taxi/"
        return route.text.utf8.count > prefix.count && route.text.utf8.starts(with: prefix)
    }

    /// Parses what a client may subscribe to: one route (`order://taxi/8812`) or a line-wide route
    /// (`order://taxi/*`).
    public init(parsingSubscription text: String) throws(RouteError) {
        guard text.hasSuffix("/*") else {
            self = try Route(parsing: text)
            return
        }
        let probe = try Route(parsing: String(text.dropLast(1)) + "x")
        self = .lineWide(probe.kind, probe.namespace)
    }
}

extension RouteRegistry {
    /// Parses one route or a line-wide route (`subscribe order://taxi/*`) and checks that its kind is served.
    public func subscriptionRoute(parsing text: String) throws(RouteError) -> Route {
        let route = try Route(parsingSubscription: text)
        guard entry(for: route.kind) != nil else { throw .unknownKind(text) }
        return route
    }
}

extension RoutePattern {
    /// The routes a subscription to `route` delivers: the route itself, or every route of a line-wide route's line.
    public init(subscription route: Route) {
        self = route.isLineWide ? .namespace(route.kind, route.namespace) : .exact(route)
    }
}
