import Foundation

/// The normal-build face of a fuzz target: `longlink-fuzz-NAME FILE|DIR...` runs each input once (a crash
/// reproducer, or a whole corpus as a regression test); `--write-seeds DIR` writes the seed corpus.
public enum FuzzRunner {
    /// Parses the command line and runs.
    public static func main(name: String, seeds: @autoclosure () -> [[UInt8]], run: (UnsafeRawBufferPointer) -> Void) {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--write-seeds", arguments.count == 2 {
            let directory = arguments[1]
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for (index, seed) in seeds().enumerated() {
                _ = FileManager.default.createFile(atPath: "\(directory)/seed-\(index)", contents: Data(seed))
            }
            print("\(name): wrote seeds to \(directory)")
            return
        }
        if arguments.isEmpty { arguments = ["Fuzz/corpus/\(name)"] }
        var count = 0
        for path in arguments {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                print("\(name): no such file or directory: \(path)")
                exit(2)
            }
            let files = isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { "\(path)/\($0)" }
                : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                Array(data).withUnsafeBytes { run($0) }
                count += 1
            }
        }
        print("\(name): \(count) inputs ran without a crash")
    }
}
