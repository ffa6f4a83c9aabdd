// A small C helper for Courier's Linux reachability monitor: Glibc's Swift module does not
// expose the rtnetlink headers and macros. Linux only; elsewhere these functions do not exist.
#ifndef COURIER_CNETLINK_H
#define COURIER_CNETLINK_H

#ifdef __linux__
#include <stddef.h>

/// What the kernel's routing tables say about connectivity.
typedef struct {
    /// A non-loopback interface is up, has a global address and carries a default route.
    int online;
    /// How many non-loopback interfaces are up with a global address.
    int usable_interfaces;
    /// Whether any default route (IPv4 or IPv6) exists.
    int default_route;
} courier_net_state;

/// Opens a netlink route socket subscribed to link, address and route changes (IPv4 and IPv6).
/// Returns the descriptor, or -1 with errno set.
int courier_netlink_open_monitor(void);

/// Blocks until the monitor socket has events (then drains them all) or `stop_fd` becomes
/// readable. Returns 1 for events, 0 for stop, -1 on error.
int courier_netlink_wait(int monitor_fd, int stop_fd);

/// Reads the current links, addresses and routes through a fresh netlink socket.
/// Returns 0, or -1 with errno set.
int courier_netlink_snapshot(courier_net_state *state);

/// What three dump answers (links, addresses and routes, sequence numbers 1, 2 and 3, one batch
/// each) say, read as `courier_netlink_snapshot` reads the kernel's: for fuzzing and tests,
/// without a socket. Returns 0, or -1 for an error message, a batch over 1 MB or no memory.
int courier_netlink_evaluate(const void *links, size_t links_length, const void *addresses, size_t addresses_length,
                             const void *routes, size_t routes_length, courier_net_state *result);

/// Moves the calling thread into the network namespace at `path` (for example
/// /var/run/netns/NAME). Returns 0, or -1 with errno set.
int courier_enter_network_namespace(const char *path);

#endif
#endif
