import LonglinkCore
import Testing
import LonglinkTestSupport

@Suite("LocalPresence", .ownThreads)
struct LocalPresenceTests {
    private let route = try! Route(parsing: "order://taxi/8812")

    private func member(_ index: Int, node: String = "node-a", since: UInt64? = nil) -> PresenceMember {
        PresenceMember(
            userID: "user-\(index % 7)", clientName: "rider-app/\(index)", connectionID: "c\(index)",
            sinceMillis: since ?? UInt64(1_000 + index), nodeID: node
        )
    }

    @Test("a member joins, is replaced by a second join of its connection, and leaves")
    func joinReplaceLeave() {
        let presence = LocalPresence()
        presence.joined(route, member(1))
        presence.joined(route, member(2, node: "node-b"))
        presence.joined(route, member(1, since: 5_000))
        #expect(presence.localCount(of: route) == 2)
        #expect(Set(presence.members(of: route)) == [member(1, since: 5_000), member(2, node: "node-b")])
        presence.left(route, connectionID: "c1")
        #expect(presence.members(of: route) == [member(2, node: "node-b")])
        presence.left(route, connectionID: "c9")  // not a member: no effect
        presence.left(route, connectionID: "c2")
        #expect(presence.localCount(of: route) == 0)
        #expect(presence.routesWithMembers.isEmpty)
    }

    @Test("client names stay right when a rejoin changes them and when a name's last member leaves")
    func clientNames() {
        let presence = LocalPresence()
        let renamed = PresenceMember(userID: "u", clientName: "web/2", connectionID: "c1", sinceMillis: 7, nodeID: "node-a")
        presence.joined(route, member(1))
        presence.joined(route, renamed)
        presence.joined(route, member(2))
        #expect(Set(presence.members(of: route)) == [renamed, member(2)])
        presence.left(route, connectionID: "c1")
        presence.left(route, connectionID: "c2")
        // Names no longer used are forgotten and their slots reused: every member still reads its own name.
        let fresh = (10..<14).map { member($0, node: "node-\($0 % 2)") }
        for each in fresh { presence.joined(route, each) }
        presence.joined(route, renamed)
        #expect(Set(presence.members(of: route)) == Set(fresh + [renamed]))
    }

    @Test("a route with many members keeps every one exactly once through joins, rejoins and leaves", arguments: [3, 17, 40, 500])
    func manyMembers(count: Int) {
        let presence = LocalPresence()
        let other = try! Route(parsing: "order://taxi/1")
        for index in 0..<count { presence.joined(route, member(index)) }
        presence.joined(other, member(0))
        for index in stride(from: 0, to: count, by: 3) { presence.joined(route, member(index, since: 9_000)) }
        var expected = Set((0..<count).map { $0 % 3 == 0 ? member($0, since: 9_000) : member($0) })
        #expect(presence.localCount(of: route) == count)
        #expect(Set(presence.members(of: route)) == expected)
        // Leave in an order unlike the joins, through the thresholds where positions are kept and dropped.
        for index in (0..<count).reversed() where index % 2 == 1 {
            presence.left(route, connectionID: "c\(index)")
            expected.remove(index % 3 == 0 ? member(index, since: 9_000) : member(index))
        }
        #expect(presence.localCount(of: route) == expected.count)
        #expect(Set(presence.members(of: route)) == expected)
        for index in 0..<count where index % 2 == 0 { presence.left(route, connectionID: "c\(index)") }
        #expect(presence.localCount(of: route) == 0)
        #expect(presence.routesWithMembers == [other])
        #expect(presence.members(of: other) == [member(0)])
    }
}
