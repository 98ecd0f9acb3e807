import Foundation
import Synchronization

/// Whole lines on standard output from any thread: the observers, the token provider and the state watcher run on
/// different ones. Unbuffered, so a reader of a redirected stdout sees each line as it happens.
enum Console {
    private static let lock = Mutex(())

    static func line(_ text: String) {
        lock.withLock { _ in FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
    }

    static func error(_ text: String) {
        lock.withLock { _ in FileHandle.standardError.write(Data(("rider-app: " + text + "\n").utf8)) }
    }
}
