import Glibc
import LonglinkLoop

/// This process's figures under the names every Prometheus client library exports (`process_cpu_seconds_total`,
/// `process_resident_memory_bytes`, `process_virtual_memory_bytes`, `process_open_fds`, `process_max_fds`,
/// `process_start_time_seconds`), so standard dashboards and alerts work unchanged. Read at each scrape from
/// `/proc/self/stat` and `/proc/self/fd` (with `ProcFile`: Foundation would read only a `/proc` file's first
/// page), the open-file limit from `getrlimit` (the soft limit `/proc/self/limits` shows).
struct ProcessMetrics: Hashable, Sendable {
    /// User plus system CPU time, in seconds.
    var cpuSeconds: Double
    /// Resident set size, in bytes.
    var residentBytes: Double
    /// Virtual memory size, in bytes.
    var virtualBytes: Double
    /// Open file descriptors.
    var openFDs: Double
    /// The soft limit on open file descriptors.
    var maxFDs: Double
    /// When the process started, in seconds since the Unix epoch.
    var startTimeSeconds: Double

    /// The figures now; nil when `/proc/self/stat` cannot be read or parsed (not Linux, or no procfs mounted).
    static func read() -> ProcessMetrics? {
        guard let stat = ProcFile.read("/proc/self/stat"), let fields = statFields(stat), fields.count > 21,
            let user = Double(fields[11]), let system = Double(fields[12]), let started = Double(fields[19]),
            let virtual = Double(fields[20]), let residentPages = Double(fields[21])
        else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ProcessMetrics(
            cpuSeconds: (user + system) / ticks,
            residentBytes: residentPages * Double(sysconf(Int32(_SC_PAGESIZE))),
            virtualBytes: virtual,
            openFDs: Double(openDescriptorCount()),
            maxFDs: openFileLimit(),
            startTimeSeconds: bootTimeSeconds + started / ticks
        )
    }

    /// Appends the six families.
    func write(to out: inout PrometheusText) {
        out.family("process_cpu_seconds_total", type: "counter", help: "Total user and system CPU time spent in seconds.", [([], cpuSeconds)])
        out.gauge("process_resident_memory_bytes", help: "Resident memory size in bytes.", residentBytes)
        out.gauge("process_virtual_memory_bytes", help: "Virtual memory size in bytes.", virtualBytes)
        out.gauge("process_open_fds", help: "Number of open file descriptors.", openFDs)
        out.gauge("process_max_fds", help: "Maximum number of open file descriptors.", maxFDs)
        out.gauge("process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.", startTimeSeconds)
    }

    /// The fields of `/proc/self/stat` from the state on (field 3): the command name before them is in
    /// parentheses and may itself contain spaces and parentheses, so the split starts after the last `)`.
    static func statFields(_ stat: String) -> [Substring]? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    /// Entries of `/proc/self/fd` (the directory's own descriptor included, as other exporters count it).
    private static func openDescriptorCount() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDot { count += 1 }
        }
        return count
    }

    private static func openFileLimit() -> Double {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return Double(limit.rlim_cur)
    }

    /// When the machine booted (`btime` of `/proc/stat`), in seconds since the Unix epoch; read once.
    private static let bootTimeSeconds: Double = {
        let line = ProcFile.read("/proc/stat")?.split(separator: "\n").first { $0.hasPrefix("btime ") }
        return line.flatMap { Double($0.dropFirst(6)) } ?? 0
    }()
}
