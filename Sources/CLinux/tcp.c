// `cog-cred proxy`'s TCP side: its listening socket, and who is on the
// other end of a local TCP connection: the uid that owns the client's socket, as the kernel's sock_diag interface lists it (what
// `ss -e` shows as uid:N). A loopback port is every local user's to reach;
// `cog-cred proxy` serves only its own user (and root), and a UNIX socket's
// peer comes from SO_PEERCRED instead (clinux_peer).
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "CLinux.h"

static int peer_uid(const struct sockaddr_storage *remote_address, const struct sockaddr_storage *local_address, unsigned int *uid);

int clinux_tcp_peer_uid(int fd, unsigned int *uid) {
    struct sockaddr_storage local, remote;
    socklen_t local_length = sizeof local, remote_length = sizeof remote;
    if (getsockname(fd, (struct sockaddr *)&local, &local_length) != 0 ||
        getpeername(fd, (struct sockaddr *)&remote, &remote_length) != 0) {
        return -1;
    }
    return peer_uid(&remote, &local, uid);
}

int clinux_tcp_client_uid(const struct sockaddr *client, unsigned int length, int listening, unsigned int *uid) {
    struct sockaddr_storage local, remote;
    socklen_t local_length = sizeof local;
    if (length > sizeof remote || getsockname(listening, (struct sockaddr *)&local, &local_length) != 0) {
        errno = EINVAL;
        return -1;
    }
    memset(&remote, 0, sizeof remote);
    memcpy(&remote, client, length);
    return peer_uid(&remote, &local, uid);
}

static int peer_uid(const struct sockaddr_storage *remote_address, const struct sockaddr_storage *local_address, unsigned int *uid) {
    const struct sockaddr_storage local = *local_address, remote = *remote_address;
    if (local.ss_family != remote.ss_family) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    // The client's socket: its source is our peer, its destination us.
    struct {
        struct nlmsghdr header;
        struct inet_diag_req_v2 request;
    } message;
    memset(&message, 0, sizeof message);
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST;
    message.request.sdiag_family = (unsigned char)local.ss_family;
    message.request.sdiag_protocol = IPPROTO_TCP;
    message.request.idiag_states = ~0U;
    struct inet_diag_sockid *id = &message.request.id;
    id->idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    id->idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    if (local.ss_family == AF_INET) {
        const struct sockaddr_in *from = (const struct sockaddr_in *)&remote, *to = (const struct sockaddr_in *)&local;
        id->idiag_sport = from->sin_port;
        id->idiag_dport = to->sin_port;
        memcpy(id->idiag_src, &from->sin_addr, 4);
        memcpy(id->idiag_dst, &to->sin_addr, 4);
    } else if (local.ss_family == AF_INET6) {
        const struct sockaddr_in6 *from = (const struct sockaddr_in6 *)&remote, *to = (const struct sockaddr_in6 *)&local;
        id->idiag_sport = from->sin6_port;
        id->idiag_dport = to->sin6_port;
        memcpy(id->idiag_src, &from->sin6_addr, 16);
        memcpy(id->idiag_dst, &to->sin6_addr, 16);
    } else {
        errno = EAFNOSUPPORT;
        return -1;
    }
    int netlink = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (netlink < 0) return -1;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    int result = -1;
    if (sendto(netlink, &message, sizeof message, 0, (struct sockaddr *)&kernel, sizeof kernel) == (ssize_t)sizeof message) {
        long answer[8192 / sizeof(long)];
        ssize_t length = recv(netlink, answer, sizeof answer, 0);
        for (struct nlmsghdr *part = (struct nlmsghdr *)answer; length > 0 && NLMSG_OK(part, (size_t)length);
             part = NLMSG_NEXT(part, length)) {
            if (part->nlmsg_type == NLMSG_DONE || part->nlmsg_type == NLMSG_ERROR) break;
            if (part->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
            const struct inet_diag_msg *found = NLMSG_DATA(part);
            // A socket no process holds any more (closed, still finishing)
            // is listed with uid 0 and inode 0: nobody's, not root's.
            if (found->idiag_inode == 0) break;
            *uid = found->idiag_uid;
            result = 0;
            break;
        }
        if (result != 0) errno = ESRCH;
    }
    int saved = errno;
    close(netlink);
    errno = saved;
    return result;
}

int clinux_tcp_listen(const char *address, int port, int *bound_port) {
    struct sockaddr_storage where;
    memset(&where, 0, sizeof where);
    socklen_t length;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&where;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&where;
    if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((unsigned short)port);
        length = sizeof *v4;
    } else if (inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((unsigned short)port);
        length = sizeof *v6;
    } else {
        errno = EINVAL;
        return -1;
    }
    int fd = socket(where.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (where.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    if (bind(fd, (struct sockaddr *)&where, length) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&where, &length) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    *bound_port = ntohs(where.ss_family == AF_INET ? v4->sin_port : v6->sin6_port);
    return fd;
}
