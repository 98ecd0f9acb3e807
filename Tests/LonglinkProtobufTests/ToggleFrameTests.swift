import LonglinkCore
import Testing

@testable import LonglinkProtobuf
import LonglinkTestSupport

@Suite("Feature toggles on the wire", .ownThreads)
struct ToggleFrameTests {
    let codec = ProtobufFrameCodec()

    @Test("a toggle's push and subscribed snapshot round-trip on its config route", arguments: [
        ToggleValue.bool(true), .bool(false), .rollout(percent: 0), .rollout(percent: 35), .string("night"), .string(""),
    ])
    func roundTrip(_ value: ToggleValue) throws {
        let toggle = try #require(FeatureToggle(
            app: "rider",
            name: "new_home",
            value: value,
            position: StreamPosition(epoch: 7, offset: 2),
            updatedAtMillis: 1_732_900_000_000
        ))
        for frame in [
            ServerFrame.push(Push(route: toggle.route, record: toggle.record)),
            .subscribed(Subscribed(requestID: 3, route: toggle.route, snapshot: toggle.snapshot, position: toggle.position, recovered: false)),
            .subscribed(Subscribed(requestID: 4, route: toggle.route, snapshot: toggle.snapshot, position: toggle.position, recovered: true, missed: [toggle.record])),
        ] {
            var buffer = ByteBuffer()
            try codec.encode(frame, into: &buffer)
            let decoded = try codec.decodeNextServerFrame(from: &buffer)
            #expect(decoded == frame)
        }
        #expect(toggle.route.text == "config://rider/new_home")
        #expect(toggle.record.route == toggle.route && toggle.snapshot.route == toggle.route)
        #expect(FeatureToggle(ContentChangeProbe.change(toggle))?.value == value)
    }

    @Test("rollout buckets are stable, spread over 0-99, and follow the percentage")
    func rolloutBuckets() {
        #expect(ToggleValue.bucket(userID: "rider-1", toggle: "new_home") == ToggleValue.bucket(userID: "rider-1", toggle: "new_home"))
        let buckets = (0..<2_000).map { ToggleValue.bucket(userID: "user-\($0)", toggle: "new_home") }
        #expect(buckets.allSatisfy { (0..<100).contains($0) })
        let enabled = (0..<2_000).filter { ToggleValue.rollout(percent: 30).isEnabled(toggle: "new_home", userID: "user-\($0)") }.count
        #expect((450...750).contains(enabled), "30% of 2,000 users, got \(enabled)")
        #expect(!ToggleValue.rollout(percent: 0).isEnabled(toggle: "x", userID: "u"))
        #expect(ToggleValue.rollout(percent: 100).isEnabled(toggle: "x", userID: "u"))
        #expect(ToggleValue(parsing: "25%") == .rollout(percent: 25))
        #expect(ToggleValue(parsing: "on") == .bool(true) && ToggleValue(parsing: "OFF") == .bool(false))
        #expect(ToggleValue(parsing: "120%") == .string("120%"))
    }
}

/// Builds the change a client would be told for a toggle.
enum ContentChangeProbe {
    static func change(_ toggle: FeatureToggle) -> ContentChange {
        ContentChange(route: toggle.route, record: toggle.record, snapshot: toggle.snapshot)
    }
}

extension FeatureToggle {
    /// The toggle a change carries (mirrors the client library's initializer).
    init?(_ change: ContentChange) {
        self.init(route: change.route, fields: change.snapshot.fields, position: change.snapshot.position, updatedAtMillis: change.snapshot.updatedAtMillis)
    }
}
