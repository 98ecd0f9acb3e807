import Foundation
import Glibc
import LonglinkTestSupport

/// Headless Chromium (Debian's `chromium`) showing one page, with the page's console on stderr
/// (`--enable-logging=stderr`): the example page logs one `longlink {json}` line per event, which is how a test
/// follows it. Stopped by its process group's id (the browser and its helpers); a fresh profile each time.
final class Chromium {
    let process: ChildProcess
    let directory: String

    /// Opens `url`; `arguments` are added to the headless defaults.
    init(url: String, arguments: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-chromium-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory + "/profile", withIntermediateDirectories: true)
        // The browser binary itself, not Debian's /usr/bin/chromium wrapper script (which does not exec it): the
        // child is then the browser, the leader of a new process group, which its helper processes join.
        let binary = FileManager.default.isExecutableFile(atPath: "/usr/lib/chromium/chromium") ? "/usr/lib/chromium/chromium" : "/usr/bin/chromium"
        let all = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--disable-sync",
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--mute-audio",
            "--user-data-dir=\(directory)/profile", "--enable-logging=stderr", "--v=0",
        ] + arguments + [url]
        process = try ChildProcess(binary, all, standardError: directory + "/chromium.err", newProcessGroup: true)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// SIGTERM to the browser's process group, then SIGKILL if it lingers.
    func stop() { _ = process.terminate(timeout: .seconds(5), toGroup: true) }

    /// Everything Chromium logged.
    var log: String { (try? String(contentsOfFile: directory + "/chromium.err", encoding: .utf8)) ?? "" }

    /// The example page's `longlink {json}` console lines, decoded, in order.
    var events: [[String: Any]] { events(prefix: "longlink") }

    /// The page's `<prefix> {json}` console lines, decoded, in order.
    func events(prefix: String) -> [[String: Any]] {
        log.split(separator: "\n").compactMap { line -> [String: Any]? in
            guard line.contains(":CONSOLE"), let start = line.range(of: "\"\(prefix) "), let end = line.range(of: "\", source:", options: .backwards),
                start.upperBound <= end.lowerBound
            else { return nil }
            return try? JSONSerialization.jsonObject(with: Data(line[start.upperBound..<end.lowerBound].utf8)) as? [String: Any]
        }
    }

    /// The page's change events.
    var changes: [[String: Any]] { events.filter { $0["type"] as? String == "change" } }

    /// The page's connection states, in order.
    var states: [String] { events.filter { $0["type"] as? String == "state" }.compactMap { $0["name"] as? String } }

    /// Waits until `condition` holds for the page's events (bounded by `seconds`).
    @discardableResult
    func waitFor(seconds: Double = 20, _ condition: (Chromium) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(self) { return true }
            usleep(50_000)
        }
        return condition(self)
    }
}
