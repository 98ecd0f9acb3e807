import Glibc
import LonglinkLoop
import LonglinkTestSupport
import Testing

@Suite("EventLoopGroup", .ownThreads)
struct EventLoopGroupTests {
    @Test("starts one thread per loop, hands loops out round-robin and shuts down cleanly")
    func startsAndStops() throws {
        let group = try EventLoopGroup(numberOfThreads: 3)
        let threads = Shared<[Int: UInt]>([:])
        for loop in group.loops {
            loop.execute { context in
                #expect(context.eventLoop.inEventLoop)
                threads.update { $0[context.eventLoop.id] = pthread_self() }
            }
        }
        #expect(eventually { threads.value.count == 3 })
        #expect(Set(threads.value.values).count == 3)
        #expect(!threads.value.values.contains(pthread_self()))
        #expect(group.loops.map(\.id) == [0, 1, 2])

        let first = group.next().id
        let order = (0..<6).map { _ in group.next().id }
        #expect(order == (1...6).map { (first + $0) % 3 })
        #expect(!group.loops.contains { $0.inEventLoop })

        group.shutdownGracefully()
        #expect(group.loops.allSatisfy { !$0.execute { _ in } })
        group.shutdownGracefully()  // a second call is harmless
    }

    @Test("setup runs on every loop before anything else")
    func setupRunsFirst() throws {
        let order = Shared<[String]>([])
        let group = try EventLoopGroup(numberOfThreads: 2) { context in
            order.update { $0.append("setup \(context.eventLoop.id)") }
        }
        defer { group.shutdownGracefully() }
        group.loops[1].execute { _ in order.update { $0.append("job 1") } }
        #expect(eventually { order.value.count == 3 })
        let entries = order.value
        #expect(entries.firstIndex(of: "setup 1")! < entries.firstIndex(of: "job 1")!)
        #expect(EventLoopGroup.coreCount >= 1)
    }
}
