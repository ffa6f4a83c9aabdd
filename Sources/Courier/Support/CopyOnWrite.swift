/// A value kept on the heap and copied only when a shared copy is changed, so that the type
/// holding it is one reference wide.
///
/// The request path's values (``HTTPRequest``, ``HTTPResponse``, ``NetworkError``) are copied
/// into the frame of every `async` call they cross, and a request waiting in flight holds a
/// dozen such frames: kept inline they made each waiting request cost tens of kilobytes.
struct CopyOnWrite<Value: Sendable>: Sendable {
    /// Changed only while one `CopyOnWrite` holds it (checked by `isKnownUniquelyReferenced`
    /// before every change), so no two threads ever see it change.
    private final class Storage: @unchecked Sendable {
        /// Not checked for overlapping access at run time: it is changed only through
        /// ``CopyOnWrite/value`` when unique, and each checked access would take room in the
        /// frame of the `async` function making it.
        @exclusivity(unchecked) var value: Value
        init(_ value: Value) { self.value = value }

        /// A copy. Not inlined: inlined, the copied value would take room in the frame of
        /// every `async` function that changes one of these types.
        @inline(never)
        func copy() -> Storage { Storage(value) }
    }

    private var storage: Storage

    init(_ value: Value) { storage = Storage(value) }

    /// A mirror of `subject`, the type keeping its stored properties here, with those properties
    /// as its children: `print` and `dump` show them as they did when they were inline.
    func mirror(of subject: Any) -> Mirror {
        Mirror(subject, children: Mirror(reflecting: value).children, displayStyle: .struct)
    }

    /// The value; changing it copies it first when another copy shares it.
    var value: Value {
        _read { yield storage.value }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            yield &storage.value
        }
    }
}
