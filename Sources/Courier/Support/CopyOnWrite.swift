/// A value kept on the heap and copied only when a shared copy is changed, so that the type
/// holding it is one reference wide.
///
/// The request path's values (``HTTPRequest``, ``HTTPResponse``, ``NetworkError``) are copied
/// into the frame of every `async` call they cross, and a request waiting in flight holds a
/// dozen such frames: kept inline they made each waiting request cost tens of kilobytes.
struct CopyOnWrite<Value: Sendable>: Sendable {
    /// The value, behind a pointer the box never changes, so it is changed in place without a
    /// copy in the caller's frame. `@unchecked Sendable`: the value is changed only while one
    /// `CopyOnWrite` holds the box (checked by `isKnownUniquelyReferenced` before every
    /// change). A box handed from one thread to another goes with a synchronisation of the
    /// holder's (a transport's answer: its transfer's lock, taken by the caller after its
    /// `await`).
    private final class Storage: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<Value>

        init(_ value: Value) {
            pointer = .allocate(capacity: 1)
            pointer.initialize(to: value)
        }

        deinit {
            pointer.deinitialize(count: 1)
            pointer.deallocate()
        }

        /// A copy. Not inlined: inlined, the copied value would take room in the frame of
        /// every `async` function that changes one of these types.
        @inline(never)
        func copy() -> Storage { Storage(pointer.pointee) }
    }

    private var storage: Storage

    init(_ value: Value) { storage = Storage(value) }

    /// A mirror of `subject`, the type keeping its stored properties here, with those properties
    /// as its children (but those named in `hidden`, which are the type's own bookkeeping):
    /// `print` and `dump` show them as they did when they were inline.
    func mirror(of subject: Any, hiding hidden: Set<String> = []) -> Mirror {
        let children = Mirror(reflecting: value).children.filter { !hidden.contains($0.label ?? "") }
        return Mirror(subject, children: children, displayStyle: .struct)
    }

    /// The value; changing it copies it first when another copy shares it.
    var value: Value {
        _read { yield storage.pointer.pointee }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            yield &storage.pointer.pointee
        }
    }
}
