internal import CLonglinkLinux

/// Names the calling thread for top, gdb and perf (`pthread_setname_np` is a GNU extension with a Linux-only
/// signature: Darwin's takes only the name). Best effort.
func nameCurrentThread(_ name: String) {
    _ = CLonglinkLinux_setThreadName(name)
}
