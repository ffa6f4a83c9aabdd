#ifdef __linux__
#define _GNU_SOURCE
#include "CNetlink.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int courier_netlink_open_monitor(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl address;
    memset(&address, 0, sizeof address);
    address.nl_family = AF_NETLINK;
    address.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int courier_netlink_wait(int monitor_fd, int stop_fd) {
    struct pollfd fds[2] = {{monitor_fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    for (;;) {
        int ready = poll(fds, 2, -1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) return -1;
        if (fds[1].revents) return 0;
        char buffer[8192];
        // Drain every queued event; one snapshot covers them all.
        while (recv(monitor_fd, buffer, sizeof buffer, MSG_DONTWAIT) > 0) {}
        return 1;
    }
}

typedef void (*message_handler)(struct nlmsghdr *, void *);

/// Reads one received batch of a dump: calls `handle` for each message of `sequence`. Returns 1
/// when the dump ended, -1 for an error message (errno EIO), 0 when more is to come.
static int read_batch(void *buffer, int length, unsigned int sequence, message_handler handle, void *context) {
    int remaining = length;
    for (struct nlmsghdr *message = buffer; NLMSG_OK(message, remaining); message = NLMSG_NEXT(message, remaining)) {
        if (message->nlmsg_seq != sequence) continue;
        if (message->nlmsg_type == NLMSG_DONE) return 1;
        if (message->nlmsg_type == NLMSG_ERROR) {
            errno = EIO;
            return -1;
        }
        handle(message, context);
    }
    return 0;
}

/// Sends a dump request of `type` and calls `handle` for each message of the answer.
static int dump(int fd, int type, unsigned int sequence, message_handler handle, void *context) {
    struct {
        struct nlmsghdr header;
        struct rtgenmsg body;
    } request;
    memset(&request, 0, sizeof request);
    request.header.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtgenmsg));
    request.header.nlmsg_type = type;
    request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    request.header.nlmsg_seq = sequence;
    request.body.rtgen_family = AF_UNSPEC;
    if (send(fd, &request, request.header.nlmsg_len, 0) < 0) return -1;
    // Aligned for the message headers read in place.
    _Alignas(struct nlmsghdr) char buffer[32768];
    for (;;) {
        ssize_t length = recv(fd, buffer, sizeof buffer, 0);
        if (length < 0 && errno == EINTR) continue;
        if (length <= 0) return -1;
        int status = read_batch(buffer, (int)length, sequence, handle, context);
        if (status != 0) return status > 0 ? 0 : -1;
    }
}

/// What the dumps say about one interface.
typedef struct {
    int index;
    unsigned char up;
    unsigned char loopback;
    unsigned char addressed;
    unsigned char default_route;
} interface;

/// Interfaces sorted by index. Indices are any positive int (busy container hosts and recreated
/// tunnels reach the thousands), so there is no fixed table.
typedef struct {
    interface *interfaces;
    size_t count;
    size_t capacity;
    int any_default_route;
    int out_of_memory;
} scan;

/// Where `index` is, or would be inserted, in the sorted list.
static size_t position(const scan *state, int index) {
    size_t low = 0, high = state->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (state->interfaces[middle].index < index) low = middle + 1;
        else high = middle;
    }
    return low;
}

/// The interface with `index`, or NULL when the link dump did not list it.
static interface *find(scan *state, int index) {
    size_t at = position(state, index);
    return at < state->count && state->interfaces[at].index == index ? &state->interfaces[at] : NULL;
}

/// The interface with `index`, added when new; NULL when memory runs out.
static interface *find_or_add(scan *state, int index) {
    size_t at = position(state, index);
    if (at < state->count && state->interfaces[at].index == index) return &state->interfaces[at];
    if (state->count == state->capacity) {
        size_t capacity = state->capacity ? state->capacity * 2 : 64;
        interface *grown = realloc(state->interfaces, capacity * sizeof *grown);
        if (!grown) {
            state->out_of_memory = 1;
            return NULL;
        }
        state->interfaces = grown;
        state->capacity = capacity;
    }
    memmove(&state->interfaces[at + 1], &state->interfaces[at], (state->count - at) * sizeof *state->interfaces);
    memset(&state->interfaces[at], 0, sizeof *state->interfaces);
    state->interfaces[at].index = index;
    state->count += 1;
    return &state->interfaces[at];
}

static void handle_link(struct nlmsghdr *message, void *context) {
    scan *state = context;
    if (message->nlmsg_type != RTM_NEWLINK || message->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg))) return;
    struct ifinfomsg *info = NLMSG_DATA(message);
    if (info->ifi_index <= 0) return;
    interface *entry = find_or_add(state, info->ifi_index);
    if (!entry) return;
    entry->up = (info->ifi_flags & IFF_UP) && (info->ifi_flags & IFF_RUNNING);
    entry->loopback = (info->ifi_flags & IFF_LOOPBACK) != 0;
}

