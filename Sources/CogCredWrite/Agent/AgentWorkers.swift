import CLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The agent's answering: each whole request on a thread, at most
/// `Bounds.answering` at once and `Bounds.answeringForOne` for one
/// profile; the rest wait their turn, in the order they came, holding
/// their connection and request but no thread. A thread that has answered
/// takes the next request whose turn it is. One profile whose endpoint
/// never answers (each of its requests waits out its deadline) so holds
/// its own few threads, never another profile's.
final class AgentWorkers: Sendable {
    let bounds: AgentServer.Bounds
    let service: AgentService

    /// One request, its connection and what it is for.
    struct Job: Sendable {
        let fd: Int32
        let line: [UInt8]
        /// The profile it names, else its git host or registry: whose turn it takes.
        let key: String
    }

    struct State {
        var answering = 0
        var answeringFor: [String: Int] = [:]
        var waiting: [Job] = []
        /// Bytes of requests held: those still being read (the loop's) and these.
        var held = 0
    }

    let state = Mutex(State())

    init(bounds: AgentServer.Bounds, service: AgentService) {
        self.bounds = bounds
        self.service = service
    }

    /// Connections held here: answered now, or waiting their turn.
    var connections: Int { state.withLock { $0.answering + $0.waiting.count } }

    /// Bytes of requests held, all connections together.
    var held: Int { state.withLock { $0.held } }

    /// Counts `bytes` more (or fewer) held by the loop.
    func hold(_ bytes: Int) { state.withLock { $0.held += bytes } }

    /// Answers `line`, read on `fd` (and counted as held), which is closed after.
    func answer(_ fd: Int32, _ line: [UInt8]) {
        let job = Job(fd: fd, line: line, key: Self.key(of: line))
        let now = state.withLock { state -> Bool in
            guard state.mayStart(job, bounds) else {
                state.waiting.append(job)
                return false
            }
            state.start(job)
            return true
        }
        if now { onThread { self.run(job) } }
    }

    func run(_ first: Job) {
        var job = first
        while true {
            // Blocking again, with a send timeout: a client that stops
            // reading holds this thread a second per write at most.
            _ = clinux_set_blocking(job.fd, 1)
            _ = clinux_receive_timeout(job.fd, 1)
            let fd = job.fd
            let answer = service.answer(job.line) { note in _ = sendAll(fd, AgentProtocol.note(note)) }
            _ = sendAll(fd, answer)
            close(fd)
            service.control.stopIfAsked()
            guard let next = finished(job) else { return }
            job = next
        }
    }

    /// Counts `job` done; the next one whose turn it is, started on this thread.
    func finished(_ job: Job) -> Job? {
        state.withLock { state -> Job? in
            state.answering -= 1
            state.answeringFor[job.key, default: 1] -= 1
            if state.answeringFor[job.key] == 0 { state.answeringFor[job.key] = nil }
            state.held -= job.line.count
            guard let index = state.waiting.firstIndex(where: { state.mayStart($0, bounds) }) else { return nil }
            let next = state.waiting.remove(at: index)
            state.start(next)
            return next
        }
    }

    /// Whose turn a request takes (AgentRequest.turn), read from a line of a
    /// reasonable size only, in the reading loop: a larger one is malformed,
    /// or a write, and shares one turn with the others like it.
    static func key(of line: [UInt8]) -> String {
        guard line.count <= 64 << 10, case .success(let request) = AgentRequest.read(line) else { return "" }
        return request.turn
    }
}

extension AgentWorkers.State {
    func mayStart(_ job: AgentWorkers.Job, _ bounds: AgentServer.Bounds) -> Bool {
        answering < bounds.answering && answeringFor[job.key, default: 0] < bounds.answeringForOne
    }

    mutating func start(_ job: AgentWorkers.Job) {
        answering += 1
        answeringFor[job.key, default: 0] += 1
    }
}
