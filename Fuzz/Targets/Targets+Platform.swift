import Foundation

#if os(Linux)
    import CNetlink
    import Courier

    extension FuzzTarget {
        static let platformTargets: [FuzzTarget] = [
            FuzzTarget(
                name: "header-line",
                summary:
                    "CurlTransport's status and header line reader agrees with a plain reading of the line (RFC 9112)",
                check: headerLine),
            FuzzTarget(
                name: "netlink",
                summary: "the reachability monitor's netlink reader (C) reads any three dump answers without overrun",
                check: netlink),
        ]

        /// Compared with the line read the plain way, on its text: a status is `HTTP/` and a
        /// version, a space and three digits, then the end or a space; a field is the text before
        /// the first colon (not empty) and the rest, without spaces, tabs, CR or LF at its ends.
        private static func headerLine(_ input: UnsafeRawBufferPointer) {
            let line = CurlHeaderLine(input)
            let blanks: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]
            var bytes = Array(input)
            while let last = bytes.last, blanks.contains(last) { bytes.removeLast() }
            var status: Int?
            if bytes.starts(with: Array("HTTP/".utf8)), let space = bytes.dropFirst(5).firstIndex(of: 0x20) {
                let digits = bytes[(space + 1)...].prefix(3)
                if digits.count == 3, digits.allSatisfy({ (0x30...0x39).contains($0) }),
                    bytes.count == space + 4 || bytes[space + 4] == 0x20
                {
                    status = Int(String(decoding: digits, as: UTF8.self))
                }
            }
            require(
                line.statusCode == status,
                "status \(String(describing: line.statusCode)), plainly \(String(describing: status))")
            var field: (String, String)?
            if let colon = bytes.firstIndex(of: 0x3A), colon > 0 {
                let value = bytes[(colon + 1)...].drop { blanks.contains($0) }
                field = (String(decoding: bytes[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self))
            }
            require(
                line.field?.0 == field?.0 && line.field?.1 == field?.1,
                "field \(String(describing: line.field)), plainly \(String(describing: field))")
        }

        /// The input's first two bytes give the lengths of the link and address dumps in 4-byte
        /// units; the route dump is the rest. AddressSanitizer catches a read past any of them.
        private static func netlink(_ input: UnsafeRawBufferPointer) {
            guard input.count >= 2 else { return }
            let rest = UnsafeRawBufferPointer(rebasing: input[2...])
            let linksEnd = min(rest.count, Int(input[0]) * 4)
            let addressesEnd = min(rest.count, linksEnd + Int(input[1]) * 4)
            var state = courier_net_state()
            _ = courier_netlink_evaluate(
                rest.baseAddress, linksEnd, rest.baseAddress.map { $0 + linksEnd }, addressesEnd - linksEnd,
                rest.baseAddress.map { $0 + addressesEnd }, rest.count - addressesEnd, &state)
        }
    }
#else
    extension FuzzTarget {
        static let platformTargets: [FuzzTarget] = []
    }
#endif
