/// The browser's part of one sign-in on this machine: the address the
/// browser is started with, and the wait for the managed login's answer at
/// the redirect URI.
///
/// The browser is started with a one-time start address on the listener,
/// which sends it on to the authorize URL: a browser's command line is
/// readable by every local user (/proc/PID/cmdline), and the authorize URL
/// carries the state, nonce and PKCE challenge that would let another user
/// plant an answer of their own sign-in. The listener takes requests only
/// from this user's processes in any case; an answer with another state is
/// refused and the wait goes on, so no other process can end the sign-in.
public final class LoopbackSignIn {
    public let listener: LoopbackListener
    public let request: AuthorizationRequest
    let startPath = "/start/" + AuthorizationRequest.randomToken(16)
    var started = false

    /// Listens at the request's redirect URI; before the browser is started,
    /// as it may come back at once.
    public init(_ request: AuthorizationRequest) throws(LoopbackError) {
        self.request = request
        listener = try LoopbackListener(redirectURI: request.redirectURI)
    }

    /// What to start the browser with: good for one visit, by this user.
    public var startAddress: String { "http://\(listener.host):\(listener.port)\(startPath)" }

    /// The managed login's answer, once one for this request comes back
    /// within `seconds`; nil when none did. Every other request gets a page
    /// saying why it was not taken, and `note` a line for the terminal.
    public func answer(within seconds: Double, note: (String) -> Void) throws(LoopbackError) -> AuthorizationRequest.Callback? {
        let deadline = Deadline(secondsFromNow: seconds)
        let refused: (UInt32?, String) -> Void = { uid, _ in
            let who = uid.map { "another user's process (uid \($0))" } ?? "a process whose owner cannot be told"
            note("Refused a request to the sign-in's address from \(who).")
        }
        while true {
            guard let incoming = try listener.next(waitingAtMost: deadline.remaining, refused: refused) else { return nil }
            if incoming.path == startPath && !started {
                started = true
                incoming.redirect(to: request.url)
                continue
            }
            guard incoming.path == listener.path else {
                incoming.respond(status: 404, title: "Not found", message: "This is cog-cred waiting for the sign-in's answer.")
                continue
            }
            let callback: AuthorizationRequest.Callback
            do {
                callback = try request.callback(query: incoming.query)
            } catch .notACallback {
                incoming.respond(status: 400, title: "Not a sign-in answer", message: "This address expects the managed login's answer.")
                continue
            } catch {
                note("Refused an answer that belongs to another sign-in (its state is not this one's); still waiting.")
                incoming.respond(
                    status: 400, title: "Sign-in refused",
                    message: "This answer belongs to another sign-in. Nothing was stored; cog-cred is still waiting for its own.")
                continue
            }
            switch callback {
            case .refused(let error, let description):
                incoming.respond(
                    status: 200, title: "Sign-in not completed",
                    message: "The sign-in ended with \(error)\(description.isEmpty ? "" : ": \(description)"). You can close this window.")
            case .code:
                incoming.respond(status: 200, title: "Signed in", message: "cog-cred has your sign-in. You can close this window.")
            }
            return callback
        }
    }
}
