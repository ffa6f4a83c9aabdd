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
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_INTERFACES 256

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

/// Sends a dump request of `type` and calls `handle` for each message of the answer.
static int dump(int fd, int type, unsigned int sequence, void (*handle)(struct nlmsghdr *, void *), void *context) {
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
    char buffer[32768];
    for (;;) {
        ssize_t length = recv(fd, buffer, sizeof buffer, 0);
        if (length < 0 && errno == EINTR) continue;
        if (length <= 0) return -1;
        unsigned int remaining = (unsigned int)length;
        for (struct nlmsghdr *message = (struct nlmsghdr *)buffer; NLMSG_OK(message, remaining);
             message = NLMSG_NEXT(message, remaining)) {
            if (message->nlmsg_seq != sequence) continue;
            if (message->nlmsg_type == NLMSG_DONE) return 0;
            if (message->nlmsg_type == NLMSG_ERROR) {
                errno = EIO;
                return -1;
            }
            handle(message, context);
        }
    }
}

typedef struct {
    unsigned char up[MAX_INTERFACES];
    unsigned char loopback[MAX_INTERFACES];
    unsigned char addressed[MAX_INTERFACES];
    unsigned char default_route[MAX_INTERFACES];
    int any_default_route;
} scan;

static void handle_link(struct nlmsghdr *message, void *context) {
    scan *state = context;
    if (message->nlmsg_type != RTM_NEWLINK) return;
    struct ifinfomsg *info = NLMSG_DATA(message);
    if (info->ifi_index <= 0 || info->ifi_index >= MAX_INTERFACES) return;
    state->up[info->ifi_index] = (info->ifi_flags & IFF_UP) && (info->ifi_flags & IFF_RUNNING);
    state->loopback[info->ifi_index] = (info->ifi_flags & IFF_LOOPBACK) != 0;
}

static void handle_address(struct nlmsghdr *message, void *context) {
    scan *state = context;
    if (message->nlmsg_type != RTM_NEWADDR) return;
    struct ifaddrmsg *info = NLMSG_DATA(message);
    // Link-local addresses (fe80::, 169.254/16 is universe scope but rare) do not make a path.
    if (info->ifa_scope != RT_SCOPE_UNIVERSE) return;
    if (info->ifa_index > 0 && info->ifa_index < MAX_INTERFACES) state->addressed[info->ifa_index] = 1;
}

static void handle_route(struct nlmsghdr *message, void *context) {
    scan *state = context;
    if (message->nlmsg_type != RTM_NEWROUTE) return;
    struct rtmsg *route = NLMSG_DATA(message);
    if (route->rtm_dst_len != 0 || route->rtm_type != RTN_UNICAST) return;
    if (route->rtm_table == RT_TABLE_LOCAL) return;  // any other table may carry the default path
    state->any_default_route = 1;
    unsigned int remaining = RTM_PAYLOAD(message);
    for (struct rtattr *attribute = RTM_RTA(route); RTA_OK(attribute, remaining);
         attribute = RTA_NEXT(attribute, remaining)) {
        if (attribute->rta_type == RTA_OIF) {
            int index = *(int *)RTA_DATA(attribute);
            if (index > 0 && index < MAX_INTERFACES) state->default_route[index] = 1;
        }
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
    int saved = errno;
    close(fd);
    if (status != 0) {
        errno = saved;
        return -1;
    }
    memset(result, 0, sizeof *result);
    result->default_route = state.any_default_route;
    for (int index = 1; index < MAX_INTERFACES; index++) {
        if (!state.up[index] || state.loopback[index] || !state.addressed[index]) continue;
        result->usable_interfaces += 1;
        if (state.default_route[index]) result->online = 1;
    }
    return 0;
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
