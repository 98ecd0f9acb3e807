import Glibc
import LonglinkLoop
import LonglinkTestSupport
import Testing

@Suite("Listener and PlainTransport", .ownThreads)
struct ListenerTests {
    @Test("a small accept budget still accepts every queued connection, and close stops accepting")
    func acceptBudget() throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully() }
        let accepted = Shared(0)
        let port = Shared(0)
        let closed = Shared(false)

        group.loops[0].execute { context in
            var listener: Listener?
            listener = try! Listener.bind(host: "127.0.0.1", port: 0, on: context, acceptBudget: 4) { fd in
                close(fd)
                accepted.update { $0 += 1 }
                if accepted.value == 50 {
                    listener!.close()
                    closed.update { $0 = !listener!.isOpen }
                }
            }
            port.update { $0 = listener!.port }
        }
        #expect(eventually { port.value != 0 })
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: port.value)
        var clients: [CInt] = []
        for _ in 0..<50 { clients.append(try Socket.connect(to: address).fd) }
        defer { for fd in clients { close(fd) } }

        #expect(eventually { closed.value })
        #expect(accepted.value == 50)
    }

    @Test("a connecting PlainTransport reports a refused connect as an io TransportError")
    func handshakeRefused() throws {
        let listener = try Socket.listen(host: "127.0.0.1", port: 0)
        let address = try Socket.localAddress(listener)
        Socket.close(listener)
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully() }
        let outcome = Shared<TransportError?>(nil)

        group.loops[0].execute { context in
            let fd: CInt
            do throws(IOError) {
                fd = try Socket.connect(to: address).fd
            } catch {
                outcome.update { $0 = .io(error) }  // refused synchronously: same error, reported early
                return
            }
            let transport = PlainTransport(fd: fd, connecting: true)
            #expect(transport.interest == .write)
            var id: RegistrationID?
            id = try! context.register(fd: fd, interest: transport.interest) { _ in
                do throws(TransportError) {
                    _ = try transport.handshake()
                } catch {
                    context.deregister(id!)
                    transport.close()
                    outcome.update { $0 = error }
                }
            }
        }

        #expect(eventually { outcome.value != nil })
        #expect(outcome.value?.kind == .io)
        #expect(outcome.value?.underlying?.errno == ECONNREFUSED)
        #expect(outcome.value?.description.contains("connect") == true)
    }
}
