import Foundation
import Glibc
import LonglinkLoop

/// A process's resident memory and CPU time, read from `/proc/<pid>/status` and `/proc/<pid>/stat`.
public struct ProcessStats: Sendable, Hashable, Codable {
    /// Resident set size in bytes (`VmRSS`): the user-space memory the process holds in RAM.
    public var residentBytes: Int
    /// User plus system CPU time consumed so far, in seconds.
    public var cpuSeconds: Double { userSeconds + systemSeconds }
    /// CPU time spent in the process's own code and libraries (`utime`), in seconds.
    public var userSeconds: Double
    /// CPU time the kernel spent for the process (`stime`: system calls, and on loopback the TCP receive path the
    /// sender runs for its peer), in seconds.
    public var systemSeconds: Double
    /// Open file descriptors.
    public var openFiles: Int

    /// Reads the figures of `pid`; nil when the process is gone or not readable.
    public static func read(pid: Int32) -> ProcessStats? {
        guard let status = ProcFile.read("/proc/\(pid)/status"), let stat = ProcFile.read("/proc/\(pid)/stat")
        else { return nil }
        var resident = 0
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            resident = (Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0) * 1024
        }
        // Fields after the command name (which may contain spaces) start at state, field 3; utime is 14, stime 15.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let files = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
        return ProcessStats(residentBytes: resident, userSeconds: user / ticks, systemSeconds: system / ticks, openFiles: files)
    }

    /// Voluntary context switches of every thread of `pid` so far (`voluntary_ctxt_switches` in each
    /// `/proc/<pid>/task/<tid>/status`): how often its threads went to sleep waiting (in `epoll_wait`, `io_uring_enter`,
    /// a lock); nil when unreadable.
    public static func voluntarySwitches(pid: Int32) -> Int? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        var total = 0
        for task in tasks {
            guard let status = ProcFile.read("/proc/\(pid)/task/\(task)/status") else { continue }
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                total += Int(line.split(separator: "\t", omittingEmptySubsequences: true).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "") ?? 0
            }
        }
        return total
    }

    /// The soft open-file limit of this process.
    public static var openFileLimit: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return limit.rlim_cur == rlim_t.max ? Int.max : Int(limit.rlim_cur)
    }
}
