import Foundation

#if os(Linux)
    import CNetlink
    import Courier

    extension FuzzTarget {
        static let platformTargets: [FuzzTarget] = [
            FuzzTarget(
                name: "header-line",
                summary:
                    "CurlTransport's status and header line reader: codes of 3 digits, names without colons, values trimmed",
                check: headerLine),
            FuzzTarget(
                name: "netlink",
                summary:
                    "the reachability monitor's netlink reader (C) on any three dump answers: no overrun, a consistent state",
                check: netlink),
        ]

        private static func headerLine(_ input: UnsafeRawBufferPointer) {
            let line = CurlHeaderLine(input)
            if let code = line.statusCode {
                require((0...999).contains(code), "status \(code)")
                require(line.httpVersion != nil, "a status without a version")
            }
            if let (name, value) = line.field {
                require(!name.isEmpty && !name.utf8.contains(UInt8(ascii: ":")), "field name \(name.debugDescription)")
                let blanks: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]
                require(
                    !(value.utf8.first.map(blanks.contains) ?? false)
                        && !(value.utf8.last.map(blanks.contains) ?? false),
                    "untrimmed value \(value.debugDescription)")
            }
        }

        /// The input's first two bytes give the lengths of the link and address dumps in 4-byte units;
        /// the route dump is the rest.
        private static func netlink(_ input: UnsafeRawBufferPointer) {
            guard input.count >= 2 else { return }
            let rest = UnsafeRawBufferPointer(rebasing: input[2...])
            let linksEnd = min(rest.count, Int(input[0]) * 4)
            let addressesEnd = min(rest.count, linksEnd + Int(input[1]) * 4)
            var state = courier_net_state()
            let status = courier_netlink_evaluate(
                rest.baseAddress, linksEnd, rest.baseAddress.map { $0 + linksEnd }, addressesEnd - linksEnd,
                rest.baseAddress.map { $0 + addressesEnd }, rest.count - addressesEnd, &state)
            guard status == 0 else { return }
            require(state.usable_interfaces >= 0, "\(state.usable_interfaces) usable interfaces")
            require(
                state.online == 0 || (state.usable_interfaces > 0 && state.default_route == 1),
                "online without a usable interface and a default route: \(state)")
        }
    }
#else
    extension FuzzTarget {
        static let platformTargets: [FuzzTarget] = []
    }
#endif
