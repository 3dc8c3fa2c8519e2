#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` on a plain detached thread (Foundation's Thread costs more,
/// and is not needed), with a stack of 1 MiB rather than 8: the agent
/// answers many requests at once, and with --memory every page used is
/// locked. The agent's requests and the proxy's session reads run here.
/// If no thread can be made, `body` runs on the caller's.
func onThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, 1 << 20)
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let started = pthread_create(&thread, &attributes, { box in
        Unmanaged<Box>.fromOpaque(box!).takeRetainedValue().body()
        return nil
    }, box)
    if started == 0 {
        pthread_detach(thread)
    } else {
        Unmanaged<Box>.fromOpaque(box).takeRetainedValue().body()
    }
}
