import Courier
import Foundation

extension FuzzTarget {
    static let pageTargets: [FuzzTarget] = [
        FuzzTarget(
            name: "link-header",
            summary:
                "a Link header gives a next link that is text of the field between < and >, the same when the field is read twice",
            check: linkHeader)
    ]

    private static func linkHeader(_ input: UnsafeRawBufferPointer) {
        let field = String(decoding: input, as: UTF8.self)
        let target = LinkHeader.target(ofRelation: "next", in: [field])
        require(
            LinkHeader.target(ofRelation: "next", in: [field, field]) == target,
            "a field read twice gives another link")
        if let target {
            let trimmed = target.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            require(trimmed == target, "the link keeps spaces around it")
            require(
                target.isEmpty || Data(field.utf8).range(of: Data(target.utf8)) != nil,
                "the link is not bytes of the field")
            require(!target.contains(">"), "the link runs past its closing >")
        }
    }
}