static void handle_address(struct nlmsghdr *message, void *context) {
    scan *state = context;
    if (message->nlmsg_type != RTM_NEWADDR || message->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifaddrmsg))) return;
    struct ifaddrmsg *info = NLMSG_DATA(message);
    // Link-local addresses (fe80::, 169.254/16 is universe scope but rare) do not make a path.
    if (info->ifa_scope != RT_SCOPE_UNIVERSE) return;
    interface *entry = find(state, (int)info->ifa_index);
    if (entry) entry->addressed = 1;
}

static void handle_route(struct nlmsghdr *message, void *context) {
    scan *state = context;
    if (message->nlmsg_type != RTM_NEWROUTE || message->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg))) return;
    struct rtmsg *route = NLMSG_DATA(message);
    if (route->rtm_dst_len != 0 || route->rtm_type != RTN_UNICAST) return;
    if (route->rtm_table == RT_TABLE_LOCAL) return;  // any other table may carry the default path
    state->any_default_route = 1;
    int remaining = (int)RTM_PAYLOAD(message);
    for (struct rtattr *attribute = RTM_RTA(route); RTA_OK(attribute, remaining);
         attribute = RTA_NEXT(attribute, remaining)) {
        if (attribute->rta_type == RTA_OIF && RTA_PAYLOAD(attribute) >= sizeof(int)) {
            interface *entry = find(state, *(int *)RTA_DATA(attribute));
            if (entry) entry->default_route = 1;
        } else if (attribute->rta_type == RTA_MULTIPATH) {
            // A default route over several paths (ECMP) names its interfaces in its next hops.
            // RTNH_OK reads a hop's length before checking that a hop fits in what is left.
            int hops = (int)RTA_PAYLOAD(attribute);
            for (struct rtnexthop *hop = RTA_DATA(attribute); hops >= (int)sizeof *hop && RTNH_OK(hop, hops);
                 hops -= RTNH_ALIGN(hop->rtnh_len), hop = RTNH_NEXT(hop)) {
                interface *entry = find(state, hop->rtnh_ifindex);
                if (entry) entry->default_route = 1;
            }
        }
    }
}

/// What a finished scan says, into `result`.
static void summarize(const scan *state, courier_net_state *result) {
    memset(result, 0, sizeof *result);
    result->default_route = state->any_default_route;
    for (size_t at = 0; at < state->count; at++) {
        const interface *entry = &state->interfaces[at];
        if (!entry->up || entry->loopback || !entry->addressed) continue;
        result->usable_interfaces += 1;
        if (entry->default_route) result->online = 1;
    }
}

int courier_netlink_snapshot(courier_net_state *result) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    scan state;
    memset(&state, 0, sizeof state);
    int status = dump(fd, RTM_GETLINK, 1, handle_link, &state);
    if (status == 0) status = dump(fd, RTM_GETADDR, 2, handle_address, &state);
    if (status == 0) status = dump(fd, RTM_GETROUTE, 3, handle_route, &state);
    int saved = state.out_of_memory ? ENOMEM : errno;
    if (state.out_of_memory) status = -1;
    close(fd);
    if (status == 0) summarize(&state, result);
    free(state.interfaces);
    if (status != 0) {
        errno = saved;
        return -1;
    }
    return 0;
}

/// One batch copied to memory aligned for message headers, then read as a dump would read it.
static int read_copy(const void *bytes, size_t length, unsigned int sequence, message_handler handle, scan *state) {
    if (length > 1 << 20) return -1;
    void *copy = malloc(length ? length : 1);
    if (!copy) return -1;
    if (length) memcpy(copy, bytes, length);
    int status = read_batch(copy, (int)length, sequence, handle, state);
    free(copy);
    return status;
}

int courier_netlink_evaluate(const void *links, size_t links_length, const void *addresses, size_t addresses_length,
                             const void *routes, size_t routes_length, courier_net_state *result) {
    scan state;
    memset(&state, 0, sizeof state);
    int status = read_copy(links, links_length, 1, handle_link, &state);
    if (status >= 0) status = read_copy(addresses, addresses_length, 2, handle_address, &state);
    if (status >= 0) status = read_copy(routes, routes_length, 3, handle_route, &state);
    if (state.out_of_memory) status = -1;
    if (status >= 0) summarize(&state, result);
    free(state.interfaces);
    return status < 0 ? -1 : 0;
}

int courier_enter_network_namespace(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int status = setns(fd, CLONE_NEWNET);
    int saved = errno;
    close(fd);
    errno = saved;
    return status;
}
#endif
