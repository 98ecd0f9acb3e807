import Foundation
import LonglinkCore
import LonglinkTestSupport
@testable import LonglinkSQLite

/// A fresh temporary directory, removed (with everything in it) when the value is released.
final class TestDirectory: Sendable {
    /// The directory's absolute path.
    let path: String

    init() {
        var template = Array("\(TestDirectory.root)/t.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: \(errno)")
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside the directory.
    func file(_ name: String) -> String { "\(path)/\(name)" }

    /// One root per test process, removed at exit (stores made by the contract factory live there).
    static let root: String = {
        let root = "\(NSTemporaryDirectory())longlink-sqlite-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestDirectory.root) }
        return root
    }()
}

extension OrderStoreFactory {
    /// SQLiteOrderStore on a new file for every `make`; `reopen` opens the old store's file again.
    static let sqlite = OrderStoreFactory(
        name: "sqlite",
        make: { setup in
            // Kept until the process ends (the root is removed at exit).
            let path = "\(TestDirectory.root)/\(UInt64.random(in: 0...UInt64.max)).sqlite"
            return try SQLiteOrderStore(
                path: path,
                catalog: setup.catalog,
                retention: setup.retention,
                clock: setup.clock
            )
        },
        reopen: { setup, old in
            guard let old = old as? SQLiteOrderStore else { preconditionFailure("not a SQLiteOrderStore") }
            return try SQLiteOrderStore(
                path: old.path,
                catalog: setup.catalog,
                retention: setup.retention,
                clock: setup.clock
            )
        }
    )
}

/// Small helpers for the SQLite tests.
enum SQLiteTesting {
    /// The error `body` throws, or nil.
    static func error<T>(_ body: () throws(StoreError) -> T) -> StoreError? {
        OrderFixtures.storeError(body)
    }

    /// The error of a failed result, or nil.
    static func failure<T>(_ result: Result<T, StoreError>) -> StoreError? {
        if case .failure(let error) = result { error } else { nil }
    }

    /// Whether a `StoreError` is `.storage` and its text contains every fragment (case-insensitive).
    static func isStorage(_ error: StoreError?, mentioning fragments: String...) -> Bool {
        guard case .storage(let text, _) = error else { return false }
        let lower = text.lowercased()
        return fragments.allSatisfy { lower.contains($0.lowercased()) }
    }

    /// Runs a shell-free command (e.g. chattr) and returns its exit status (-1 if it could not start or ran past
    /// 60 s and was killed).
    static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        guard let child = try? ChildProcess(executable, arguments) else { return -1 }
        return child.waitForExit(timeout: .seconds(60))?.shellStatus ?? -1
    }
}
