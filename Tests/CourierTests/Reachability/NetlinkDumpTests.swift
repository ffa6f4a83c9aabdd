#if os(Linux)
    import CNetlink
    import Foundation
    import Testing

    /// The Linux monitor's reader of netlink dumps, on dumps written by hand: what makes the
    /// device online, and malformed answers read without running past their end.
    @Suite struct NetlinkDumpTests {
        /// One netlink message: its 16-byte header, then `payload`, padded to 4 bytes.
        static func message(type: UInt16, sequence: UInt32, _ payload: [UInt8]) -> [UInt8] {
            var message = bytes(UInt32(16 + payload.count)) + bytes(type) + bytes(UInt16(0)) + bytes(sequence)
            message += bytes(UInt32(0)) + payload
            return message + Array(repeating: 0, count: (4 - message.count % 4) % 4)
        }

        static func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
            withUnsafeBytes(of: value.littleEndian) { Array($0) }
        }

        /// RTM_NEWLINK for interface `index`, up and running, loopback or not.
        static func link(_ index: Int32, up: Bool = true, loopback: Bool = false) -> [UInt8] {
            let flags: UInt32 = (up ? 0x41 : 0) | (loopback ? 0x8 : 0)
            return message(
                type: 16, sequence: 1, [0, 0] + bytes(UInt16(0)) + bytes(index) + bytes(flags) + bytes(UInt32(0)))
        }

        /// RTM_NEWADDR: an IPv4 address on `index` with `scope` (0 global, 253 link).
        static func address(_ index: UInt32, scope: UInt8 = 0) -> [UInt8] {
            message(type: 20, sequence: 2, [2, 24, 0, scope] + bytes(index))
        }

        /// RTM_NEWROUTE: a default unicast route in the main table, with `attributes`.
        static func defaultRoute(_ attributes: [UInt8]) -> [UInt8] {
            message(type: 24, sequence: 3, [2, 0, 0, 0, 254, 3, 0, 1] + bytes(UInt32(0)) + attributes)
        }

        /// RTA_OIF: the route's interface.
        static func outputInterface(_ index: Int32) -> [UInt8] { bytes(UInt16(8)) + bytes(UInt16(4)) + bytes(index) }

        static func done(_ sequence: UInt32) -> [UInt8] { message(type: 3, sequence: sequence, [0, 0, 0, 0]) }

        static func evaluate(links: [UInt8], addresses: [UInt8], routes: [UInt8]) -> courier_net_state? {
            var state = courier_net_state()
            let status = courier_netlink_evaluate(
                links, links.count, addresses, addresses.count, routes, routes.count, &state)
            return status == 0 ? state : nil
        }

        static let links = link(1, loopback: true) + link(2) + link(3) + done(1)

        @Test("online takes an interface that is up, with a global address, carrying a default route")
        func online() throws {
            let state = try #require(
                Self.evaluate(
                    links: Self.links, addresses: Self.address(2) + Self.address(3, scope: 253) + Self.done(2),
                    routes: Self.defaultRoute(Self.outputInterface(2)) + Self.done(3)))
            #expect(state.online == 1 && state.usable_interfaces == 1 && state.default_route == 1)

            let linkLocalOnly = try #require(
                Self.evaluate(
                    links: Self.links, addresses: Self.address(3, scope: 253) + Self.done(2),
                    routes: Self.defaultRoute(Self.outputInterface(3)) + Self.done(3)))
            #expect(linkLocalOnly.online == 0 && linkLocalOnly.usable_interfaces == 0)

            let loopbackOnly = try #require(
                Self.evaluate(
                    links: Self.links, addresses: Self.address(1) + Self.done(2),
                    routes: Self.defaultRoute(Self.outputInterface(1)) + Self.done(3)))
            #expect(loopbackOnly.online == 0)
        }

        @Test("a default route over several next hops (ECMP) counts for each hop's interface")
        func multipath() throws {
            let hops = [UInt8](Self.bytes(UInt16(8)) + [0, 0] + Self.bytes(Int32(3)))
            let attribute = Self.bytes(UInt16(4 + hops.count)) + Self.bytes(UInt16(9)) + hops
            let state = try #require(
                Self.evaluate(
                    links: Self.links, addresses: Self.address(3) + Self.done(2),
                    // The hops end where the answer ends: the reader must not look for one more.
                    routes: Self.defaultRoute(attribute)))
            #expect(state.online == 1)
        }

        @Test("an error message fails the read; a message cut short is not read past its end")
        func malformed() {
            #expect(
                Self.evaluate(links: Self.message(type: 2, sequence: 1, [0, 0, 0, 0]), addresses: [], routes: []) == nil
            )
            // A message that claims more bytes than there are is skipped, not read.
            var cut = Self.link(2)
            cut[0] = 200
            let state = Self.evaluate(
                links: cut, addresses: Self.address(2), routes: Self.defaultRoute(Self.outputInterface(2)))
            #expect(state?.online == 0)
        }
    }
#endif
