/// The values a reader decoded from a piece and has not handed out yet, first in, first out,
/// without moving the rest each time one goes.
struct ReadyQueue<Element> {
    private var elements: [Element] = []
    private var head = 0

    /// Adds a value at the end.
    mutating func append(_ element: Element) { elements.append(element) }

    /// The first value, removed; `nil` when none is left (the storage is then emptied).
    mutating func next() -> Element? {
        guard head < elements.count else {
            removeAll()
            return nil
        }
        defer { head += 1 }
        return elements[head]
    }

    /// Drops every value.
    mutating func removeAll() {
        elements.removeAll(keepingCapacity: true)
        head = 0
    }
}
