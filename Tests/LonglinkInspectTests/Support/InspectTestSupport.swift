import Foundation
import LonglinkCommands
import LonglinkTestSupport
import Testing

/// Committed fixtures (Tests/LonglinkInspectTests/Fixtures, see its README).
enum Fixtures {
    static func url(_ name: String) throws -> URL {
        let url = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return url.appendingPathComponent(name)
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: try url(name)))
    }

    static func text(_ name: String) throws -> String {
        String(decoding: try bytes(name), as: UTF8.self)
    }

    /// One frame body from the golden frames, behind its varint length prefix.
    static func frame(_ name: String) throws -> [UInt8] {
        prefixed(try bytes(name + ".bin"))
    }
}

/// `body` behind its varint length prefix.
func prefixed(_ body: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    var n = UInt64(body.count)
    repeat {
        let byte = UInt8(n & 0x7F)
        n >>= 7
        out.append(byte | (n > 0 ? 0x80 : 0))
    } while n > 0
    return out + body
}

/// What one in-process `longlink` run printed.
struct CLIResult {
    var code: Int32
    var out: String
    var err: String
    var lines: [String] { out.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
}

/// Runs `longlink ARGS` in this process with captured output.
func runCLI(_ arguments: [String], environment: [String: String] = [:]) async -> CLIResult {
    let io = CommandIO.capturing()
    let code = await LonglinkCLI.main(arguments: arguments, environment: environment, io: io)
    return CLIResult(code: code, out: io.capturedOut, err: io.capturedErr)
}

/// A scratch directory removed by `cleanup()`.
struct ScratchDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "longlink-inspect-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let target = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }

    func cleanup() { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs a program to completion with `input` on stdin (killed after 120 s); (exit status, stdout, stderr).
func runProgram(_ path: String, _ arguments: [String], input: [UInt8] = []) throws -> (Int32, String, String) {
    let output = try ProcessRunner.run([path] + arguments, input: input, timeout: .seconds(120))
    return (output.status, String(decoding: output.stdout, as: UTF8.self), output.stderr)
}

/// The package root (for `proto/`), from this file's path.
let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }  // Support, LonglinkInspectTests, Tests, root
    return url.path
}()
