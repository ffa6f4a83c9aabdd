import Foundation

extension HTTPRequest {
    /// What added parameters do with parameters of the same name already there.
    enum ParameterMerge {
        /// The request's own value wins; the added one is dropped (common parameters).
        case keepExisting
        /// The added value replaces every earlier one (token, signature, timestamp).
        case replaceExisting
    }

    /// Adds parameters where this request's own parameters go, the one placement rule every
    /// interceptor shares:
    /// - the query for methods that carry parameters there (`GET`, `HEAD`, `DELETE`) and for
    ///   JSON, raw or file bodies;
    /// - otherwise the form (a request without a body gets one) or a multipart form's text
    ///   fields.
    /// - Parameters:
    ///   - parameters: The parameters to add.
    ///   - merge: What happens to existing parameters of the same names.
    mutating func addParameters(_ parameters: Parameters, merge: ParameterMerge) {
        guard !parameters.isEmpty else { return }
        let inQuery = method.carriesParametersInQuery
        switch body {
        case .none where !inQuery:
            let kept = merge == .keepExisting ? parameters.items.filter { query[$0.name] == nil } : parameters.items
            body = .form(Parameters(kept))
        case .form(let form) where !inQuery:
            body = .form(form.merging(parameters, merge))
        case .multipart(var form) where !inQuery:
            form.fields = form.fields.merging(parameters, merge)
            body = .multipart(form)
        default:
            query = query.merging(parameters, merge)
        }
    }

    /// Like ``addParameters(_:merge:)``, but a JSON object body of a method that carries
    /// parameters in its body takes them as string members (never used after signing).
    /// - Throws: ``NetworkError/Code/invalidRequest`` when that JSON body is not an object.
    mutating func addParametersIncludingJSON(_ parameters: Parameters, merge: ParameterMerge) throws(NetworkError) {
        guard case .json(let data) = body, !method.carriesParametersInQuery, !parameters.isEmpty else {
            return addParameters(parameters, merge: merge)
        }
        body = .json(try Self.merging(parameters, merge, into: data))
    }

    /// Adds parameters as string members of a top-level JSON object, in its text: the caller's
    /// own members stay byte for byte as written.
    private static func merging(_ parameters: Parameters, _ merge: ParameterMerge, into json: Data)
        throws(NetworkError) -> Data
    {
        var object = try JSONObjectText(json)
        for item in parameters.items where merge == .replaceExisting || !object.contains(item.name) {
            object.set(item.name, to: item.value)
        }
        return object.data
    }
}

extension Parameters {
    /// These parameters with `added` merged in: appended after those of other names, and either
    /// dropped or replacing earlier ones where a name is already here.
    fileprivate func merging(_ added: Parameters, _ merge: HTTPRequest.ParameterMerge) -> Parameters {
        // One new list, sized once (signing merges its timestamp and nonce into every request).
        var items: [Item] = []
        items.reserveCapacity(self.items.count + added.items.count)
        switch merge {
        case .keepExisting:
            items += self.items
            for item in added.items where self[item.name] == nil { items.append(item) }
        case .replaceExisting:
            for item in self.items where added[item.name] == nil { items.append(item) }
            items += added.items
        }
        return Parameters(items)
    }
}
