@testable import LonglinkCore
import LonglinkTestSupport
import Testing

@Suite("RouteKey: the fan-out's lookups by route", .ownThreads)
struct RouteKeyTests {
    static let lines: [BusinessLine] = [.taxi, .express, .premium, .carpool, BusinessLine("bike-share")!, BusinessLine("x")!]

    static func record(_ id: String, _ line: BusinessLine, kind: RouteKind = .order) -> OrderChangeRecord {
        OrderChangeRecord(
            orderID: OrderID(id)!, line: line, fromState: nil, toState: "created", fields: OrderFields(),
            position: StreamPosition(epoch: 1, offset: 1), timestampMillis: 1, kind: kind
        )
    }

    @Test("a record's digests, read off the record, are its route key's and its route's, line-wide too")
    func digestsOfRecords() throws {
        for line in Self.lines {
            for id in ["8812", "a", "order-with-a-long-id-0123456789"] {
                for kind in [RouteKind.order, .config] {
                    let record = Self.record(id, line, kind: kind)
                    let key = RouteKey(record)
                    #expect(RouteKey.filterDigest(of: record) == key.filterDigest, "\(record.route)")
                    #expect(RouteKey.filterDigest(of: record) == RouteKey(record.route).filterDigest, "\(record.route)")
                    #expect(RouteKey.lineWideFilterDigest(of: record) == key.lineWide.filterDigest, "\(record.route)")
                    let lineRoute = try Route(parsingSubscription: "\(kind.scheme)://\(line.name)/*")
                    #expect(RouteKey.lineWideFilterDigest(of: record) == RouteKey(lineRoute).filterDigest)
                    #expect(RouteKey.lineWideFilterDigest(of: record) != RouteKey.filterDigest(of: record))
                }
            }
        }
        // Different lines, kinds or ids give different digests.
        let digests = Set(Self.lines.flatMap { line in
            ["1", "2", "3"].flatMap { id in [RouteKind.order, .config].map { RouteKey.filterDigest(of: Self.record(id, line, kind: $0)) } }
        })
        #expect(digests.count == Self.lines.count * 3 * 2)
    }

    @Test("a line made from its bytes equals the one made from its text, hash included, built-in or not")
    func linesFromBytes() {
        for line in Self.lines {
            let fromBytes = Array(line.name.utf8).withUnsafeBufferPointer { BusinessLine(utf8: $0) }
            #expect(fromBytes == line)
            #expect(fromBytes?.nameHash == line.nameHash)
            #expect(fromBytes?.hashValue == line.hashValue)
        }
        #expect(BusinessLine("taxi") != BusinessLine("taxis"))
    }

    @Test("a dictionary keyed by route keys finds every key, keys sharing an order id apart, and copies intact")
    func dictionary() {
        var table: [RouteKey: Int] = [:]
        var keys: [RouteKey] = []
        for index in 0..<3_000 {
            // Every id is held by two lines and by both kinds: the table's hash is the id's alone.
            let line = Self.lines[index % Self.lines.count]
            let kind: RouteKind = index % 7 == 0 ? .config : .order
            let key = RouteKey(Self.record(String(index / 2), line, kind: kind))
            if table[key] == nil { keys.append(key) }
            table[key] = index
        }
        #expect(table.count == keys.count)
        for key in keys { #expect(table[key] != nil) }
        #expect(table[RouteKey(Self.record("999999", .taxi))] == nil)
        // Into a table of another size (another seed), in the first one's order: every key.
        var copy: [RouteKey: Int] = [:]
        for (key, value) in table { copy[key] = value }
        #expect(copy == table)
        let sameID = RouteKey(Self.record("5", .taxi))
        let otherLine = RouteKey(Self.record("5", .express))
        #expect(sameID != otherLine)
        #expect(Set([sameID, otherLine, sameID]).count == 2)
    }
}
