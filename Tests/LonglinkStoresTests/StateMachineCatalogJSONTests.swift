import Foundation
import LonglinkCore
import LonglinkStores
import Testing
import LonglinkTestSupport

@Suite("StateMachineCatalog JSON", .ownThreads)
struct StateMachineCatalogJSONTests {
    func temporaryFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("longlink-machines-\(UInt64.random(in: 0...UInt64.max)).json").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("the built-in catalog round-trips through a JSON file")
    func roundTrip() throws {
        let path = try temporaryFile(String(decoding: try StateMachineCatalog.builtIn.jsonData(), as: UTF8.self))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try StateMachineCatalog.load(jsonFile: path) == .builtIn)
    }

    @Test("a hand-written file with omitted defaults loads")
    func handWritten() throws {
        let catalog = try StateMachineCatalog.load(
            jsonData: Data(
                """
                { "lines": [ { "line": "bus", "initial": "booked",
                  "states": [ { "name": "booked", "next": ["boarded", "cancelled"] },
                              { "name": "boarded", "next": ["done"] },
                              { "name": "done", "terminal": true },
                              { "name": "cancelled", "terminal": true, "requires": ["cancellation_reason"] } ] } ] }
                """.utf8
            )
        )
        let line = try #require(BusinessLine("bus"))
        let bus = try #require(catalog.machine(for: line))
        #expect(bus.allowedNext(from: "booked") == ["boarded", "cancelled"])
        #expect(bus.requiredFields(for: "cancelled") == [.cancellationReason])
    }

    @Test("an invalid machine names its line and state")
    func invalidMachine() throws {
        let json = """
            { "lines": [ { "line": "bus", "initial": "booked",
              "states": [ { "name": "booked", "next": ["gone"] }, { "name": "done", "terminal": true } ] } ] }
            """
        let path = try temporaryFile(json)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(
            throws: StateMachineLoadError.invalid(.unknownState(line: "bus", state: "gone", referencedFrom: "booked"))
        ) {
            try StateMachineCatalog.load(jsonFile: path)
        }
    }

    @Test("malformed JSON names where it went wrong, with line and state names")
    func malformed() throws {
        let json = """
            { "lines": [ { "line": "bus", "initial": "a", "states": [ { "name": "a", "next": "b" } ] } ] }
            """
        do {
            _ = try StateMachineCatalog.load(jsonData: Data(json.utf8))
            Issue.record("expected an error")
        } catch {
            let text = "\(error)"
            #expect(text.contains("(bus)") && text.contains("(a)") && text.contains("next"), "\(text)")
        }
        #expect(throws: StateMachineLoadError.self) { try StateMachineCatalog.load(jsonData: Data("not json".utf8)) }
        #expect(throws: StateMachineLoadError.self) {
            try StateMachineCatalog.load(jsonData: Data(#"{ "lines": [ { "line": "bus" } ] }"#.utf8))
        }
    }

    @Test("a missing file is reported with its path")
    func unreadable() {
        do {
            _ = try StateMachineCatalog.load(jsonFile: "/nonexistent/machines.json")
            Issue.record("expected an error")
        } catch {
            guard case .unreadable(let path, _) = error else {
                Issue.record("expected unreadable, got \(error)")
                return
            }
            #expect(path == "/nonexistent/machines.json")
        }
    }
}
