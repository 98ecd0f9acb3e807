import Glibc
import LonglinkLoop
import LonglinkTestSupport
import Testing

@testable import LonglinkBench

@Suite("finding the process behind a --server port", .ownThreads)
struct ListeningProcessTests {
    @Test("a socket listening on loopback is found in this very process, by its port")
    func findsThisProcess() throws {
        let fd = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.close(fd) }
        let port = try Socket.localAddress(fd).port
        #expect(!ListeningProcess.listeningInodes(port: port).isEmpty)
        #expect(ListeningProcess.pid(listeningOn: port) == getpid())
    }

    @Test("a port bound but not listening has no listening process")
    func boundOnlyIsNotListening() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0)
        let port = try Socket.localAddress(fd).port
        #expect(ListeningProcess.listeningInodes(port: port).isEmpty)
        #expect(ListeningProcess.pid(listeningOn: port) == nil)
    }

    @Test("a /proc file is read to its end, not only its first page")
    func procFilesAreReadWhole() throws {
        // This process maps dozens of libraries: its maps file is several pages long.
        let maps = try #require(ProcFile.read("/proc/self/maps"))
        #expect(maps.utf8.count > 3 * 4096)
        #expect(maps.hasSuffix("\n"))
        #expect(maps.split(separator: "\n").contains { $0.hasSuffix("[stack]") })
        #expect(ProcFile.read("/proc/no-such-file") == nil)
    }
}
