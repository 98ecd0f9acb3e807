import Foundation

/// What a test needs from a systemd unit file: the install steps its header comment documents and the
/// `[Service]` settings, read the way systemd reads them (`Key=value` lines; a key given twice keeps both values).
struct SystemdUnitFile {
    /// `[Service]` settings in file order.
    var service: [(key: String, value: String)]
    /// The shell commands of the header comment's indented install lines (`#   command`, a trailing `\`
    /// continuing on the next line), each split at ` && ` into the steps an operator runs one after the other.
    var installSteps: [String]

    init(text: String) {
        var service: [(key: String, value: String)] = []
        var commands: [String] = []
        var section = ""
        var continued = false
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(rawLine)
            if section.isEmpty && line.hasPrefix("#   ") {
                var command = line.dropFirst().trimmingCharacters(in: .whitespaces)
                let continues = command.hasSuffix("\\")
                if continues { command = String(command.dropLast()).trimmingCharacters(in: .whitespaces) }
                if continued, let last = commands.popLast() {
                    commands.append(last + " " + command)
                } else {
                    commands.append(command)
                }
                continued = continues
                continue
            }
            continued = false
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
                section = String(trimmed.dropFirst().dropLast())
                continue
            }
            guard section == "Service", !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            service.append((String(trimmed[..<equals]), String(trimmed[trimmed.index(after: equals)...])))
        }
        self.service = service
        installSteps = commands.flatMap { $0.components(separatedBy: " && ").map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    /// Every value of `key` in `[Service]`.
    func values(_ key: String) -> [String] { service.filter { $0.key == key }.map(\.value) }

    /// `Environment=` assignments (`KEY=value` words, optionally double-quoted).
    var environment: [String: String] {
        var result: [String: String] = [:]
        for line in values("Environment") {
            for word in line.split(separator: " ") {
                let assignment = word.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                guard let equals = assignment.firstIndex(of: "=") else { continue }
                result[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
            }
        }
        return result
    }

    /// `[Service]` keys that change how the process starts (what it runs, where, with which files and
    /// environment): a test emulating the start must handle each of them.
    static let startKeys: Set<String> = [
        "ExecStartPre", "ExecStart", "Environment", "WorkingDirectory", "StateDirectory", "ConfigurationDirectory",
        "LoadCredential",
    ]

    /// `[Service]` keys that do not change whether a start outside systemd is faithful: restart policy, stop and
    /// reload, logging, limits and sandboxing (checked by `systemd-analyze` in ServeOperationsTests).
    static func isSandboxOrLifecycle(_ key: String) -> Bool {
        let keys: Set<String> = [
            "Type", "ExecReload", "KillSignal", "TimeoutStopSec", "Restart", "RestartSec", "DynamicUser", "StateDirectoryMode",
            "StandardOutput", "StandardError", "LimitNOFILE", "TasksMax", "NoNewPrivileges", "CapabilityBoundingSet",
            "AmbientCapabilities", "LockPersonality", "MemoryDenyWriteExecute", "RemoveIPC", "UMask", "ProcSubset",
        ]
        return keys.contains(key) || ["Protect", "Private", "Restrict", "SystemCall"].contains { key.hasPrefix($0) }
    }
}
