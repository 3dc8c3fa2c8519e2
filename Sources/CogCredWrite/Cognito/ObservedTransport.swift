/// Told of each HTTP exchange as it starts and ends: what the person
/// waiting sees (a line when a wait grows long) and the debug trace are
/// made from this, never from inside the clients.
public protocol TransportObserver: Sendable {
    func willSend(_ request: HTTPRequest)
    func didFinish(_ request: HTTPRequest, _ outcome: Result<HTTPResponse, TransportError>, seconds: Double)
}

/// A transport that tells an observer of every exchange it passes on.
public struct ObservedTransport: HTTPTransport {
    let inner: any HTTPTransport
    let observer: any TransportObserver

    public init(_ inner: any HTTPTransport, observer: any TransportObserver) {
        self.inner = inner
        self.observer = observer
    }

    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        observer.willSend(request)
        let start = ContinuousClock.now
        do {
            let response = try inner.send(request)
            observer.didFinish(request, .success(response), seconds: seconds(since: start))
            return response
        } catch {
            observer.didFinish(request, .failure(error), seconds: seconds(since: start))
            throw error
        }
    }
}
