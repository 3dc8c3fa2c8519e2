import CLinux

/// Who is at the other end of a loopback TCP connection. TCP has no
/// SO_PEERCRED, but the kernel's sock_diag interface lists the peer's own
/// socket, keyed by its address and port, with the uid of the user who made
/// it (what `ss -e` shows; clinux_tcp_peer_uid). Any local user can connect
/// to 127.0.0.1 and ::1, so what answers there serves only its own user: the
/// redirect listener takes the browser's answer only from the user signing
/// in (a callback planted by another user would sign this one in to the
/// planter's account, RFC 9700 4.7), and `cog-cred proxy` hands its tokens
/// to no one else.
enum LoopbackPeer {
    /// The uid that owns the socket at the other end of `connection`, or
    /// nil when it cannot be told: the peer is not on this machine, or its
    /// socket is no longer held by any process (closed already; a browser
    /// keeps its socket open until it has the page).
    static func ownerUID(of connection: Int32) -> UInt32? {
        var uid: UInt32 = 0
        return clinux_tcp_peer_uid(connection, &uid) == 0 ? uid : nil
    }
}
