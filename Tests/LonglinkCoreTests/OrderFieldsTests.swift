import LonglinkCore
import Testing
import LonglinkTestSupport

/// `OrderFields` shares one box between copies and keeps the payload apart: a driver id of any length must read,
/// merge and compare as the same value whichever way it was set.
@Suite("OrderFields", .ownThreads)
struct OrderFieldsTests {
    static let short = "driver-4711"  // 11 bytes
    static let fifteen = "d-0123456789abc"  // 15 bytes: Swift's longest small string
    static let long = "driver-0123456789-abcdef"  // 24 bytes
    static let multibyte = "司机-42"  // 9 UTF-8 bytes

    @Test("a driver id reads back as written, and an emptied value is empty", arguments: [
        short, fifteen, long, multibyte, "",
    ])
    func roundTrip(_ id: String) {
        let fields = OrderFields(driverID: id)
        #expect(fields.driverID == id)
        #expect(!fields.isEmpty)
        var set = OrderFields()
        #expect(set.isEmpty)
        set.driverID = id
        #expect(set.driverID == id)
        #expect(set == fields)
        #expect(set.hashValue == fields.hashValue)
        set.driverID = nil
        #expect(set.driverID == nil)
        #expect(set.isEmpty, "clearing the only field leaves no box")
        #expect(set == OrderFields())
    }

    @Test("merging replaces a driver id and keeps the other fields")
    func mergingDrivers() {
        let ids = [Self.short, Self.fifteen, Self.long, Self.multibyte]
        for old in ids {
            for new in ids {
                let snapshot = OrderFields(driverID: old, etaSeconds: 120, cancellationReason: "rider", payload: [1, 2])
                let merged = snapshot.merging(OrderFields(driverID: new))
                #expect(merged.driverID == new, "\(old) → \(new)")
                #expect(merged.etaSeconds == 120)
                #expect(merged.cancellationReason == "rider")
                #expect(merged.payload == [1, 2])
                #expect(merged == OrderFields(driverID: new, etaSeconds: 120, cancellationReason: "rider", payload: [1, 2]))
            }
        }
        // A change without a driver keeps the snapshot's.
        for old in ids {
            let merged = OrderFields(driverID: old).merging(OrderFields(etaSeconds: 30, location: GeoPoint(latitudeE6: 1, longitudeE6: 2)))
            #expect(merged.driverID == old)
            #expect(merged.etaSeconds == 30)
            #expect(merged.location == GeoPoint(latitudeE6: 1, longitudeE6: 2))
        }
    }

    @Test("fields that differ only in one value are different")
    func inequality() {
        let base = OrderFields(driverID: Self.short, etaSeconds: 60, location: GeoPoint(latitudeE6: 5, longitudeE6: 6))
        #expect(base != OrderFields(driverID: Self.fifteen, etaSeconds: 60, location: GeoPoint(latitudeE6: 5, longitudeE6: 6)))
        #expect(base != OrderFields(driverID: Self.short, etaSeconds: 61, location: GeoPoint(latitudeE6: 5, longitudeE6: 6)))
        #expect(base != OrderFields(driverID: Self.short, etaSeconds: 60, location: GeoPoint(latitudeE6: 5, longitudeE6: 7)))
        #expect(base != OrderFields(driverID: Self.short, etaSeconds: 60))
        #expect(OrderFields(driverID: Self.long) != OrderFields(driverID: Self.long + "x"))
        #expect(OrderFields(etaSeconds: 0) != OrderFields(), "an ETA of 0 is set")
    }
}
