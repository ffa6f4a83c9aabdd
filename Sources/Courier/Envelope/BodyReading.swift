import Foundation

/// What the client read of an answer's body with one decoder, kept with the answer so that it
/// reads the body once: the ``EnvelopeView`` its layers and checks share, and an envelope a layer
/// had decoded for the endpoint ahead of the endpoint's decoding, which that decoding takes.
///
/// An answer's copies share it until one of them changes its body (which starts a reading of
/// its own).
struct BodyReading: Sendable {
    /// The decoder that read; another decoder reads for itself.
    let decoder: JSONDecoder
    /// The view, once read or taken from a decoded envelope.
    var view: EnvelopeView?
    /// The envelope decoded ahead: the `BaseModel` type it was decoded as, and the outcome.
    var ahead: (type: ObjectIdentifier, outcome: Result<any Sendable, NetworkError>)?
}

extension HTTPResponse {
    /// The envelope view of the body as `decoder` reads it: read the first time it is asked for
    /// (or taken from the envelope the endpoint's decoding decoded), then kept with the answer.
    /// With `whole`, a view taken from a decoded envelope is read again for the fields it lacks
    /// (an error body's, the clock's number).
    package func envelope(_ decoder: JSONDecoder, whole: Bool = false) -> EnvelopeView {
        if let view = envelopeIfRead(decoder), view.isWhole || !whole { return view }
        let view = EnvelopeView.read(body, with: decoder)
        bodyReading.withLock { reading in
            if reading?.decoder !== decoder { reading = BodyReading(decoder: decoder) }
            reading?.view = view
        }
        return view
    }

    /// The envelope view as `decoder` read it already, or `nil` when nobody asked yet.
    func envelopeIfRead(_ decoder: JSONDecoder) -> EnvelopeView? {
        bodyReading.withLock { reading in reading?.decoder === decoder ? reading?.view : nil }
    }

    /// The body as an envelope of `T`, decoded by `decode` (with `decoder`), or as a layer had it
    /// decoded already (see ``decodeAhead(_:by:decode:)``). With `keepingView` (`decoder` is the
    /// client's), its code and message are kept for the answer's later readers (the timeline,
    /// ``Reply/message``).
    func envelope<T>(
        _ type: BaseModel<T>.Type, by decoder: JSONDecoder, keepingView: Bool,
        decode: () throws(NetworkError) -> BaseModel<T>
    ) throws(NetworkError) -> BaseModel<T> {
        let taken: Result<BaseModel<T>, NetworkError>? = bodyReading.withLock { reading in
            guard reading?.decoder === decoder, let ahead = reading?.ahead, ahead.type == ObjectIdentifier(type)
            else { return nil }
            reading?.ahead = nil
            switch ahead.outcome {
            case .success(let envelope as BaseModel<T>): return .success(envelope)
            case .failure(let error): return .failure(error)
            case .success: return nil
            }
        }
        if let taken { return try taken.get() }
        let envelope = try decode()
        guard keepingView, body.count <= EnvelopeView.largestBody else { return envelope }
        bodyReading.withLock { reading in
            // Another decoder's reading is left as it is.
            if reading == nil { reading = BodyReading(decoder: decoder) }
            if reading?.decoder === decoder, reading?.view == nil {
                reading?.view = EnvelopeView(envelope, decodedBy: decoder)
            }
        }
        return envelope
    }

    /// Decodes the body as an envelope of `T` with `decode` (with `decoder`) before the endpoint's
    /// decoding asks, for a layer that needs its code: the view is taken from it, and the
    /// decoding takes the envelope (``envelope(_:by:keepingView:decode:)``), so the body is read
    /// once for both. Nothing is done when the body is empty or larger than a view reads
    /// (``EnvelopeView/largestBody``), or was read by `decoder` already.
    func decodeAhead<T>(
        _ type: BaseModel<T>.Type, by decoder: JSONDecoder, decode: () throws(NetworkError) -> BaseModel<T>
    ) {
        guard !body.isEmpty, body.count <= EnvelopeView.largestBody,
            bodyReading.withLock({ $0 == nil || ($0?.decoder === decoder && $0?.view == nil && $0?.ahead == nil) })
        else { return }
        let outcome: Result<BaseModel<T>, NetworkError>
        do throws(NetworkError) {
            outcome = .success(try decode())
        } catch {
            outcome = .failure(error)
        }
        bodyReading.withLock { reading in
            if reading == nil { reading = BodyReading(decoder: decoder) }
            guard reading?.decoder === decoder, reading?.ahead == nil else { return }
            reading?.ahead = (ObjectIdentifier(type), outcome.map { $0 })
            if case .success(let envelope) = outcome, reading?.view == nil {
                reading?.view = EnvelopeView(envelope, decodedBy: decoder)
            }
        }
    }

    /// Drops an envelope decoded ahead that no decoding took (its caller left, or wanted
    /// another type).
    func forgetDecodedAhead() {
        bodyReading.withLock { $0?.ahead = nil }
    }
}
