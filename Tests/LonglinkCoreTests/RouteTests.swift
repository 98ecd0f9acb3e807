import LonglinkCore
import Testing
import LonglinkTestSupport

@Suite("Routes are addresses", .ownThreads)
struct RouteTests {
    @Test("order routes parse into line and id and print canonically")
    func parseOrderRoute() throws {
        let route = try Route(parsing: "order://taxi/8812")
        #expect(route.kind == .order)
        #expect(route.order?.line == .taxi)
        #expect(route.order?.id == OrderID("8812"))
        #expect(route.text == "order://taxi/8812")
        #expect(route == Route.order(.taxi, OrderID("8812")!))
    }

    @Test(
        "malformed routes are refused with the reason",
        arguments: [
            ("taxi/8812", RouteError.missingScheme("taxi/8812")),
            ("Order://taxi/1", .invalidScheme("Order://taxi/1")),
            ("order://taxi", .wrongShape("order://taxi")),
            ("order://taxi/1/2", .wrongShape("order://taxi/1/2")),
            ("order://Taxi/1", .invalidNamespace("order://Taxi/1")),
            ("order:///1", .invalidNamespace("order:///1")),
            ("order://taxi/", .invalidKey("order://taxi/")),
            ("order://taxi/a b", .invalidKey("order://taxi/a b")),
            ("order://taxi/\(String(repeating: "9", count: 65))", .invalidKey("order://taxi/\(String(repeating: "9", count: 65))")),
        ]
    )
    func malformed(text: String, expected: RouteError) {
        #expect(throws: expected) { try Route(parsing: text) }
    }

    @Test("patterns match exactly, by namespace, by kind, or everything")
    func patterns() throws {
        let route = Route.order(.taxi, OrderID("1")!)
        let other = Route.order(.express, OrderID("1")!)
        #expect(try RoutePattern(parsing: "order://taxi/1").matches(route))
        #expect(!(try RoutePattern(parsing: "order://taxi/2").matches(route)))
        #expect(try RoutePattern(parsing: "order://taxi/*").matches(route))
        #expect(!(try RoutePattern(parsing: "order://taxi/*").matches(other)))
        #expect(try RoutePattern(parsing: "order://*").matches(other))
        #expect(!(try RoutePattern(parsing: "config://*").matches(other)))
        #expect(try RoutePattern(parsing: "*").matches(other))
        #expect(try RoutePattern(parsing: "order://taxi/*").description == "order://taxi/*")
        #expect(throws: RouteError.self) { try RoutePattern(parsing: "order://TAXI/*") }
    }

    @Test("the registry refuses kinds it does not serve")
    func registry() throws {
        let registry = RouteRegistry([.init(kind: .order, allowsExternalSubscribe: true)])
        #expect(try registry.route(parsing: "order://taxi/1").kind == .order)
        #expect(throws: RouteError.unknownKind("config://app/x")) { try registry.route(parsing: "config://app/x") }
        #expect(RouteRegistry.standard.entry(for: .config)?.allowsExternalSubscribe == true)
    }

    @Test("identifiers validate their characters and lengths")
    func identifiers() {
        #expect(OrderID("A-1_b.2") != nil)
        #expect(OrderID("") == nil)
        #expect(OrderID("a/b") == nil)
        #expect(BusinessLine("taxi_2") != nil)
        #expect(BusinessLine("Taxi") == nil)
        #expect(BusinessLine(String(repeating: "a", count: 33)) == nil)
    }

    @Test("positions order by epoch then offset; fixed-point locations print as degrees")
    func positionsAndLocations() {
        #expect(StreamPosition(epoch: 1, offset: 9) < StreamPosition(epoch: 2, offset: 1))
        #expect(StreamPosition(epoch: 1, offset: 9).description == "1:9")
        #expect(GeoPoint(latitudeE6: 39_904_200, longitudeE6: -116_407_396).description == "39.904200,-116.407396")
        #expect(!GeoPoint(latitudeE6: 91_000_000, longitudeE6: 0).isValid)
        let merged = OrderFields(driverID: "d1", etaSeconds: 300).merging(OrderFields(etaSeconds: 120))
        #expect(merged == OrderFields(driverID: "d1", etaSeconds: 120))
        // A change that sets every field the snapshot holds (and more) is the merge itself.
        let location = GeoPoint(latitudeE6: 1, longitudeE6: 2)
        let covering = OrderFields(driverID: "d2", etaSeconds: 60, location: location, payload: [7])
        #expect(OrderFields(driverID: "d1", etaSeconds: 300).merging(covering) == covering)
        #expect(OrderFields(payload: [1, 2]).merging(OrderFields(payload: [3])) == OrderFields(payload: [3]))
        #expect(
            OrderFields(cancellationReason: "rider", payload: [1]).merging(OrderFields(payload: [3]))
                == OrderFields(cancellationReason: "rider", payload: [3]))
    }
}
