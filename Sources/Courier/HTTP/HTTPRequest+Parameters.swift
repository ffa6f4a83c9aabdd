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
        // The body is emptied while its parameters are merged, so that they are merged in place.
        case .form(var form) where !inQuery:
            body = .none
            form.merge(parameters, merge)
            body = .form(form)
        case .multipart(var form) where !inQuery:
            body = .none
            form.fields.merge(parameters, merge)
            body = .multipart(form)
        default:
            query.merge(parameters, merge)
        }
    }

    /// Gives the last parameter named `name` where ``addParameters(_:merge:)`` puts parameters
    /// the value `value` (appending one if there is none): for a value known only once the
    /// others are in place, a signature.
    /// - Parameters:
    ///   - name: The parameter's name.
    ///   - value: Its value.
    mutating func setLastParameter(named name: String, to value: String) {
        let inQuery = method.carriesParametersInQuery
        func set(in list: inout Parameters) {
            if let index = list.items.lastIndex(where: { $0.name == name }) {
                list.items[index].value = value
            } else {
                list.append(name: name, value: value)
            }
        }
        switch body {
        case .form(var form) where !inQuery:
            body = .none
            set(in: &form)
            body = .form(form)
        case .multipart(var form) where !inQuery:
            body = .none
            set(in: &form.fields)
            body = .multipart(form)
        case .none where !inQuery:
            body = .form(Parameters([.init(name: name, value: value)]))
        default:
            set(in: &query)
        }
    }

    /// Adds to the query, whatever the method and body, the parameters the request does not
    /// already have as a parameter: in its query, its form fields or a multipart form's text
    /// fields (which many backends read together with the query). A JSON body's members are
    /// the body's own business, not parameters: a `version` there does not stop one here.
    mutating func addQueryParametersKeepingExisting(_ parameters: Parameters) {
        let fields: Parameters? =
            switch body {
            case .form(let form): form
            case .multipart(let form): form.fields
            default: nil
            }
        let missing = parameters.items.filter { query[$0.name] == nil && fields?[$0.name] == nil }
        query.merge(Parameters(missing), .keepExisting)
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
    /// Merges `added` into these parameters: appended after those of other names, and either
    /// dropped or replacing earlier ones where a name is already here. In place: a list shared
    /// with the caller's request is copied once, when it is first changed.
    fileprivate mutating func merge(_ added: Parameters, _ merge: HTTPRequest.ParameterMerge) {
        switch merge {
        case .keepExisting:
            items += added.items.filter { self[$0.name] == nil }
        case .replaceExisting:
            items.reserveCapacity(items.count + added.items.count)
            items.removeAll { item in added.items.contains { $0.name == item.name } }
            items += added.items
        }
    }
}
