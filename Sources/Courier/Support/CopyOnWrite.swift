/// A value kept on the heap, so that the type holding it is one reference wide; changing it
/// puts the changed value in a new box, so a copy never sees another copy's change.
///
/// The request path's values (``HTTPRequest``, ``HTTPResponse``, ``NetworkError``) are copied
/// into the frame of every `async` call they cross, and a request waiting in flight holds a
/// dozen such frames: kept inline they made each waiting request cost tens of kilobytes.
///
/// The box is never changed once made: a value built on one thread (an answer on the transport's
/// thread) and read on another shares nothing that changes.
struct CopyOnWrite<Value: Sendable>: Sendable {
    private final class Storage: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    private var storage: Storage

    init(_ value: Value) { storage = Storage(value) }

    /// A mirror of `subject`, the type keeping its stored properties here, with those properties
    /// as its children: `print` and `dump` show them as they did when they were inline.
    func mirror(of subject: Any) -> Mirror {
        Mirror(subject, children: Mirror(reflecting: value).children, displayStyle: .struct)
    }

    /// The value; changing it makes a new box.
    var value: Value {
        _read { yield storage.value }
        _modify {
            var changed = storage.value
            yield &changed
            storage = Storage(changed)
        }
    }
}
